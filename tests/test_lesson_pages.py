"""A lesson on the pages (AppTest): a teacher writes one from the what-ifs on screen (the page's own question or a
typed one), reorders and removes steps, steps through it with Back and Next; a lesson link and the shipped lesson
open it; bad links and typed markup are refused with a message and the page goes on; in a class the teacher's
step is the class's, the typed question is counted, and the class's answers file counts what was sent."""

from __future__ import annotations

import csv
import io

import pytest

from tests.apptest_util import app, run_ok
from tests.test_pulse_pages import PLAYGROUND, Browser, fresh_store, query, start_class  # noqa: F401
from ui.classroom import lesson as L
from ui.classroom.lesson_panel import decode_question, encode_question

ADD = "FormSubmitter:lesson_add-Add this what-if to my lesson"


def open_box(at):
    """Open the sidebar's Lesson box (it draws its widgets only when open)."""
    if "lesson_open" not in at.session_state or not at.session_state["lesson_open"]:
        at.session_state["lesson_open"] = True
        run_ok(at)
    return at


def add(at, note="", prompt="", choices="", right=1):
    open_box(at)
    at.text_input(key="lesson_note").set_value(note)
    at.text_input(key="lesson_prompt").set_value(prompt)
    at.text_area(key="lesson_choices").set_value(choices)
    at.number_input(key="lesson_right").set_value(right)
    at.button(key=ADD).click()
    return run_ok(at)


def bar(at) -> str:
    return next((m.value for m in at.markdown if "· step " in m.value), "")


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_a_teacher_writes_a_lesson_and_steps_through_it():
    at = run_ok(app(PLAYGROUND, {"seq_len": "6", "d_model": "16", "heads": "2"}))
    assert bar(at) == "", "no lesson yet"
    add(at, note="Look at head 1.", prompt="Which head is sharper?", choices="head 1\nhead 2\n", right=2)
    assert bar(at).endswith("step 1 of 1") and "My lesson" in bar(at)
    at.slider(key="ctl_seq_len").set_value(9)
    run_ok(at)
    at.button(key="lesson_again").click()  # the step's setting again
    run_ok(at)
    assert at.query_params["seq_len"] == "6"
    at.slider(key="ctl_seq_len").set_value(9)
    run_ok(at)
    add(at)  # the page's own prediction
    assert bar(at).endswith("step 2 of 2")
    lesson = at.session_state["lesson"]
    assert [s.params()["seq_len"] for s in lesson.steps] == ["6", "9"]
    assert lesson.steps[0].question == L.StepQuestion("Which head is sharper?", ("head 1", "head 2"), 1)
    assert lesson.steps[1].question is None and lesson.steps[0].note == "Look at head 1."
    assert not {"lesson", "lesson_step", "class", "ask"} & set(lesson.steps[1].params()), (
        "the step is the setting alone"
    )

    at.button(key="lesson_back").click()
    run_ok(at)
    assert bar(at).endswith("step 1 of 2") and at.query_params["seq_len"] == "6"
    assert any("Your teacher asks:** Which head is sharper?" in m.value for m in at.markdown)
    assert any(m.value == "Look at head 1\\." for m in at.markdown), [m.value for m in at.markdown][:8]
    assert at.query_params["lesson_step"] == "1" and L.from_param(at.query_params["lesson"]) == lesson, (
        "a reload keeps it"
    )
    at.radio(key=next(r.key for r in at.radio if r.key and r.key.startswith("pulse_check_"))).set_value(1)
    run_ok(at)
    assert any("Right: **head 2**" in s.value for s in at.success), "a learner alone gets the verdict at once"
    at.button(key="lesson_next").click()
    run_ok(at)
    assert bar(at).endswith("step 2 of 2") and at.query_params["seq_len"] == "9" and "ask" not in at.query_params

    at.selectbox(key="lesson_pick").set_value(1)
    run_ok(at)
    at.button(key="lesson_up").click()
    run_ok(at)
    assert [s.params()["seq_len"] for s in at.session_state["lesson"].steps] == ["9", "6"]
    assert bar(at).endswith("step 1 of 2"), "the step on screen moved with it"
    at.button(key="lesson_remove").click()  # the picked step (now the first)
    run_ok(at)
    assert [s.params()["seq_len"] for s in at.session_state["lesson"].steps] == ["6"]


