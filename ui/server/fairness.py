"""A fair share of the server for every session: a burst of reruns costs about one rerun.

What Streamlit 1.67 does when one page sends rerun requests faster than it runs (read from its source, version
``STREAMLIT_READ``: ``runtime/app_session.py``, ``runtime/scriptrunner/script_runner.py``,
``runtime/scriptrunner_utils/script_requests.py``, ``web/server/starlette/starlette_websocket.py``): the
websocket handler parses every ``BackMsg`` and hands it to ``AppSession.request_rerun``. With
``runner.fastReruns`` on (the default) every request stops the session's ScriptRunner and starts a new one, a
new thread that applies the widget states, runs the callbacks (ours ask for a body rerun) and starts the page
until its first element, where it sees that it too has been stopped. 400 requests sent back to back cost
4.2 s of server CPU on Compare (a change costs 12 ms), all of it competing with the class for the GIL.

With ``runner.fastReruns`` off a request goes to the running ScriptRunner's ``ScriptRequests``, which folds it
into one pending rerun (the newest widget values, a button press kept), but the script is still interrupted at
its next element and restarted: a flood keeps one thread restarting for as long as it lasts. So three methods of
``ScriptRequests`` are wrapped (:func:`install`), and ``fastReruns`` is turned off (``.streamlit/config.toml``,
and :func:`install` if a config turned it on again):

- ``_request_rerun_locked``: notes who asked. A request from the script itself (``st.rerun``, a callback's
  ``st.rerun("body")``, ``st.switch_page``) keeps Streamlit's behaviour; a request from the browser is noted with
  its arrival time.
- ``on_scriptrunner_yield``: a browser's request does not interrupt a run younger than ``PREEMPT_AFTER``; it
  waits, folded with the ones after it, until the run ends (a slow page can still be left after a second). A run
  restarted here (by those requests, or by the script's own rerun that they were folded into) never reaches
  ``on_scriptrunner_ready``: when its requests are a flood, it is counted as paced and shows the notice.
- ``on_scriptrunner_ready`` (between two runs): a session that sent more than ``FLOOD_REQUESTS`` requests in the
  last ``WINDOW`` seconds, and whose run is about to start with requests that piled up during the last one,
  waits until ``PACE`` seconds after its last run started. The wait is a sleep on the session's own script
  thread (no CPU, no GIL), and every request arriving meanwhile is folded into the run that follows, so the page
  ends showing the last value sent. A paced run shows a notice (:func:`notice`).
- Also there: a run whose request arrived during the session's last run, or within ``CACHE_GRACE`` seconds of
  its end, is sent without references to the browser's message cache. The browser lists what it has cached when
  it sends a request and evicts old entries whenever a run finishes; a run that finished after the request was
  sent made some of the listed messages stale (Chromium closed the websocket with "Cached ForwardMsg MISS" when
  an arrow key was pressed 60 times on Compare). Such a run costs bytes, not CPU. (With fastReruns on, the
  stopped run never reports finishing, so the browser never evicts in between.)

A student who changes a setting every few seconds, or clicks twice quickly, never waits. AppTest gives every run
of every test one session id, and each of its runs is two requests: the test harness forgets that session's record
before each run (:func:`forget`, ``harness/apptest.py``), or four AppTests in two seconds would be paced like a
flooding student. ``tests/test_fairness.py`` pins the wrapped signatures.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

import streamlit as st
from streamlit import config
from streamlit.runtime.scriptrunner_utils import script_requests
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequest, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

STREAMLIT_READ = "1.67.0"  # the Streamlit whose source this module was written against
PREEMPT_AFTER = 1.0  # seconds: a browser's request interrupts a run only once it has gone on this long
WINDOW = 2.0  # seconds over which a session's requests are counted
FLOOD_REQUESTS = 6  # more requests than this in WINDOW, piling up during a run, make a session wait
PACE = 1.0  # seconds between the starts of a waiting session's runs
AUTO_WEIGHT = 0.2  # a fragment's timed rerun (run_every, the Train page's 0.3 s) counts as this much of a request
NOTICE_EVERY = 10.0  # seconds: at most one notice per session in this time
FORGET_AFTER = 600.0  # seconds: a session's record is dropped after this long without requests
CACHE_GRACE = 1.0  # seconds: a request that arrived within this time of the end of a run may list stale cache
# a run the browser interrupts (after PREEMPT_AFTER) has had its PACE: its restart does not wait (_on_scriptrunner_yield)
assert PREEMPT_AFTER >= PACE, "a flood interrupting a run younger than PACE would need to wait in on_scriptrunner_yield"

# what the wrapped methods of ScriptRequests look like in STREAMLIT_READ (tests/test_fairness.py compares)
SIGNATURES = {
    "_request_rerun_locked": "(self, new_data: 'RerunData') -> 'bool'",
    "on_scriptrunner_yield": "(self) -> 'ScriptRequest | None'",
    "on_scriptrunner_ready": "(self) -> 'ScriptRequest'",
}


@dataclass
class Pace:
    """One session's recent requests and runs (times from ``time.monotonic``)."""

    arrivals: deque = field(default_factory=deque)  # (time, weight) of the requests of the last WINDOW seconds
    last_start: float = float("-inf")  # when its last run started
    last_end: float = float("-inf")  # when its last run ended
    last_notice: float = float("-inf")  # when it was last shown a notice
    held: bool = False  # the run now starting was paced (it waited for its turn, or its turn had come)
    seen: float = 0.0  # when it last asked for anything
    flooding: bool = False  # its requests pile up behind its runs faster than FLOOD_REQUESTS in WINDOW

    def wait(self, arrived: list[tuple[float, float]], now: float) -> float:
        """Note the requests that ``arrived`` since the last call; seconds the run about to start must wait."""
        self.arrivals.extend(arrived)
        self.seen = now
        while self.arrivals and self.arrivals[0][0] < now - WINDOW:
            self.arrivals.popleft()
        piled_up = sum(1 for t, _ in self.arrivals if t > self.last_start) >= 2
        self.flooding = piled_up and self.requests() > FLOOD_REQUESTS
        return max(0.0, self.last_start + PACE - now) if self.flooding else 0.0

    def note(self, arrived: list[tuple[float, float]]) -> None:
        """Requests that arrived while the run waited."""
        self.arrivals.extend(arrived)

    def requests(self) -> float:
        """The requests of the last WINDOW seconds (timed reruns count AUTO_WEIGHT each)."""
        return sum(w for _, w in self.arrivals)

    def span(self) -> float:
        """Seconds from the first to the last of those requests."""
        return self.arrivals[-1][0] - self.arrivals[0][0] if self.arrivals else 0.0

    def started(self, now: float, held: bool) -> None:
        self.last_start, self.held = now, held


