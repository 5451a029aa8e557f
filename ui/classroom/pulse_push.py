"""The teacher's reveal, pushed to the students' pages: no student page asks the server whether it happened.

A student's question box, while its question waits for the reveal, holds a small fragment, a *slot*
(:func:`reveal_slot`). Drawn in a full run it draws nothing and registers here: this session, the slot's fragment
id, the class and the question. One thread per server process, the *listener*, asks the class store every
``POLL`` seconds which of the registered questions were revealed (one call per class with waiting students, so a
replica behind nginx sees a reveal made on the other replica through Redis), and for each revealed one asks every
waiting session to rerun its slot, as the browser's own timer would (Streamlit's ``AppSession.request_rerun``
with the session's last client state and the slot's fragment id). The slot's run is a few milliseconds: it draws
the student's verdict in the question's box and hands the session to the *sequencer*, a second thread, which asks
for the page's full run (what the question hid: the maps), IN_FLIGHT sessions at a time, the next once a run has
reached its browser. So thirty students read the answer within a fraction of a second of the teacher's
press, and their pages' full runs (30-60 ms of server CPU each) follow one another instead of thirty threads
sharing the interpreter and all finishing last (tried: the verdicts then waited for the maps, about 1 s for all).

The same listener moves the pages of a class that follows its teacher (ui/classroom/follow.py): a follower's slot
registers with the class's link it last acted on (:func:`follow`), the listener asks the store for the link of every
class with followers at each look, and reruns the slot of each follower whose link is not the class's now; the slot
switches its page to the teacher's.

Streamlit has no public API for a server-side rerun; this module uses what its file watcher uses
(``AppSession.request_rerun`` on the session's event loop), found through ``Runtime.instance()``. Where that is
missing (AppTest, a newer Streamlit that moved it) nothing is pushed and the page's watcher
(ui.classroom.pulse_panel.watch_reveals, every few seconds) brings the reveal instead. ``tests/test_pulse_push.py`` pins
what is used; ``benchmarks/pulse.py`` times the reveal reaching a class.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from classpulse import Outcome

_LOG = logging.getLogger(__name__)
POLL = 0.1  # seconds between the listener's questions to the store while some student waits
MAX_WAITING = 20_000  # registered slots per process at most (a slot is about 200 bytes); the oldest go first
FORGET_AFTER = 4 * 3600.0  # seconds: a slot waiting longer than a class lasts is dropped

# (code, qid) -> {session id: (fragment id, registered at)}
_waiting: dict[tuple[str, str], dict[str, tuple[str, float]]] = {}
# code -> {session id: (fragment id, the class's link the session last acted on, registered at)}: the students whose
# pages follow the teacher's (ui/classroom/follow.py)
_following: dict[str, dict[str, tuple[str, str, float]]] = {}
_lock = threading.Lock()
_wake = threading.Event()  # set to make the listener look now (a registration, a reveal in this process)
_listener: threading.Thread | None = None
_full: queue.SimpleQueue[str] = queue.SimpleQueue()  # sessions whose slot showed the verdict: their full runs
_queued: set[str] = set()  # the sessions in _full
_unsent: dict[str, float] = {}  # sessions whose slot was woken and has not shown its verdict yet -> woken at
VERDICT_WAIT = 0.5  # seconds the full runs wait for every woken slot's verdict to leave first
_sequencer: threading.Thread | None = None
FULL_RUN_WAIT = 2.0  # seconds the sequencer waits for one session's full run before it asks for the next one
IN_FLIGHT = 2  # full runs asked for at a time: one runs while the last one's messages go out
# followers' pages moved at a time (_move); 0 moves them all at once (AEXP_FOLLOW_IN_FLIGHT, benchmarks/follow.py)
MOVES_IN_FLIGHT = int(os.environ.get("AEXP_FOLLOW_IN_FLIGHT", "2") or 0)
_moves: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()  # (session id, slot fragment id) to move
_mover: threading.Thread | None = None
pushed = 0  # slots woken since the process started (tests, benchmarks)
led = 0  # followers' slots woken since the process started (tests, benchmarks)
failures = 0  # wakes that could not be delivered (the session was gone)


def available() -> bool:
    """Whether this process can push: a Streamlit server runtime is running (not bare mode, nor AppTest, which
    installs a mock runtime)."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and type(Runtime.instance()) is Runtime