def test_a_steps_note_and_question_are_edited_and_its_setting_stays():
    at = run_ok(app(PLAYGROUND, {"seq_len": "6", "d_model": "16", "heads": "2"}))
    add(at, note="First.", prompt="Which head?", choices="head 1\nhead 2", right=1)
    at.slider(key="ctl_seq_len").set_value(9)
    run_ok(at)
    add(at)
    at.selectbox(key="lesson_pick").set_value(0)
    run_ok(at)
    at.button(key="lesson_edit").click()
    run_ok(at)
    assert at.text_input(key="lesson_prompt").value == "Which head?" and at.text_area(key="lesson_choices").value == (
        "head 1\nhead 2"
    )
    at.text_input(key="lesson_prompt").set_value("Which head is sharper?")
    at.text_area(key="lesson_choices").set_value("head 1\nhead 2\nneither")
    at.number_input(key="lesson_right").set_value(3)
    at.text_input(key="lesson_note").set_value("Edited.")
    at.button(key="FormSubmitter:lesson_add-Save to step 1").click()
    run_ok(at)
    first = at.session_state["lesson"].steps[0]
    assert first.question == L.StepQuestion("Which head is sharper?", ("head 1", "head 2", "neither"), 2)
    assert first.note == "Edited." and first.params()["seq_len"] == "6", "its page and setting stay"
    assert len(at.session_state["lesson"].steps) == 2
    at.text_input(key="lesson_prompt").set_value("Still?")
    at.text_area(key="lesson_choices").set_value("one")
    at.button(key="FormSubmitter:lesson_add-Save to step 1").click()
    run_ok(at)
    assert any("Step 1 not changed" in w and "choices must be a list of 2 to 8" in w for w in warnings(at))
    assert at.session_state["lesson"].steps[0] == first


@pytest.mark.parametrize(
    "fields,message",
    [
        (dict(prompt="Which?", choices="only one"), "choices must be a list of 2 to 8"),
        (dict(prompt="Which?", choices="a\nb", right=3), "right must be the index of the right choice, 0 to 1"),
        (dict(prompt="<b>Which?</b>", choices="a\nb"), "prompt holds < or >"),
        (dict(note="<script>alert(1)</script>"), "note holds < or >"),
        (dict(prompt="Which?", choices="a\na"), "the same choice twice"),
    ],
)
def test_a_bad_typed_question_is_not_added_and_says_why(fields, message):
    at = run_ok(app(PLAYGROUND, {"seq_len": "6"}))
    add(at, **fields)
    assert "lesson" not in at.session_state
    assert any(message in w for w in warnings(at)), warnings(at)


def test_markup_in_a_title_is_refused_and_the_title_stays():
    at = run_ok(app(PLAYGROUND, {"seq_len": "6"}))
    add(at)
    at.text_input(key="lesson_title").set_value("<img src=x onerror=alert(1)>")
    run_ok(at)
    assert at.session_state["lesson"].title == "My lesson"
    assert any("Not renamed" in w and "< or >" in w for w in warnings(at))
    at.text_input(key="lesson_title").set_value("Why scale?")
    run_ok(at)
    assert "Why scale?" in bar(at)


def test_the_shipped_lesson_opens_at_its_first_step_and_a_lesson_link_at_its_step():
    at = run_ok(app(PLAYGROUND, {"seq_len": "6"}))
    open_box(at).button(key="lesson_shipped").click()
    run_ok(at)
    shipped = L.read_lesson(L.SHIPPED.read_bytes())
    assert bar(at).endswith(f"step 1 of {len(shipped.steps)}") and "Step by step" in at.title[0].value
    link = L.step_link(shipped, 2, "http://x")
    page = "pages/" + link.split("/")[3].split("?")[0] + ".py"
    other = run_ok(app(page, query(link)))
    assert bar(other).endswith(f"step 3 of {len(shipped.steps)}") and not warnings(other)


