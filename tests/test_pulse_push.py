"""ui/classroom/pulse_push.py: the listener wakes exactly the slots whose question was revealed, the registry stays bounded,
nothing is pushed where no server runs (AppTest), and the Streamlit internals it uses are those it was written
against. The push itself, against running servers (one, and two replicas sharing Redis) and in Chromium:
tests/test_pulse_live.py and tests/test_browser_pulse.py."""

from __future__ import annotations

import inspect
import time

import pytest
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner_utils.script_run_context import FragmentThreadState, ThreadState
from streamlit.runtime.session_manager import SessionInfo

from classpulse import Outcome
from tests.test_pulse_pages import PLAYGROUND, Browser, fresh_store, query, start_class  # noqa: F401
from ui.classroom import pulse_push
from ui.classroom.pulse import PENDING, PUSHED


@pytest.fixture
def registry(monkeypatch):
    """An empty registry, and the slots the listener would wake recorded instead of rerun."""
    monkeypatch.setattr(pulse_push, "_waiting", {})
    monkeypatch.setattr(pulse_push, "_following", {})
    woken = []
    monkeypatch.setattr(pulse_push, "_rerun_slot", lambda sid, fid: woken.append((sid, fid)) or 1)
    return woken


def wait(code: str, qid: str, sid: str, fid: str, at: float | None = None) -> None:
    pulse_push._waiting.setdefault((code, qid), {})[sid] = (fid, time.monotonic() if at is None else at)


def test_a_reveal_wakes_its_questions_slots_and_no_others(registry):
    wait("ABCDE", "q1", "s1", "f1")
    wait("ABCDE", "q1", "s2", "f2")
    wait("ABCDE", "q2", "s3", "f3")  # another question of the class, not revealed
    wait("FGHJK", "q1", "s4", "f4")  # another class
    asked = []

    def revealed(code, qids):
        asked.append((code, sorted(qids)))
        return frozenset({"q1"}) if code == "ABCDE" else frozenset()

    assert pulse_push.check(revealed) == 2
    assert sorted(registry) == [("s1", "f1"), ("s2", "f2")]
    assert sorted(asked) == [("ABCDE", ["q1", "q2"]), ("FGHJK", ["q1"])], "one question to the store per class"
    assert set(pulse_push._waiting) == {("ABCDE", "q2"), ("FGHJK", "q1")}, "the woken slots leave the registry"
    assert pulse_push.check(revealed) == 0, "a slot is woken once"


def test_a_store_away_wakes_nobody_and_forgets_nobody(registry):
    wait("ABCDE", "q1", "s1", "f1")
    assert pulse_push.check(lambda code, qids: Outcome.UNAVAILABLE) == 0
    assert registry == [] and pulse_push.waiting_count() == 1, "asked again on the next look"


def test_a_new_full_run_replaces_a_sessions_slots(registry):
    wait("ABCDE", "q1", "s1", "f1")
    wait("ABCDE", "q2", "s1", "f2")
    wait("ABCDE", "q1", "s2", "f3")
    pulse_push.forget_session("s1")
    assert pulse_push._waiting == {("ABCDE", "q1"): {"s2": pulse_push._waiting[("ABCDE", "q1")]["s2"]}}


def test_the_registry_is_bounded_and_forgets_slots_older_than_a_class(registry, monkeypatch):
    now = time.monotonic()
    wait("ABCDE", "q1", "old", "f0", at=now - pulse_push.FORGET_AFTER - 1)
    wait("ABCDE", "q2", "new", "f1")
    pulse_push.check(lambda code, qids: frozenset())
    assert set(pulse_push._waiting) == {("ABCDE", "q2")}
    monkeypatch.setattr(pulse_push, "MAX_WAITING", 3)
    for i in range(5):
        wait("ABCDE", f"q{i + 3}", f"s{i}", f"f{i}", at=now + i)
    pulse_push._drop_oldest()
    assert pulse_push.waiting_count() == 3
    assert ("ABCDE", "q2") not in pulse_push._waiting, "the oldest go first"


def test_without_a_server_nothing_is_pushed_and_the_watcher_checks_often(fresh_store):  # noqa: F811
    """AppTest runs no Streamlit server: a student's waiting question registers no slot, so the page's watcher
    keeps the short interval that brings the reveal (ui.classroom.pulse_panel.watch_reveals)."""
    assert not Runtime.exists() and not pulse_push.available()
    _, student_link, _ = start_class()
    student = Browser().open(PLAYGROUND, query(student_link))
    assert student.session_state[PENDING], "the prediction waits for the reveal"
    assert student.session_state[PUSHED] is False and pulse_push.waiting_count() == 0


def test_the_streamlit_internals_it_uses_are_those_it_was_written_against():
    """What ui/classroom/pulse_push.py reaches into (Streamlit has no public server-side rerun); read again in a new Streamlit."""
    assert list(inspect.signature(AppSession.request_rerun).parameters) == ["self", "client_state"]
    assert "_call_soon_on_event_loop" in AppSession.__dict__
    src = inspect.getsource(AppSession.__init__)
    assert "self._client_state = ClientState()" in src and "self._event_loop =" in src
    assert "_session_mgr" in inspect.getsource(Runtime.__init__)
    assert {"client", "session", "script_run_count"} <= set(SessionInfo.__dataclass_fields__)
    assert "fragment_id" in FragmentThreadState.__dataclass_fields__ and callable(ThreadState.get)
    assert "script_run_count += 1" in inspect.getsource(Runtime._send_message)


def test_two_verdicts_of_one_page_ask_for_one_full_run(monkeypatch):
    """Two questions of a page revealed at once: each slot shows its verdict, the page runs whole once."""
    import queue
    from types import SimpleNamespace

    monkeypatch.setattr(pulse_push, "_full", queue.SimpleQueue())
    monkeypatch.setattr(pulse_push, "_queued", set())
    monkeypatch.setattr(pulse_push, "_sequence", lambda: None)  # the sequencer's thread does nothing here
    for sid in ("s1", "s1", "s2"):
        monkeypatch.setattr(pulse_push, "get_script_run_ctx", lambda sid=sid: SimpleNamespace(session_id=sid))
        pulse_push.verdict_shown()
    got = [pulse_push._full.get_nowait() for _ in range(pulse_push._full.qsize())]
    assert got == ["s1", "s2"]