def register(code: str, qid: str) -> bool:
    """Inside a slot's run: this session waits for ``qid`` of class ``code``; returns whether a push will come."""
    ctx = get_script_run_ctx()
    fragment = ThreadState.get().fragment_id
    if ctx is None or not fragment or not available():
        return False
    now = time.monotonic()
    with _lock:
        _waiting.setdefault((code, qid), {})[ctx.session_id] = (fragment, now)
        if sum(len(s) for s in _waiting.values()) > MAX_WAITING:
            _drop_oldest()
    _ensure_listener()
    _wake.set()
    return True


def follow(code: str, seen: str) -> bool:
    """Inside a follower's slot (ui/classroom/follow.py): this session follows class ``code``, whose link it last
    acted on is ``seen``; its slot is rerun when the class's link is another. Returns whether a push will come."""
    ctx = get_script_run_ctx()
    fragment = ThreadState.get().fragment_id
    if ctx is None or not fragment or not available():
        return False
    with _lock:
        _following.setdefault(code, {})[ctx.session_id] = (fragment, seen, time.monotonic())
        if sum(len(s) for s in _following.values()) > MAX_WAITING:
            entries = sorted((at, c, sid) for c, s in _following.items() for sid, (_, _, at) in s.items())
            for _, c, sid in entries[: len(entries) - MAX_WAITING]:
                _following[c].pop(sid, None)
    _ensure_listener()
    _wake.set()
    return True


def verdict_shown() -> None:
    """Inside a pushed slot's run, once it drew the verdict: this session's page is to run whole (the sequencer)."""
    global _sequencer
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with _lock:
        _unsent.pop(ctx.session_id, None)
        if ctx.session_id in _queued:
            return  # two questions of one page revealed at once: one full run shows both
        _queued.add(ctx.session_id)
        _full.put(ctx.session_id)
        if _sequencer is None or not _sequencer.is_alive():
            _sequencer = threading.Thread(target=_sequence, name="pulse-push-runs", daemon=True)
            _sequencer.start()


def forget_session(session_id: str) -> None:
    """A session's full run starts: its slots of the last run are gone (this run registers the ones it draws)."""
    with _lock:
        for key in [k for k, sessions in _waiting.items() if sessions.pop(session_id, None) and not sessions]:
            del _waiting[key]
        for code in [c for c, sessions in _following.items() if sessions.pop(session_id, None) and not sessions]:
            del _following[code]


def poke() -> None:
    """Look at the store now (the teacher of a class on this process just revealed)."""
    _wake.set()


def waiting_count() -> int:
    """Slots registered: questions' reveal slots and followers' slots."""
    with _lock:
        return sum(len(s) for s in _waiting.values()) + sum(len(s) for s in _following.values())


def _drop_oldest() -> None:
    entries = sorted((at, key, sid) for key, s in _waiting.items() for sid, (_, at) in s.items())
    for _, key, sid in entries[: len(entries) - MAX_WAITING]:
        _waiting[key].pop(sid, None)
        if not _waiting[key]:
            del _waiting[key]


def _ensure_listener() -> None:
    global _listener
    with _lock:
        if _listener is not None and _listener.is_alive():
            return
        _listener = threading.Thread(target=_listen, name="pulse-push", daemon=True)
        _listener.start()


def _listen() -> None:
    """The listener's loop: while students wait, ask the store every POLL seconds; idle (no CPU) otherwise."""
    while True:
        _wake.wait()
        _wake.clear()
        try:
            while check() or waiting_count():
                _wake.wait(POLL)  # a reveal on this process (poke) ends the wait at once
                _wake.clear()
        except Exception:  # noqa: BLE001 - the listener must outlive a bad moment of the store
            _LOG.exception("class pulse: the reveal listener failed; students' watchers bring the reveal")
            time.sleep(1.0)


