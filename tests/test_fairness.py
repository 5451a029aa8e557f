"""ui/server/fairness.py: a browser's burst of reruns is folded into few runs and a flooding session waits its turn.

The wrapped Streamlit methods are pinned here (a new Streamlit that changes them fails these tests first), the
pacing rule is checked with made-up clocks, and ScriptRequests is driven as Streamlit's script thread and event
loop drive it. The flood against a real server, beside a small class, is in tests/test_protocol.py (it shares
that module's server).
"""

from __future__ import annotations

import threading
import types

import pytest
import streamlit
from streamlit import config
from streamlit.runtime.scriptrunner_utils import script_requests
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests, ScriptRequestType

from ui.server import fairness
from ui.server.fairness import AUTO_WEIGHT, FLOOD_REQUESTS, PACE, PREEMPT_AFTER, Pace, notice_text

fairness.install()  # as the first page run of a server process does (ui/skeleton/page.py)


def test_the_wrapped_streamlit_methods_are_those_the_module_was_written_against():
    """If this fails, Streamlit changed what ui/server/fairness.py wraps: read the new script_requests.py and
    script_runner.py, adapt the wrappers, then update SIGNATURES and STREAMLIT_READ."""
    assert fairness.original_signatures() == fairness.SIGNATURES, (streamlit.__version__, fairness.STREAMLIT_READ)
    r = ScriptRequests()
    assert r._state is ScriptRequestType.CONTINUE and isinstance(r._lock, type(threading.Lock()))
    assert {t.name for t in ScriptRequestType} == {"CONTINUE", "STOP", "RERUN"}
    assert "is_auto_rerun" in RerunData.__dataclass_fields__
    assert fairness.installed() and config.get_option("runner.fastReruns") is False
    fairness.install()  # a second install wraps nothing twice
    wrapped = script_requests.ScriptRequests.on_scriptrunner_yield
    assert not hasattr(wrapped.__aexp_original__, "__aexp_original__")


_INSTALL_PROBE = """
import json, os, pkgutil, sys
sys.path.insert(0, os.getcwd())
from streamlit import config
from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests
NAMES = ("_request_rerun_locked", "on_scriptrunner_yield", "on_scriptrunner_ready")
SESSION_MSG = ("_populate_config_msg", "_populate_theme_msg")  # ui/server/session_msg.py
config.get_option("runner.fastReruns")  # the config files are read
config.set_option("runner.fastReruns", True, "probe")  # so that install's config change shows too
def state():
    wrapped = [id(ScriptRequests.__dict__[n]) for n in NAMES] + [id(getattr(app_session, n)) for n in SESSION_MSG]
    return wrapped + [id(config._set_option)], config.get_option("runner.fastReruns")
before = state()
import ui
for m in pkgutil.walk_packages(ui.__path__, "ui."):  # every ui module, in whatever folders it lives
    __import__(m.name)
imported = state()
from tests.apptest_util import app, run_ok
run_ok(app(sys.argv[1]))
from ui.server import fairness
print(json.dumps({"before": before, "imported": imported, "ran": state(), "installed": fairness.installed()}))
"""


