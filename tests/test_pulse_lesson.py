"""A real lesson with the class pulse (AppTest): nothing is chosen for the student, one browser is one student
across reloads and tabs, the teacher's token leaves the address bar, joining by a code or a short address, a
full class that strands nobody, and a teacher's list whose questions read apart. Each AppTest is one browser
tab; a test's ``Browser`` carries the cookies its tabs share (tests/test_pulse_pages.py).
"""

from __future__ import annotations

import pytest

import classpulse.sqlite_store
import ui.classroom.pulse
from classpulse import Question, Tally, question_id
from tests.apptest_util import app, run_ok, texts
from tests.test_pulse_pages import (  # noqa: F401  (fresh_store is an autouse fixture)
    ANSWER,
    LABELS,
    PLAYGROUND,
    SETTING,
    Browser,
    fresh_store,
    predict,
    query,
    start_class,
    tally,
    weights_shown,
)
from ui.classroom.pulse_questions import CHOOSE_FIRST
from ui.skeleton.registry import predicting


def guess_widget(at):
    """The prediction's picker (a radio up to four answers, a select box above)."""
    found = [w for w in [*at.radio, *at.selectbox] if str(w.key).startswith("guess_")]
    assert len(found) == 1, [w.key for w in found]
    return found[0]


@pytest.mark.parametrize("page", [p.path for p in predicting()])
def test_no_prediction_is_chosen_for_the_student_and_reveal_asks_for_a_choice(page):
    at = run_ok(app(page, {"classroom": "lock"}))
    picker = guess_widget(at)
    assert picker.value is None, f"{page}: the prediction starts on {picker.value!r}"
    key = picker.key.removeprefix("guess_")
    at.button(key=f"reveal_{key}").click()
    run_ok(at)
    shown = texts(at)
    assert CHOOSE_FIRST in shown and "you predicted" not in shown and "Predict first" in shown
    assert guess_widget(at).value is None
    guess_widget(at).set_value(1)
    at.button(key=f"reveal_{key}").click()
    run_ok(at)
    shown = texts(at)
    assert "you predicted" in shown and CHOOSE_FIRST not in shown
    checks = [r for r in at.radio if str(r.key).startswith("pulse_check_")]
    assert all(r.value is None for r in checks), "check questions start with no choice too"


@pytest.mark.parametrize("page", [p.path for p in predicting()])
def test_in_a_class_send_asks_for_a_choice_first(page):
    teacher, student_link, _ = start_class(page, {})
    student = run_ok(app(page, query(student_link)))
    picker = guess_widget(student)
    assert picker.value is None, f"{page}: the prediction starts on {picker.value!r}"
    student.button(key=f"pulse_send_{picker.key.removeprefix('guess_')}").click()
    run_ok(student)
    assert CHOOSE_FIRST in texts(student) and "Sent: you chose" not in texts(student)
    run_ok(teacher)
    assert sum(tally(teacher).values()) == 0, "nothing was sent for the student"


def test_a_reload_and_a_second_tab_are_the_same_student():
    teacher, student_link, _ = start_class()
    ana, ben = Browser(), Browser()
    first = ana.open(PLAYGROUND, query(student_link))
    ana.run(predict(first, ANSWER))
    assert "aexp_student" in ana.jar, "the page asks the browser to keep the student id"
    run_ok(teacher)
    assert tally(teacher)[LABELS[ANSWER]] == 1

    reloaded = ana.open(PLAYGROUND, query(student_link))  # a reload (or a phone back from another app)
    assert f"Sent: you chose **{LABELS[ANSWER][3:]}**" in texts(reloaded), "the reload shows what was sent"
    assert reloaded.radio(key="guess_playground.twin").value == ANSWER
    second_tab = ana.open(PLAYGROUND, query(student_link))
    ana.run(predict(second_tab, 1))  # a second tab changes the answer: it replaces it
    ben.run(predict(ben.open(PLAYGROUND, query(student_link)), 2))
    run_ok(teacher)
    assert tally(teacher) == {LABELS[0]: 0, LABELS[1]: 1, LABELS[2]: 1}, "two browsers, two answers"

    teacher.button(key="pulse_reveal").click()
    run_ok(teacher)
    after = ana.open(PLAYGROUND, query(student_link))  # a reload after the reveal: the student's own verdict
    assert weights_shown(after) and any("Not this time: you predicted **softer**" in w.value for w in after.warning)
    newcomer = Browser().open(PLAYGROUND, query(student_link))
    assert weights_shown(newcomer) and "you predicted" not in texts(newcomer), "no verdict for who did not answer"


