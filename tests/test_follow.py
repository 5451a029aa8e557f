"""The class follows the teacher (ui/classroom/follow.py): the stored link's "explore freely" mark round-trips, the
listener wakes exactly the followers whose link is stale, and on the pages (AppTest, one tab per AppTest sharing the
process's store as a server's sessions do) a student's page goes to the teacher's page and setting, keeps what the
student sent, stays while the student explores alone or the teacher lets the class explore, and comes back with one
tap. Against a running server (thirty students) and in Chromium: tests/test_pulse_live.py, tests/test_browser_follow.py.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from classpulse import Outcome
from classpulse.model import LINK_PATTERN, lead_link, split_lead
from tests.apptest_util import run_ok
from tests.test_pulse_pages import CHOICES, PLAYGROUND, Browser, fresh_store, predict, query, start_class  # noqa: F401
from tests.test_pulse_push import registry  # noqa: F401
from ui.classroom import follow, pulse_push

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", max_size=20)
PARAM = st.tuples(st.sampled_from(["seq_len", "class", "classroom", "hide", "a_seed", "lead", "x"]), NAME)


@given(NAME, st.lists(PARAM, max_size=6), st.booleans())
def test_the_free_mark_round_trips_and_leaves_the_rest_of_the_link_alone(page, params, free):
    query = "&".join(f"{k}={v}" for k, v in params if k != "lead")
    link = f"{page}?{query}" if query else page
    marked = lead_link(link, free)
    assert split_lead(marked) == (link, free)
    assert lead_link(marked, free) == marked and lead_link(marked, not free) == lead_link(link, not free)
    assert LINK_PATTERN.fullmatch(marked), "the store takes the marked link"
    got_page, got_params, got_free = follow.parse_link(marked)
    assert (got_page, got_free) == (page, free) and "lead" not in got_params


def test_a_place_ignores_who_looks_and_not_what_is_shown():
    teacher = follow.place("Playground", {"seq_len": "9", "class": "ABCDE", "teacher": "t" * 24, "view": "projector"})
    assert teacher == follow.place("/Playground", {"seq_len": "9", "class": "ABCDE", "join": "ABCDE"})
    assert teacher != follow.place("Playground", {"seq_len": "8", "class": "ABCDE"})
    assert teacher != follow.place("Compare", {"seq_len": "9", "class": "ABCDE"})


# ---- the listener (ui/classroom/pulse_push.py)


@pytest.fixture
def followers(registry, monkeypatch):  # noqa: F811 - the fixture imported above
    """An empty registry (tests/test_pulse_push.py's), and the followers the listener would move recorded instead."""
    woken = []
    monkeypatch.setattr(pulse_push, "_wake_follower", lambda sid, fid: woken.append((sid, fid)) or 1)
    return woken


def following(code: str, sid: str, fid: str, seen: str, at: float | None = None) -> None:
    pulse_push._following.setdefault(code, {})[sid] = (fid, seen, time.monotonic() if at is None else at)


def test_a_new_link_wakes_the_followers_who_have_not_seen_it_once(followers):
    following("ABCDE", "s1", "f1", "Playground?seq_len=6")
    following("ABCDE", "s2", "f2", "Playground?seq_len=9")  # already there (it joined after the change)
    following("FGHJK", "s3", "f3", "Playground?seq_len=6")  # another class, whose teacher did not move
    links = {"ABCDE": "Playground?seq_len=9", "FGHJK": "Playground?seq_len=6"}
    asked = []

    def link(code):
        asked.append(code)
        return links[code]

    assert pulse_push.check(lambda code, qids: frozenset(), link) == 1
    assert followers == [("s1", "f1")] and sorted(asked) == ["ABCDE", "FGHJK"], "one question per class"
    assert pulse_push.waiting_count() == 2, "the woken follower registers again when its slot runs"
    assert pulse_push.check(lambda code, qids: frozenset(), link) == 0


@pytest.mark.parametrize("answer", [Outcome.UNAVAILABLE, Outcome.EXPIRED, ""])
def test_a_store_away_an_ended_class_or_no_link_moves_nobody(followers, answer):
    following("ABCDE", "s1", "f1", "Playground?seq_len=6")
    assert pulse_push.check(lambda code, qids: frozenset(), lambda code: answer) == 0
    assert followers == [] and pulse_push.waiting_count() == 1


def test_followers_leave_with_their_full_run_and_are_forgotten_after_a_class(followers):
    following("ABCDE", "s1", "f1", "a")
    following("ABCDE", "s2", "f2", "a", at=time.monotonic() - pulse_push.FORGET_AFTER - 1)
    pulse_push.forget_session("s1")
    assert pulse_push.waiting_count() == 1
    assert pulse_push.check(lambda code, qids: frozenset(), lambda code: "b") == 0, "a follower older than a class"
    assert pulse_push.waiting_count() == 0 and followers == []


# ---- on the pages (AppTest: the slot checks the store in each full run, as where the server cannot push)


def caption(at, words: str) -> bool:
    return any(words in c.value for c in at.caption)


def test_a_student_follows_the_teachers_setting_and_page_and_keeps_their_answers():
    teacher, students_link, _ = start_class()
    ana = Browser().open(PLAYGROUND, query(students_link))
    assert caption(ana, "Your page follows your teacher's")
    predict(ana, 1)  # "softer", sent at seq_len 6
    teacher.slider(key="ctl_seq_len").set_value(9)
    run_ok(teacher)
    run_ok(ana)
    assert ana.query_params["seq_len"] == "9" and ana.slider(key="ctl_seq_len").value == 9
    assert ana.query_params["classroom"] == "lock" and "teacher" not in ana.query_params, "a student's link still"
    assert not any("Sent: you chose" in c.value for c in ana.caption), "a new setting asks a new question"

    teacher.switch_page("pages/Compare.py")
    run_ok(teacher)
    run_ok(ana)
    assert [t.value for t in ana.title] == [":material/compare: Compare"]
    assert ana.query_params["a_seq_len"] == "9" and caption(ana, "now Compare")

    teacher.switch_page(PLAYGROUND)
    run_ok(teacher)
    teacher.slider(key="ctl_seq_len").set_value(6)
    run_ok(teacher)
    run_ok(ana)
    assert ana.query_params["seq_len"] == "6" and ana.slider(key="ctl_seq_len").value == 6
    assert any(f"Sent: you chose **{CHOICES[1]}**" in c.value for c in ana.caption), "back where they answered: kept"


def test_a_student_who_explores_alone_stays_and_rejoins_with_one_tap():
    teacher, students_link, _ = start_class()
    ben = Browser().open(PLAYGROUND, query(students_link))
    ben.button(key="follow_leave").click()
    run_ok(ben)
    assert caption(ben, "You explore alone")
    ben.slider(key="ctl_seq_len").set_value(12)
    run_ok(ben)
    teacher.switch_page("pages/Masks.py")
    run_ok(teacher)
    run_ok(ben)
    assert ben.query_params["seq_len"] == "12" and ben.title[0].value.endswith("Playground"), "never moved"
    ben.button(key="follow_rejoin").click()
    run_ok(ben)
    assert ben.title[0].value.endswith("Masks") and ben.query_params["seq_len"] == "6", "at the teacher's at once"
    assert caption(ben, "Your page follows your teacher's")


def test_the_teacher_lets_the_class_explore_and_leads_it_again():
    teacher, students_link, _ = start_class()
    cleo = Browser().open(PLAYGROUND, query(students_link))
    teacher.toggle(key="follow_free").set_value(True)
    run_ok(teacher)
    teacher.slider(key="ctl_seq_len").set_value(10)
    run_ok(teacher)
    run_ok(cleo)
    assert cleo.query_params["seq_len"] == "6" and caption(cleo, "explore freely")
    teacher.toggle(key="follow_free").set_value(False)
    run_ok(teacher)
    run_ok(cleo)
    assert cleo.query_params["seq_len"] == "10" and caption(cleo, "Your page follows")


def test_what_the_teacher_hides_stays_hidden_and_a_student_moves_nobody(fresh_store):  # noqa: F811
    teacher, students_link, _ = start_class(params={"seq_len": "6", "d_model": "16", "heads": "2", "hide": "d_model"})
    dan = Browser().open(PLAYGROUND, query(students_link))
    code = query(students_link)["class"]
    before = fresh_store.link(code)
    dan.slider(key="ctl_seq_len").set_value(7)
    run_ok(dan)
    assert fresh_store.link(code) == before, "only the teacher's token sets where the class goes"
    teacher.switch_page("pages/Multi-head.py")
    run_ok(teacher)
    run_ok(dan)
    assert "Multi-head" in dan.title[0].value and dan.query_params["hide"] == "d_model"
    assert not [s for s in dan.sidebar.select_slider if s.label.startswith("d_model")], "still hidden"


def test_a_link_naming_no_page_of_this_app_leaves_the_student_where_they_are(fresh_store):  # noqa: F811
    teacher, students_link, _ = start_class()
    eve = Browser().open(PLAYGROUND, query(students_link))
    code = query(students_link)["class"]
    fresh_store._set_link(code, f"No_such_page?seq_len=9&class={code}&classroom=lock")  # a link of another version
    run_ok(eve)
    assert eve.title[0].value.endswith("Playground") and eve.query_params["seq_len"] == "6"


def test_the_class_follows_a_teacher_whose_share_box_is_closed():
    """The share box draws its links only while it is open (a page opens without the code highlighter); the class is
    led to the teacher's page and setting whether the box is open or not."""
    teacher, students_link, _ = start_class()
    ana = Browser().open(PLAYGROUND, query(students_link))
    teacher.session_state["share_open"] = False
    run_ok(teacher)
    assert not teacher.sidebar.code and not any("Class " in m.value for m in teacher.sidebar.markdown)
    teacher.slider(key="ctl_seq_len").set_value(9)
    run_ok(teacher)
    run_ok(ana)
    assert ana.query_params["seq_len"] == "9" and ana.slider(key="ctl_seq_len").value == 9
    teacher.session_state["share_open"] = True
    run_ok(teacher)
    (link,) = [c.value for c in teacher.sidebar.code]
    assert "seq_len=9" in link and "class=" in link and "teacher=" not in link