@pytest.mark.parametrize("path", ["streamlit_app.py", "pages/Soft_lookup.py"])
def test_importing_ui_patches_nothing_and_the_first_page_run_installs(path):
    """A fresh interpreter: importing every ui module (a tool that only rewrites the README) leaves Streamlit's
    ScriptRequests, its new_session message's builders (ui/server/session_msg.py) and runner.fastReruns as they were; the first run of the app's entry, or of a page opened by its
    link (Streamlit runs that page alone, not streamlit_app.py), installs the wrappers."""
    import json
    import subprocess
    import sys

    from tests.apptest_util import ROOT

    out = subprocess.run(
        [sys.executable, "-c", _INSTALL_PROBE, path], cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["before"][1] is True, "the probe's config did not turn fastReruns on"
    assert got["imported"] == got["before"], "importing ui changed Streamlit's request handling"
    assert got["installed"] and got["ran"][1] is False, f"the first run of {path} did not install ui.server.fairness"
    assert all(a != b for a, b in zip(got["ran"][0], got["before"][0], strict=True))


# ---- the pacing rule, with made-up clocks


def arrivals(times, weight=1.0):
    return [(t, weight) for t in times]


def test_a_student_who_changes_every_second_or_clicks_twice_never_waits():
    p = Pace()
    for i in range(20):  # a change a second, each arriving while nothing runs
        assert p.wait(arrivals([float(i)]), i + 0.001) == 0.0
        p.started(i + 0.001, held=False)
    p = Pace()
    assert p.wait(arrivals([0.0]), 0.0) == 0.0
    p.started(0.0, False)
    assert p.wait(arrivals([0.01, 0.02]), 0.05) == 0.0  # a double click that piled up behind one run


def test_runs_that_follow_one_another_never_wait_however_fast():
    """AppTest, or a student whose every change arrives after the last run started: nothing piles up."""
    p = Pace()
    for i in range(50):
        t = i * 0.01
        assert p.wait(arrivals([t]), t) == 0.0
        p.started(t, False)


def test_a_flood_that_piles_up_waits_until_pace_seconds_after_the_last_start():
    p = Pace()
    assert p.wait(arrivals([0.0]), 0.0) == 0.0  # the first request runs at once
    p.started(0.0, False)
    flood = arrivals([0.001 * i for i in range(1, 400)])
    assert p.wait(flood, 0.05) == pytest.approx(PACE - 0.05)
    assert p.requests() == 400 and p.span() == pytest.approx(0.399)
    p.started(PACE, held=True)
    assert p.held
    # FLOOD_REQUESTS in the window is allowed; one more is a flood
    p = Pace()
    p.started(0.0, False)
    assert p.wait(arrivals([0.01 * i for i in range(1, FLOOD_REQUESTS + 1)]), 0.1) == 0.0
    assert p.wait(arrivals([0.11]), 0.12) > 0


def test_timed_fragment_reruns_count_a_fraction_and_old_requests_are_forgotten():
    p = Pace()
    t = 0.0
    for _ in range(30):  # the Train page's run_every=0.3, two piling up now and then
        p.wait(arrivals([t, t + 0.01], AUTO_WEIGHT), t + 0.02)
        assert p.wait([], t + 0.02) == 0.0
        p.started(t + 0.02, False)
        t += 0.3
    p = Pace()
    p.wait(arrivals([0.001 * i for i in range(100)]), 0.1)
    assert p.wait([], 100.0) == 0.0 and p.requests() == 0  # minutes later the flood is forgotten


@pytest.mark.parametrize(
    "requests, seconds, pace, says",
    [
        (7, 0.05, 1.0, "sent 7 changes in under 0.1 seconds"),
        (400, 0.43, 1.0, "sent 400 changes in 0.4 seconds"),
        (12345.4, 2.0, 1.0, "sent 12,345 changes in 2.0 seconds"),
        (9, 1.5, 2.5, "at most once every 2.5 seconds"),
        (9, 1.5, 1.0, "at most once a second"),
    ],
)
def test_the_notice_states_what_the_session_sent(requests, seconds, pace, says):
    text = notice_text(requests, seconds, pace)
    assert says in text and "latest setting" in text


# ---- ScriptRequests driven as Streamlit drives it


@pytest.fixture
def script_thread(monkeypatch):
    """Make this thread look like a session's script thread to the wrappers (a ctx with a session id) or like the
    event loop (no ctx), and give the session a fresh record."""
    state = {"ctx": None}
    monkeypatch.setattr(fairness, "get_script_run_ctx", lambda suppress_warning=False: state["ctx"])
    monkeypatch.setattr(fairness, "_paces", {})

    def as_script(yes: bool) -> None:
        state["ctx"] = types.SimpleNamespace(session_id="s1") if yes else None

    return as_script


def rerun(value: str, **kw) -> RerunData:
    return RerunData(query_string=f"v={value}", **kw)


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic as fairness.py sees it, moved by hand: ``clock["t"] += seconds``."""
    now = {"t": 1000.0}
    monkeypatch.setattr(fairness.time, "monotonic", lambda: now["t"])
    return now


def browser_asks(r: ScriptRequests, script_thread, *values: str, every: float = 0.0, clock=None) -> None:
    """The event loop hands the browser's requests for ``values`` to ``r`` (``every`` seconds apart on ``clock``),
    then the script thread goes on."""
    script_thread(False)
    for v in values:
        if clock is not None:
            clock["t"] += every
        r.request_rerun(rerun(v))
    script_thread(True)


def running(script_thread, value: str) -> ScriptRequests:
    """A session's script thread whose run for ``value`` has started."""
    r = ScriptRequests()
    browser_asks(r, script_thread, value)
    r.on_scriptrunner_ready()
    return r


def test_a_browsers_request_waits_for_the_runs_end_and_the_last_one_wins(script_thread, monkeypatch):
    r = ScriptRequests()
    script_thread(False)
    assert r.request_rerun(rerun("1"))  # the event loop asks; the script thread starts
    script_thread(True)
    first = r.on_scriptrunner_ready()
    assert first.type is ScriptRequestType.RERUN and first.rerun_data.query_string == "v=1"
    script_thread(False)
    for v in "234":  # the browser asks again while the run goes on (a triple click)
        assert r.request_rerun(rerun(v))
    script_thread(True)
    assert r.on_scriptrunner_yield() is None, "a young run is not interrupted by the browser"
    slept = []
    monkeypatch.setattr(fairness.time, "sleep", slept.append)
    nxt = r.on_scriptrunner_ready()  # the run ended: the folded request, with the last value
    assert nxt.type is ScriptRequestType.RERUN and nxt.rerun_data.query_string == "v=4"
    assert not slept, "three requests piled up behind one run: not a flood"
    assert r.on_scriptrunner_ready().type is ScriptRequestType.STOP  # nothing left: the thread ends


def test_the_scripts_own_rerun_and_a_stop_still_interrupt(script_thread):
    r = ScriptRequests()
    script_thread(False)
    r.request_rerun(rerun("1"))
    script_thread(True)
    r.on_scriptrunner_ready()
    r.request_rerun(rerun("body", fragment_id_queue=["f"], is_fragment_scoped_rerun=True))  # st.rerun("body")
    got = r.on_scriptrunner_yield()
    assert got is not None and got.type is ScriptRequestType.RERUN and got.rerun_data.fragment_id_queue == ["f"]
    r.request_stop()
    assert r.on_scriptrunner_yield().type is ScriptRequestType.STOP


def test_a_run_older_than_preempt_after_gives_way_to_the_browser(script_thread, clock):
    r = running(script_thread, "1")
    browser_asks(r, script_thread, "2")
    assert r.on_scriptrunner_yield() is None
    clock["t"] += PREEMPT_AFTER
    got = r.on_scriptrunner_yield()
    assert got is not None and got.rerun_data.query_string == "v=2"


def test_a_flood_that_interrupts_a_slow_run_is_told(script_thread, clock):
    """A run slower than PREEMPT_AFTER (a loaded server) is restarted from on_scriptrunner_yield and never reaches
    on_scriptrunner_ready: a flood that interrupts it is still counted, and the restarted run shows the notice.
    (CI: a loaded run of Compare was interrupted by 400 requests, and the page showed no notice.)"""
    r = running(script_thread, "0")
    browser_asks(r, script_thread, *map(str, range(1, 400)), every=0.001, clock=clock)
    clock["t"] += PREEMPT_AFTER
    got = r.on_scriptrunner_yield()
    assert got is not None and got.rerun_data.query_string == "v=399"
    pace = fairness._paces["s1"]
    assert pace.held and pace.flooding and pace.last_start == clock["t"]
    assert not r.on_scriptrunner_yield(), "nothing left to interrupt with"
    # a few requests interrupting a slow run, a minute later, are not a flood
    clock["t"] += 60
    r2 = running(script_thread, "a")
    browser_asks(r2, script_thread, "b")
    clock["t"] += PREEMPT_AFTER
    assert r2.on_scriptrunner_yield().rerun_data.query_string == "v=b"
    pace = fairness._paces["s1"]
    assert pace.last_start == clock["t"], "the restart is counted (its start noted)"
    assert not pace.held and not pace.flooding


def test_a_flood_that_arrives_between_the_look_and_the_start_is_told(script_thread, clock):
    """The event loop can hand over requests after on_scriptrunner_ready looked for them and before Streamlit's own
    method takes them (a thread switch in between): they are all folded into the run that starts, which must count
    them and, when they are a flood, show the notice."""
    r = running(script_thread, "0")
    clock["t"] += 5  # the last run started long ago: nothing to wait for
    original = script_requests.ScriptRequests.on_scriptrunner_ready.__aexp_original__

    def flood_then_original(self):
        browser_asks(self, script_thread, *map(str, range(1, 400)), every=0.0001, clock=clock)
        return original(self)

    got = fairness._on_scriptrunner_ready(flood_then_original, r)
    assert got.type is ScriptRequestType.RERUN and got.rerun_data.query_string == "v=399"
    pace = fairness._paces["s1"]
    assert pace.held and pace.flooding and pace.requests() >= 399


def test_a_flood_folded_into_the_scripts_own_rerun_is_told(script_thread, clock):
    """A leaf control's callback asks for a body rerun (the script's own request, which interrupts at once); a flood
    arriving meanwhile is folded into it and the run restarts from on_scriptrunner_yield, never reaching
    on_scriptrunner_ready: the flood is counted and the restarted run shows the notice. (CI: 400 requests folded
    into a body rerun, 3 runs in 0.15 s, no notice.) The script's own rerun alone changes nothing."""
    r = running(script_thread, "0")
    clock["t"] += 0.01
    r.request_rerun(rerun("body", fragment_id_queue=["f"], is_fragment_scoped_rerun=True))  # from the script
    got = r.on_scriptrunner_yield()
    assert got is not None and got.rerun_data.fragment_id_queue == ["f"]
    pace = fairness._paces["s1"]
    assert not pace.held and pace.requests() == 1, "the script's own rerun is not a request of the browser's"
    r.request_rerun(rerun("body", fragment_id_queue=["f"], is_fragment_scoped_rerun=True))
    browser_asks(r, script_thread, *map(str, range(1, 400)), every=0.0001, clock=clock)
    got = r.on_scriptrunner_yield()
    assert got is not None and got.rerun_data.query_string == "v=399"
    assert pace.held and pace.flooding and pace.last_start == clock["t"]


def test_a_flood_waits_on_the_script_thread_and_a_stop_ends_the_wait(script_thread, clock, monkeypatch):
    def sleep(s):
        clock["t"] += s

    monkeypatch.setattr(fairness.time, "sleep", sleep)
    r = running(script_thread, "0")
    start = clock["t"]
    browser_asks(r, script_thread, *map(str, range(1, 400)), every=0.0001, clock=clock)
    clock["t"] = start + 0.05
    nxt = r.on_scriptrunner_ready()
    assert nxt.rerun_data.query_string == "v=399" and clock["t"] == pytest.approx(start + PACE)
    assert fairness._paces["s1"].held
    # flooding on, and the session closes while it waits: the stop ends the wait at once
    script_thread(False)
    for i in range(400, 410):
        r.request_rerun(rerun(str(i)))
    r.request_stop()
    script_thread(True)
    before = clock["t"]
    assert r.on_scriptrunner_ready().type is ScriptRequestType.STOP and clock["t"] == before


def test_a_run_folded_behind_another_does_not_refer_to_the_browsers_cache(script_thread, monkeypatch):
    """The browser evicts cached messages when a run finishes; a request sent before that finish lists entries
    that may be gone, so its run sends every message in full. A request long after keeps its references."""
    clock = {"t": 1000.0}
    monkeypatch.setattr(fairness.time, "monotonic", lambda: clock["t"])
    cached = frozenset({"h1", "h2"})
    r = ScriptRequests()
    script_thread(False)
    r.request_rerun(rerun("1", cached_message_hashes=cached))
    script_thread(True)
    assert r.on_scriptrunner_ready().rerun_data.cached_message_hashes == cached  # the session's first run
    clock["t"] += 0.02
    script_thread(False)
    r.request_rerun(rerun("2", cached_message_hashes=cached))  # sent while run 1 went on
    clock["t"] += 0.02
    script_thread(True)
    folded = r.on_scriptrunner_ready()
    assert folded.rerun_data.query_string == "v=2" and folded.rerun_data.cached_message_hashes == frozenset()
    clock["t"] += 0.05
    assert r.on_scriptrunner_ready().type is ScriptRequestType.STOP  # run 2 ends; the thread ends
    clock["t"] += fairness.CACHE_GRACE + 5
    r2 = ScriptRequests()  # a later change, long after: a new script thread for the same session
    script_thread(False)
    r2.request_rerun(rerun("3", cached_message_hashes=cached))
    script_thread(True)
    assert r2.on_scriptrunner_ready().rerun_data.cached_message_hashes == cached


def test_apptests_in_a_row_are_never_paced_and_share_one_component_registry():
    """harness/apptest.py: AppTest gives every run one session id, two requests a run; eight AppTests in a row were
    taken for a flooding student from the fifth on (each such run slept about a second). Each run is now its own
    session's first, and the component registry is scanned once."""
    from harness.apptest import APPTEST_SESSION
    from tests.apptest_util import app, run_ok

    held, registries = [], set()
    original = Pace.started

    def started(self, now, was_held):
        held.append(was_held or self.flooding)
        original(self, now, was_held)

    for _ in range(8):
        at = app("streamlit_app.py")
        Pace.started = started
        try:
            run_ok(at)
        finally:
            Pace.started = original
        registries.add(id(at._bidi_component_manager))
    assert len(held) >= 8 and not any(held), held
    assert len(registries) == 1
    assert APPTEST_SESSION in fairness._paces  # the record the runs were counted in is the one forgotten