def test_a_check_question_answered_before_a_reload_is_restored():
    teacher, student_link, _ = start_class()
    ana = Browser()
    student = ana.open(PLAYGROUND, query(student_link))
    ana.run(predict(student, ANSWER))
    teacher.button(key="pulse_reveal").click()
    run_ok(teacher)
    ana.run(student)
    radio = next(r for r in student.radio if r.key.startswith("pulse_check_"))
    radio.set_value(0)
    ana.run(student)
    again = ana.open(PLAYGROUND, query(student_link))
    radio = next(r for r in again.radio if r.key.startswith("pulse_check_"))
    assert radio.value == 0 and "Sent: you chose **single key**" in texts(again)


@pytest.mark.parametrize("forged", ["zero", "other class", "shape"])
def test_a_student_id_the_class_did_not_make_is_replaced_with_a_notice(forged, fresh_store):  # noqa: F811
    _, student_link, _ = start_class()
    code = query(student_link)["class"]
    other = fresh_store.start_class()
    cookie = {
        "zero": f"{code}.{'0' * 32}",
        "other class": f"{code}.{fresh_store.issue_voter(other.code)}",  # replayed from another class
        "shape": f"{code}.<script>alert(1)</script>",
    }[forged]
    b = Browser()
    b.jar["aexp_student"] = cookie
    at = b.open(PLAYGROUND, query(student_link))
    shown = texts(at)
    assert "not made by this class" in shown and "send your answers again" in shown and "<script>" not in shown
    new = b.jar["aexp_student"]
    assert new != cookie and fresh_store.check_voter(code, new.split(".", 1)[1]).name == "OK"
    assert "Predict first" in shown, "the page keeps working"


def test_a_cookie_of_another_class_is_no_notice(fresh_store):  # noqa: F811
    _, student_link, _ = start_class()
    b = Browser()
    b.jar["aexp_student"] = f"23456.{'a' * 32}"  # a class of last week
    at = b.open(PLAYGROUND, query(student_link))
    assert "not made by this class" not in texts(at) and b.jar["aexp_student"].startswith(query(student_link)["class"])


def test_the_teacher_token_leaves_the_address_bar_and_a_reload_keeps_the_teacher():
    _, student_link, teacher_link = start_class()
    token = query(teacher_link)["teacher"]
    laptop = Browser()
    projector = laptop.open(PLAYGROUND, {**query(teacher_link), "view": "projector"})
    assert "teacher" not in projector.query_params and ":material/co_present: Class" in texts(projector)
    assert all(token not in c.value for c in projector.code), "the projector shows no token"
    assert laptop.jar["aexp_teacher"].endswith(token)
    reload = laptop.open(PLAYGROUND, query(student_link))  # the address bar holds the class, not the token
    assert ":material/co_present: Class" in texts(reload) and "teacher" not in reload.query_params
    student = Browser().open(PLAYGROUND, query(student_link))
    assert ":material/co_present:" not in texts(student) and "You are in class" in texts(student)


def test_a_teacher_cookie_of_another_class_leaves_a_student(fresh_store):  # noqa: F811
    _, student_link, _ = start_class()
    other = fresh_store.start_class()
    b = Browser()
    b.jar["aexp_teacher"] = f"{query(student_link)['class']}.{other.token}"  # another class's token
    at = b.open(PLAYGROUND, query(student_link))
    shown = texts(at)
    assert ":material/co_present:" not in shown and "You are in class" in shown and "not the one of class" in shown
    assert other.token not in shown


def test_the_teacher_shows_the_code_the_short_address_and_a_qr_code():
    teacher, student_link, _ = start_class()
    code = query(student_link)["class"]
    assert [m.value for m in teacher.metric if m.label == "Class code"] == [code]
    assert f"/?join={code}" in texts(teacher)
    (qr,) = [img for el in teacher.get("image") for img in el.proto.imgs if img.alt.startswith("QR code")]
    assert qr.alt.startswith("QR code that opens") and qr.alt.endswith(f"/?join={code}")
    import segno  # noqa: F401  (the PNG itself: a QR code of the address, as a phone's camera reads it)

    from ui.classroom.pulse_device import qr_png

    png = qr_png(f"http://127.0.0.1:8501/?join={code}")
    assert png.startswith(b"\x89PNG") and len(png) < 4000