def check(revealed: Callable | None = None, link: Callable | None = None) -> int:
    """One look: for every class with waiting slots, which of their questions were revealed; for every class with
    followers, where its teacher's page is; wake those slots. Returns how many slots were woken.
    ``revealed(code, qids)`` and ``link(code)`` default to the process's store's."""
    if revealed is None or link is None:
        from ui.classroom.pulse import store

        revealed = revealed or (lambda code, qids: store().revealed(code, qids))
        link = link or (lambda code: store().link(code))
    now = time.monotonic()
    with _lock:
        for key in [k for k, s in _waiting.items() if all(now - at > FORGET_AFTER for _, at in s.values())]:
            del _waiting[key]
        for code in [c for c, s in _following.items() if all(now - at > FORGET_AFTER for _, _, at in s.values())]:
            del _following[code]
        leading = list(_following)
        classes: dict[str, list[str]] = {}
        for code, qid in _waiting:
            classes.setdefault(code, []).append(qid)
    woken = 0
    for code, qids in classes.items():
        shown = revealed(code, qids)
        if isinstance(shown, Outcome) or not shown:
            continue
        for qid in shown:
            with _lock:
                sessions = _waiting.pop((code, qid), {})
            for sid, (fragment, _) in sessions.items():
                woken += _rerun_slot(sid, fragment)
    for code in leading:
        woken += _lead(code, link(code))
    return woken


def _lead(code: str, lead: object) -> int:
    """Wake the followers of class ``code`` that have not acted on its link ``lead`` yet (their slot adopts it)."""
    if not isinstance(lead, str) or not lead:
        return 0  # the store is away, or the teacher's page has not said where it is: nobody moves
    with _lock:
        sessions = _following.get(code, {})
        moving = {sid: entry for sid, entry in sessions.items() if entry[1] != lead}
        for sid in moving:
            del sessions[sid]
        if not sessions:
            _following.pop(code, None)
    return sum(_wake_follower(sid, fragment) for sid, (fragment, _, _) in moving.items())


def _wake_follower(session_id: str, fragment_id: str) -> int:
    """Hand session ``session_id``'s follower's slot ``fragment_id`` to the mover (:func:`_move`), or rerun it now
    when moves are not sequenced (MOVES_IN_FLIGHT 0)."""
    global _mover
    if MOVES_IN_FLIGHT <= 0:
        return _rerun_follower(session_id, fragment_id) is not None
    _moves.put((session_id, fragment_id))
    with _lock:
        if _mover is None or not _mover.is_alive():
            _mover = threading.Thread(target=_move, name="pulse-follow-moves", daemon=True)
            _mover.start()
    return 1


def _rerun_follower(session_id: str, fragment_id: str):
    """Ask session ``session_id`` to rerun its follower's slot; returns its session info (None: it is gone)."""
    global led, failures
    from streamlit.runtime import Runtime

    info = Runtime.instance()._session_mgr.get_active_session_info(session_id)
    if info is None:
        failures += 1
        return None
    _request(info.session, fragment_id)
    led += 1
    return info


def _move() -> None:
    """The mover's loop: at most MOVES_IN_FLIGHT followers' pages move at a time. A move is the slot's run and the
    full run of the teacher's page that it switches to; it leaves the flight once that run has reached its browser
    (the session's count of finished runs, which Streamlit raises as it sends ``script_finished``; a slot that did
    not need to move finishes its own run) or after FULL_RUN_WAIT seconds. Thirty pages moved at once share the
    interpreter and all arrive last; one after the other, the first arrive at once and the last no later."""
    flight: list[tuple[object, int, float]] = []  # (session info, its run count when asked, give up at)
    while True:
        try:
            while len(flight) < MOVES_IN_FLIGHT:
                try:
                    sid, fragment = _moves.get(block=not flight)
                except queue.Empty:
                    break
                info = _rerun_follower(sid, fragment)
                if info is not None:
                    flight.append((info, info.script_run_count, time.monotonic() + FULL_RUN_WAIT))
            time.sleep(0.005)
            now = time.monotonic()
            flight = [f for f in flight if f[0].script_run_count == f[1] and now < f[2]]
        except Exception:  # noqa: BLE001 - the next follower still moves; its page's next run is the safety net
            _LOG.exception("class pulse: a follower's move failed")
            flight = []