_paces: dict[str, Pace] = {}
_paces_lock = threading.Lock()


def pace_of(session_id: str, now: float) -> Pace:
    """The record of session ``session_id`` (records idle for FORGET_AFTER seconds are dropped)."""
    with _paces_lock:
        pace = _paces.get(session_id)
        if pace is None:
            for sid in [s for s, p in _paces.items() if now - p.seen > FORGET_AFTER]:
                del _paces[sid]
            pace = _paces[session_id] = Pace(seen=now)
        return pace


def forget(session_id: str) -> None:
    """Drop the record of session ``session_id``: its next run starts as a new session's first."""
    with _paces_lock:
        _paces.pop(session_id, None)


def notice_text(requests: float, seconds: float, pace: float = PACE) -> str:
    """What a session that had to wait is told: how many requests it sent in how long, and what happens now."""
    n = int(round(requests))
    took = "under 0.1 seconds" if seconds < 0.1 else f"{seconds:.1f} seconds"
    every = "once a second" if pace == 1 else f"once every {pace:g} seconds"
    return (
        f"Slow down a little: this page sent {n:,} changes in {took}, more than the server redraws for one "
        f"student. It now redraws at most {every} and always shows your latest setting, so that the other "
        "students' pages stay fast."
    )


def notice() -> None:
    """Called by every page run (ui.skeleton.page.Page, ui.session.partial.body): a toast when this run was paced (its
    session floods), at most one per NOTICE_EVERY seconds."""
    ctx = get_script_run_ctx(suppress_warning=True)
    pace = _paces.get(ctx.session_id) if ctx is not None else None
    if pace is None or not pace.held or pace.last_start - pace.last_notice < NOTICE_EVERY:
        return
    pace.last_notice = pace.last_start
    st.toast(notice_text(pace.requests(), pace.span()), icon=":material/hourglass_top:", duration="long")


# ---- the wrapped methods of streamlit's ScriptRequests (see the module docstring)


def _request_rerun_locked(original, self, new_data: RerunData) -> bool:
    accepted = original(self, new_data)
    if accepted:  # the caller holds self._lock
        if get_script_run_ctx(suppress_warning=True) is not None:
            self._aexp_internal = True  # st.rerun, a callback's rerun, st.switch_page: Streamlit's own rules
        else:
            weight = AUTO_WEIGHT if new_data.is_auto_rerun else 1.0
            self.__dict__.setdefault("_aexp_arrived", []).append((time.monotonic(), weight))
    return accepted