@pytest.mark.parametrize("value", ["nonsense", "eJzLSM3JyQcABiwCFQ", "x" * 3000])
def test_a_bad_lesson_link_says_what_is_wrong_and_the_page_works(value):
    at = run_ok(app(PLAYGROUND, {"seq_len": "6", "lesson": value, "lesson_step": "2"}))
    assert any(w.startswith("Lesson link:") for w in warnings(at)) and bar(at) == ""
    assert "lesson" not in at.query_params and at.query_params["seq_len"] == "6"


def test_a_hand_made_question_link_with_markup_is_refused_as_text():
    bad = encode_question(L.StepQuestion("fine", ("a", "b"), 0)).replace("e", "f")
    at = run_ok(app(PLAYGROUND, {"seq_len": "6", "ask": bad}))
    assert any(w.startswith("Link: ask=") for w in warnings(at))
    with pytest.raises(L.LessonError, match="< or >"):
        import base64
        import json
        import zlib

        raw = zlib.compress(json.dumps(["<script>x</script>", ["a", "b"], 0]).encode())
        decode_question(base64.urlsafe_b64encode(raw).decode().rstrip("="))


def test_in_a_class_the_teachers_steps_move_the_class_and_the_answers_file_counts_them(fresh_store):  # noqa: F811
    teacher, students_link, _ = start_class()
    add(teacher, prompt="Which head is sharper?", choices="head 1\nhead 2", right=2)
    teacher.slider(key="ctl_seq_len").set_value(9)
    run_ok(teacher)
    add(teacher, note="Now with 9 tokens.")
    assert bar(teacher).endswith("step 2 of 2") and any(
        "Your class follows your steps" in c.value for c in teacher.caption
    )
    assert "lesson=" not in fresh_store.link(query(students_link)["class"]), "the students' link has no lesson"
    students = [Browser().open(PLAYGROUND, query(students_link)) for _ in range(3)]
    teacher.button(key="lesson_back").click()  # step 1: its typed question
    run_ok(teacher)
    for i, s in enumerate(students):
        run_ok(s)  # (a server pushes the move; AppTest's next run of the page adopts it)
        assert s.query_params["seq_len"] == "6" and "ask" in s.query_params and "lesson" not in s.query_params
        assert bar(s) == "" and not [b for b in s.button if b.key and b.key.startswith("lesson_")], "no lesson tools"
        key = next(r.key for r in s.radio if r.key and r.key.startswith("pulse_check_"))
        s.radio(key=key).set_value(1 if i else 0)
        run_ok(s)
    run_ok(teacher)
    rows = list(csv.DictReader(io.StringIO(teacher_csv(teacher, fresh_store))))
    asked = [r for r in rows if r["question"] == "Which head is sharper?"]
    assert [(r["step"], r["choice"], r["count"], r["right"]) for r in asked] == [
        ("1", "head 1", "1", "no"),
        ("1", "head 2", "2", "yes"),
    ]
    assert all(r["step"] in ("", "1", "2") for r in rows)


def teacher_csv(teacher, store) -> str:
    """What the teacher's download button holds: the answers file of the class, as the page makes it."""
    from ui.classroom.pulse import MEMBER

    m = teacher.session_state[MEMBER][1]
    return L.answers_csv(store.tally(m.code, m.token), dict(teacher.session_state["lesson_qids"]))


def test_a_csv_cell_that_starts_like_a_formula_is_text():
    from classpulse.model import Question, Tally

    q = Question("0" * 16, "Playground", "=1+1", ("-2", "@x"), 0)
    text = L.answers_csv([Tally(q, (3, 4), True, 1.0)], {"0" * 16: 2})
    assert text.splitlines() == [
        "step,page,question,choice,count,right",
        "2,Playground,'=1+1,'-2,3,yes",
        "2,Playground,'=1+1,'@x,4,no",
    ]