def _sequence() -> None:
    """The sequencer's loop: at most IN_FLIGHT full runs asked for at a time; a run leaves the flight once it
    reached its browser (the session's count of finished runs, which Streamlit raises as it sends
    ``script_finished``) or after FULL_RUN_WAIT seconds. A session's full run is asked for only once its slot's run
    has ended and its messages have left (:func:`_sent`): a new run clears the messages still queued for the
    browser, and the verdict would then arrive with the maps. And no full run starts while a woken slot has not
    shown its verdict or its verdict is still queued (up to VERDICT_WAIT): thirty pages' full runs keep the
    server's event loop, which sends every message, busy for a second or more, and the verdicts must go first."""
    from streamlit.runtime import Runtime

    flight: list[tuple[object, int, float]] = []  # (session info, its run count when asked, give up at)
    waiting: list[tuple[object, float]] = []  # (session info, give up waiting for its slot's messages at)
    while True:
        try:
            while True:  # take every session the slots handed over (block only when there is nothing to do)
                try:
                    sid = _full.get(block=not flight and not waiting)
                except queue.Empty:
                    break
                with _lock:
                    _queued.discard(sid)
                info = Runtime.instance()._session_mgr.get_session_info(sid)
                if info is not None and info.client is not None:
                    waiting.append((info, time.monotonic() + FULL_RUN_WAIT))
                if _full.empty():
                    break
            now = time.monotonic()
            with _lock:  # a slot that has not shown its verdict, or whose verdict is still queued, holds the runs
                held = any(now - at < VERDICT_WAIT for at in _unsent.values())
            held = held or any(not _sent(info.session) and now < give_up for info, give_up in waiting)
            for item in [] if held else list(waiting):
                if len(flight) >= IN_FLIGHT:
                    break
                info, give_up = item
                if _sent(info.session) or now > give_up:
                    waiting.remove(item)
                    flight.append((info, info.script_run_count, now + FULL_RUN_WAIT))
                    _request(info.session, fragment_id="")
            time.sleep(0.005)
            now = time.monotonic()
            flight = [f for f in flight if f[0].script_run_count == f[1] and now < f[2]]
        except Exception:  # noqa: BLE001 - the next session still gets its run; its watcher is the safety net
            _LOG.exception("class pulse: a pushed full run failed")
            flight, waiting = [], []


def _sent(session) -> bool:
    """Whether ``session`` runs nothing now and has sent its browser every message."""
    from streamlit.runtime.app_session import AppSessionState

    return session._state is AppSessionState.APP_NOT_RUNNING and session._browser_queue.is_empty()


def _request(session, fragment_id: str) -> None:
    """Ask ``session`` to run (its fragment ``fragment_id``, or the page when ""), as its browser would, with the
    widget states it last sent."""
    cs = ClientState()
    cs.CopyFrom(session._client_state)
    cs.fragment_id = fragment_id
    cs.is_auto_rerun = bool(fragment_id)
    del cs.cached_message_hashes[:]  # the browser's cache list may be stale by now: send every message whole
    session._call_soon_on_event_loop(lambda: session.request_rerun(cs))


def _rerun_slot(session_id: str, fragment_id: str) -> int:
    """Ask session ``session_id`` to rerun its fragment ``fragment_id``, as its browser's timer would."""
    global pushed, failures
    from streamlit.runtime import Runtime

    info = Runtime.instance()._session_mgr.get_active_session_info(session_id)
    if info is None:
        failures += 1
        return 0
    with _lock:
        _unsent[session_id] = time.monotonic()
        for sid in [s for s, at in _unsent.items() if time.monotonic() - at > VERDICT_WAIT]:
            del _unsent[sid]
    _request(info.session, fragment_id)
    pushed += 1
    return 1