def _on_scriptrunner_yield(original, self) -> ScriptRequest | None:
    if (
        self._state is ScriptRequestType.RERUN
        and not getattr(self, "_aexp_internal", False)
        and time.monotonic() - getattr(self, "_aexp_run_start", float("-inf")) < PREEMPT_AFTER
    ):
        return None  # a browser's request waits for this run's end (folded with the ones after it)
    internal = getattr(self, "_aexp_internal", False)
    request = original(self)
    if request is not None and request.type is ScriptRequestType.RERUN:
        now = time.monotonic()
        self._aexp_internal, self._aexp_run_start = False, now
        ctx = get_script_run_ctx(suppress_warning=True)
        arrived = _arrived(self) if ctx is not None else []
        if arrived:
            # the run restarts here, never reaching on_scriptrunner_ready, with the browser's requests folded in:
            # they interrupted a run PREEMPT_AFTER (>= PACE) old (a slow run under load), or they were folded into
            # the script's own rerun (a leaf control's body rerun; CI: 400 requests so folded said nothing). It does
            # not wait (it has had its turn, or the script asked for it), but a flood is counted and told
            pace = pace_of(ctx.session_id, now)
            pace.wait(arrived, now)
            pace.started(now, pace.flooding or (internal and pace.held))
    return request


def _arrived(self) -> list[tuple[float, float]]:
    """The browser's requests noted since the last call: (time, weight) each."""
    with self._lock:
        arrived, self._aexp_arrived = getattr(self, "_aexp_arrived", []), []
    return arrived


def _on_scriptrunner_ready(original, self) -> ScriptRequest:
    ctx = get_script_run_ctx(suppress_warning=True)
    pace, held, newest = None, False, float("-inf")
    if ctx is not None:
        now = time.monotonic()
        pace = pace_of(ctx.session_id, now)
        if hasattr(self, "_aexp_run_start"):
            pace.last_end = now  # a run of this session has just ended
        if self._state is ScriptRequestType.RERUN:
            arrived = _arrived(self)
            until = now + pace.wait(arrived, now)
            held = pace.flooding
            while time.monotonic() < until and self._state is not ScriptRequestType.STOP:
                # requests arriving meanwhile fold into this run; the clock moves between the test and the sleep
                time.sleep(max(0.0, min(0.05, until - time.monotonic())))
            if held:
                late = _arrived(self)
                pace.note(late)
                arrived += late
            newest = max((t for t, _ in arrived), default=newest)
    request = original(self)
    if request.type is ScriptRequestType.RERUN:
        now = time.monotonic()
        self._aexp_internal, self._aexp_run_start = False, now
        if pace is not None:
            # requests the event loop handed over after the look above (a thread switch between the look and
            # `original`) are in this run: count them, and say so if they are a flood (the run starts now with all
            # of them, so it does not wait)
            late = _arrived(self)
            if late:
                pace.wait(late, now)
                held = held or pace.flooding
                newest = max(newest, max(t for t, _ in late))
            pace.started(now, held)
            if newest < pace.last_end + CACHE_GRACE:  # the browser may have evicted what its request listed
                data = replace(request.rerun_data, cached_message_hashes=frozenset())
                request = ScriptRequest(ScriptRequestType.RERUN, data)
    return request


WRAPPERS = {
    "_request_rerun_locked": _request_rerun_locked,
    "on_scriptrunner_yield": _on_scriptrunner_yield,
    "on_scriptrunner_ready": _on_scriptrunner_ready,
}


def _wrap(name: str, wrapper):
    original = getattr(script_requests.ScriptRequests, name)

    @functools.wraps(original)
    def wrapped(self, *args):
        return wrapper(original, self, *args)

    wrapped.__aexp_original__ = original
    return wrapped


_install_lock = threading.Lock()


def installed() -> bool:
    return all(hasattr(getattr(script_requests.ScriptRequests, n), "__aexp_original__") for n in WRAPPERS)


def install() -> None:
    """Wrap ScriptRequests' methods (once per process) and turn ``runner.fastReruns`` off."""
    with _install_lock:
        if not installed():
            for name, wrapper in WRAPPERS.items():
                setattr(script_requests.ScriptRequests, name, _wrap(name, wrapper))
        if config.get_option("runner.fastReruns"):
            config.set_option("runner.fastReruns", False, "ui/server/fairness.py")


def original_signatures() -> dict[str, str]:
    """The signatures of the methods as Streamlit defines them (for tests/test_fairness.py)."""
    cls = script_requests.ScriptRequests
    return {n: str(inspect.signature(getattr(getattr(cls, n), "__aexp_original__", getattr(cls, n)))) for n in WRAPPERS}