def test_a_short_address_opens_the_classs_page():
    teacher, student_link, _ = start_class()
    code = query(student_link)["class"]
    for typed in (code, code.lower(), f" {code[:2]} {code[2:]} "):
        home = run_ok(app("streamlit_app.py", {"join": typed}))
        (button,) = home.get("link_button")
        target = button.proto.url
        assert target.startswith("/Playground?") and query(target) == query(student_link), typed
        assert "join" not in home.query_params


HOSTILE_JOINS = ["<script>alert(1)</script>", "**bold**", "0O1IL", "7QX2", "x" * 5000, "", "é" * 5]


@pytest.mark.parametrize("typed", HOSTILE_JOINS, ids=range(len(HOSTILE_JOINS)))
def test_a_bad_join_code_says_what_to_do(typed):
    home = run_ok(app("streamlit_app.py", {"join": typed}))
    shown = texts(home)
    assert "is not a class code" in shown and "Type it again" in shown and not home.get("link_button")
    assert "<script>" not in shown and "join" not in home.query_params


def test_join_codes_of_no_class_and_of_an_ended_class(fresh_store):  # noqa: F811
    home = run_ok(app("streamlit_app.py", {"join": "23456"}))
    assert "There is no class 23456 running" in texts(home)
    _, student_link, _ = start_class()
    fresh_store.clock.now += 5 * 3600
    home = run_ok(app("streamlit_app.py", {"join": query(student_link)["class"]}))
    assert "has ended" in texts(home) and "ask your teacher for a new code" in texts(home)


def test_home_has_a_join_box():
    _, student_link, _ = start_class()
    home = run_ok(app("streamlit_app.py"))
    home.text_input[0].input(query(student_link)["class"].lower())
    next(b for b in home.button if b.label == "Join").click()
    run_ok(home)
    (button,) = home.get("link_button")
    assert query(button.proto.url) == query(student_link)
    home.text_input[0].input("nope")
    next(b for b in home.button if b.label == "Join").click()
    run_ok(home)
    assert "'nope' is not a class code" in texts(home)


def test_a_full_class_strands_nobody(fresh_store, monkeypatch):  # noqa: F811
    monkeypatch.setattr(classpulse.sqlite_store, "MAX_QUESTIONS", 1)
    teacher, student_link, _ = start_class()  # the teacher's page asks the one question the class holds
    other = run_ok(app(PLAYGROUND, query(student_link)))
    other.button(key="follow_leave").click()  # a student who explores alone (the class follows the teacher's page)
    run_ok(other)
    other.number_input(key="ctl_seed").set_value(9)  # another setting: a new question
    run_ok(other)
    predict(other, ANSWER)
    shown = texts(other)
    assert "is full" in shown and "predict and reveal on your own" in shown
    other.button(key="reveal_playground.twin").click()
    run_ok(other)
    assert weights_shown(other), "the student reveals alone"
    run_ok(teacher)
    # turned away: the student's question, and the check question the teacher's page lists (the class holds 1 here)
    assert "The class is full: it holds 40 questions and turned 2 questions away" in texts(teacher)
    assert ui.classroom.pulse.store().refused(*_code_token(teacher)) == 2


def _code_token(at) -> tuple[str, str]:
    return at.query_params["class"], at.session_state["link_options"].teacher


def test_the_teachers_list_tells_questions_apart_by_what_differs():
    from ui.classroom.pulse_panel import question_names

    def asked(seed: int, total: int, prompt: str = "Scaling is on: sharper?") -> Tally:
        setting = ("seq_len 6", "d_model 16", f"seed {seed}", "1")
        q = Question(question_id(seed, prompt), "Playground", prompt, ("a", "b"), 0, setting)
        return Tally(q, (total, 0), False, float(seed))

    names = question_names([asked(3, 6), asked(5, 1), asked(3, 2, "Which key?")])
    assert sorted(names.values()) == [
        "Playground: Scaling is on: sharper? · seed 3 (6 answers)",
        "Playground: Scaling is on: sharper? · seed 5 (1 answer)",
        "Playground: Which key? (2 answers)",
    ]


def test_a_question_keeps_its_setting_through_the_store():
    q = Question(question_id(1), "Compare", "Which is sharper?", ("A", "B"), 0, ("A seed 1", "B seed 2"))
    assert Question.from_json(q.to_json()) == q
    old = '["' + q.qid + '", "Compare", "Which is sharper?", ["A", "B"], 0]'  # stored before settings
    assert Question.from_json(old).setting == ()
