"""Class pulse on the pages (AppTest): a teacher starts a class, students answer, the tally counts them, a change of
mind replaces an answer, the reveal reaches the students; ended classes, hostile codes and teacher tokens in links,
and a store that goes away. Each AppTest is one browser tab; they share the process's store as a server's do.
(The refresh by itself, fragments with run_every, is tested over the protocol: tests/test_pulse_live.py.)
"""

from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

import ui.classroom.pulse
import ui.classroom.pulse_device
from attention_core.readout import SHARPNESS_LEVELS
from benchmarks.pulse_client import TALLY_LINE
from classpulse import Outcome, SQLiteStore
from tests.apptest_util import PAGES, app, chart_titles, run_ok, texts
from ui.session.links import parse_link_options
from ui.skeleton.page import PROJECTOR_CSS

PLAYGROUND = "pages/Playground.py"
SETTING = {"seq_len": "6", "d_model": "16", "heads": "2", "seed": "3"}
CHOICES = ("sharper", "softer", "the same")  # the Playground's question: head 1 with the scaling flipped
ANSWER = 0  # scaled now with d_k = 8: unscaled, the rows get sharper (a temperature of √8 undone)
LABELS = [f"#{i + 1} {c}" for i, c in enumerate(CHOICES)]  # the tally's bars


class FlakyStore(SQLiteStore):
    """An embedded store that a test can take away (every call UNAVAILABLE while ``down``) and bring back."""

    down = False

    def _call(self, fn, *args):
        return Outcome.UNAVAILABLE if self.down else super()._call(fn, *args)


class Clock:
    def __init__(self):
        self.now = time.time()

    def __call__(self):
        return self.now


_JAR: list[dict] = [{}]  # the cookies of the browser whose tab runs now (AppTest has none of its own)


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch):
    store = FlakyStore(":memory:", clock=Clock())
    ui.classroom.pulse.set_store(store)
    _JAR[0] = {}
    monkeypatch.setattr(ui.classroom.pulse_device, "browser_cookie", lambda name: _JAR[0].get(name, ""))
    yield store
    ui.classroom.pulse.set_store(None)


class Browser:
    """One browser: its tabs share its cookies, which a tab's page asks it to keep (ui/classroom/pulse_device.py's module
    writes them in a real browser; here each run copies them into the jar). A new tab or a reload is a new
    AppTest (a new session) that sends the jar's cookies."""

    def __init__(self):
        self.jar: dict[str, str] = {}

    def open(self, page: str, params: dict) -> AppTest:
        return self.run(app(page, params))

    def run(self, at: AppTest) -> AppTest:
        _JAR[0] = self.jar
        run_ok(at)
        self.jar.update(at.session_state["pulse_cookies"] if "pulse_cookies" in at.session_state else {})
        return at


def query(link: str) -> dict:
    return dict(parse_qsl(urlsplit(link).query))


def start_class(page: str = PLAYGROUND, params: dict | None = None) -> tuple:
    """A teacher opens the page, starts a class; returns (teacher AppTest, student link, teacher link)."""
    teacher = run_ok(app(page, SETTING if params is None else params))
    teacher.button(key="pulse_start").click()
    run_ok(teacher)
    codes = [c.value for c in teacher.sidebar.code]
    assert len(codes) == 1 and "class=" in codes[0] and "classroom=lock" in codes[0] and "teacher=" not in codes[0]
    teacher.toggle(key="pulse_show_teacher").set_value(True)
    run_ok(teacher)
    codes = [c.value for c in teacher.sidebar.code]
    assert len(codes) == 2, "the share box offers the students' link and the teacher's, and no other"
    student_link, teacher_link = codes
    assert "teacher=" not in student_link and "classroom=lock" in student_link and "teacher=" in teacher_link
    teacher.toggle(key="pulse_show_teacher").set_value(False)
    run_ok(teacher)
    return teacher, student_link, teacher_link


def tally(at) -> dict[str, int]:
    """The teacher's bars: choice label -> answers (each bar's line of text says its count)."""
    found = {}
    for m in at.markdown:
        line = TALLY_LINE.match(str(m.value))
        if line:
            found[line.group(1)] = int(line.group(2))
    assert found, "no tally on the teacher's page"
    return found


def predict(student, choice: int, page: str = "playground.twin"):
    student.radio(key=f"guess_{page}").set_value(choice)
    student.button(key=f"pulse_send_{page}").click()
    return run_ok(student)


def weights_shown(at) -> bool:
    return any(t.startswith("head ") for t in chart_titles(at))


def test_students_answer_the_teacher_sees_the_tally_and_reveals_it():
    teacher, student_link, teacher_link = start_class()
    assert "teacher=" not in teacher.sidebar.code[0].value, "the page's own share link never carries the token"
    assert teacher.query_params["class"] == query(student_link)["class"]
    run_ok(teacher)  # the tally lists the question the teacher's page asks, before any answer
    assert tally(teacher) == dict.fromkeys(LABELS, 0)
    assert "right answer stays hidden" in texts(teacher) and not weights_shown(teacher)

    students = [run_ok(app(PLAYGROUND, query(student_link))) for _ in range(3)]
    for s in students:
        shown = texts(s)
        assert "You are in class" in shown and "Predict first" in shown and not weights_shown(s)
        assert not [t for t in s.sidebar.toggle if t.key == "classroom_on"], "the student link locks classroom mode"
        assert all("teacher=" not in c.value for c in s.sidebar.code)
    wrong = (ANSWER + 1) % 3
    for s, choice in zip(students, [ANSWER, wrong, wrong]):
        predict(s, choice)
        assert "Sent: you chose" in texts(s) and not weights_shown(s), "the weights wait for the teacher"
    run_ok(teacher)
    counts = tally(teacher)
    assert counts[LABELS[ANSWER]] == 1 and counts[LABELS[wrong]] == 2
    assert sum(counts.values()) == 3 and "**3** answers so far" in texts(teacher)

    predict(students[2], ANSWER)  # a change of mind replaces the answer
    assert "Change my prediction" in [b.label for b in students[2].button]
    run_ok(teacher)
    counts = tally(teacher)
    assert counts[LABELS[ANSWER]] == 2 and counts[LABELS[wrong]] == 1

    pending = students[0].session_state["pulse_pending"]
    assert len(pending) == 1, "the student's watcher waits for this question"
    teacher.button(key="pulse_reveal").click()
    run_ok(teacher)
    assert f"Revealed: **2 of 3** (67%) chose **{LABELS[ANSWER]}**, the right answer." in texts(teacher)
    assert weights_shown(teacher), "the teacher's own page reveals too"
    assert not any(b.key == "pulse_reveal" for b in teacher.button)
    assert ui.classroom.pulse.store().revealed(teacher.query_params["class"], pending) == pending
    for s, right in zip(students, [True, False, True]):
        run_ok(s)  # the next refresh (the watcher reruns the page)
        assert weights_shown(s)
        if right:
            assert any("Right: you predicted **sharper**" in m.value for m in s.success), [m.value for m in s.success]
        else:
            assert any("Not this time" in w.value for w in s.warning)

    late = run_ok(app(PLAYGROUND, query(student_link)))  # a student who joins after the reveal sees the weights
    assert weights_shown(late) and "Predict first" not in texts(late)


def test_a_check_question_with_choices_counts_and_waits_for_the_reveal():
    teacher, student_link, _ = start_class()
    student = run_ok(app(PLAYGROUND, query(student_link)))
    predict(student, ANSWER)
    run_ok(teacher)
    teacher.button(key="pulse_reveal").click()
    run_ok(teacher)
    run_ok(student)  # the weights (and the check questions under them) are shown now
    radio = next(r for r in student.radio if r.key.startswith("pulse_check_"))
    assert list(radio.options) == list(SHARPNESS_LEVELS) and radio.value is None
    radio.set_value(0)
    run_ok(student)
    assert "Sent: you chose **single key**" in texts(student)
    run_ok(teacher)
    (pick,) = [s for s in teacher.selectbox if s.key.startswith("pulse_pick_")]  # two questions: the teacher picks one
    check = next(
        t for t in ui.classroom.pulse.store().tally(*teacher_code_token(teacher)) if "How sharp" in t.question.prompt
    )
    pick.set_value(check.question.qid)
    run_ok(teacher)
    assert tally(teacher)["#1 single key"] == 1 and sum(tally(teacher).values()) == 1
    teacher.button(key="pulse_reveal").click()
    run_ok(teacher)
    run_ok(student)
    shown = texts(student)
    assert "Not quite: the answer is" in shown and "mean max weight" in shown


def teacher_code_token(at) -> tuple[str, str]:
    return at.query_params["class"], at.session_state["link_options"].teacher


def test_a_class_question_outside_a_class_is_a_plain_choice():
    at = run_ok(app(PLAYGROUND, SETTING))
    radio = next(r for r in at.radio if r.key.startswith("pulse_check_"))
    level = next(lv for lv in SHARPNESS_LEVELS if f"Head 1 is **{lv}** here" in texts(at))
    radio.set_value(SHARPNESS_LEVELS.index(level))
    run_ok(at)
    assert any(m.value == f"Right: **{level}**." for m in at.success)


def test_an_ended_class_leaves_the_page_working(fresh_store):
    teacher, student_link, _ = start_class()
    student = run_ok(app(PLAYGROUND, query(student_link)))
    assert "You are in class" in texts(student)
    fresh_store.clock.now += 5 * 3600
    run_ok(student)  # mid-lesson: the class ended
    shown = texts(student)
    assert "has ended" in shown and "You are in class" not in shown
    assert "class" not in student.query_params, "the link no longer names the class"
    assert "Reveal the answer" in [b.label for b in student.button], "classroom mode goes on without the class"
    late = run_ok(app(PLAYGROUND, query(student_link)))
    assert "this class has ended" in texts(late) and not late.exception
    run_ok(teacher)
    assert ":material/co_present:" not in texts(teacher)


HOSTILE_CODES = ["0O1IL", "7QX2", "ABCDEFG", "<script>alert(1)</script>", "**bold**", "é" * 5, "x" * 5000, " "]


@pytest.mark.parametrize("code", HOSTILE_CODES, ids=range(len(HOSTILE_CODES)))
def test_hostile_class_codes_give_a_notice_and_the_page_works(code):
    at = run_ok(app(PLAYGROUND, {**SETTING, "class": code, "classroom": "lock"}))
    shown = texts(at)
    if code.strip():
        assert "is not a class code" in shown
    assert "You are in class" not in shown and "Predict first" in shown
    assert "class" not in at.query_params


def test_a_well_formed_code_of_no_class_gives_a_notice():
    at = run_ok(app(PLAYGROUND, {**SETTING, "class": "23456", "classroom": "lock"}))
    assert "class 23456: there is no class with this code" in texts(at) and "class" not in at.query_params


def hostile_tokens(token: str) -> list[str]:
    return [
        token[:-1] + ("A" if token[-1] != "A" else "B"),  # the right length, one character off
        token[:-1],  # a prefix
        token[:16],
        token + "A",
        "",
        "A" * len(token),
        "é" * len(token),
        "🙂" * 10,
        "x" * 5000,
        "' OR 1=1 --",
    ]


def test_hostile_teacher_tokens_never_open_the_teachers_view():
    teacher, student_link, teacher_link = start_class()
    token = query(teacher_link)["teacher"]
    for guess in hostile_tokens(token):
        at = run_ok(app(PLAYGROUND, {**query(student_link), "teacher": guess}))
        shown = texts(at)
        assert ":material/co_present:" not in shown and not any(b.key == "pulse_reveal" for b in at.button), guess[:30]
        assert "Predict first" in shown and "teacher=" not in "".join(c.value for c in at.sidebar.code)
        if guess:
            assert "teacher" in shown.lower()  # a notice: not a token, or not this class's
            assert guess not in shown or len(guess) < 3, "a notice never repeats what was typed as a token"
    real = run_ok(app(PLAYGROUND, query(teacher_link)))
    assert ":material/co_present: Class" in texts(real), "the real teacher link opens the view"


def test_the_store_going_away_degrades_and_comes_back(fresh_store):
    teacher, student_link, teacher_link = start_class()
    student = run_ok(app(PLAYGROUND, query(student_link)))
    predict(student, ANSWER)
    fresh_store.down = True
    run_ok(teacher)
    assert "the class tally is unavailable" in texts(teacher)
    run_ok(student)
    shown = texts(student)
    assert "unavailable right now, so you predict and reveal on your own" in shown and "Predict first" in shown
    assert student.radio(key="guess_playground.twin").value == ANSWER, "the student's answer is kept"
    student.button(key="reveal_playground.twin").click()
    run_ok(student)
    assert weights_shown(student), "the student's page keeps working"
    newcomer = run_ok(app(PLAYGROUND, query(student_link)))  # a student who opens the link now
    assert not newcomer.exception and "Predict first" in texts(newcomer)
    fresh_store.down = False
    run_ok(teacher)
    assert tally(teacher)[LABELS[ANSWER]] == 1, "what was counted before is still there"


def test_starting_a_class_when_the_store_is_unavailable_says_so(fresh_store):
    fresh_store.down = True
    at = run_ok(app(PLAYGROUND, SETTING))
    at.button(key="pulse_start").click()
    run_ok(at)
    assert "Could not start a class: the class tally is unavailable." in texts(at)
    assert "class" not in at.query_params


def test_link_options_parse_class_and_teacher():
    opts, notices = parse_link_options({"class": " 7qx2k ", "teacher": "abcdefghijklmnop_-12"})
    assert (opts.class_code, opts.teacher, notices) == ("7QX2K", "abcdefghijklmnop_-12", [])
    assert opts.query_params()["class"] == "7QX2K"
    opts, notices = parse_link_options({"teacher": "abcdefghijklmnop_-12"})
    assert opts.teacher == "" and notices == ["teacher= needs the class= of its class; ignored."]
    opts, notices = parse_link_options({"class": "7QX2K", "teacher": "short"})
    assert opts.teacher == "" and "short" not in notices[0]


def tallied(counts, right=2, revealed=True):
    from classpulse import Question, Tally, question_id

    choices = tuple(f"t{i + 1}" for i in range(len(counts)))
    return Tally(
        Question(question_id(len(counts)), "Playground", "Which key?", choices, right), tuple(counts), revealed, 0.0
    )


def test_the_tally_sentence_and_bars_at_the_extremes():
    from ui.classroom.pulse_panel import tally_lines, tally_sentence

    assert tally_sentence(tallied([0, 0, 0], revealed=False)) == (
        "**0** answers so far; the right answer stays hidden until you reveal it."
    )
    assert tally_sentence(tallied([0, 0, 0])) == "Revealed: **#3 t3** was right; nobody had answered."
    assert tally_sentence(tallied([0, 0, 1])) == (
        "**1** answer. Revealed: **1 of 1** (100%) chose **#3 t3**, the right answer."
    )
    assert "**0 of 30** (0%)" in tally_sentence(tallied([30, 0, 0]))
    hidden = tally_lines(tallied([1, 2, 3], revealed=False))
    assert [said for said, _, _ in hidden] == ["**#1 t1** · 1 answer", "**#2 t2** · 2 answers", "**#3 t3** · 3 answers"]
    assert not any(right for *_, right in hidden), "before the reveal the bars do not tell the answer"
    shown = tally_lines(tallied([1, 2, 3]))
    assert [right for *_, right in shown] == [False, False, True]
    assert shown[2][0] == "✓ **#3 t3** · 3 answers · the right answer", "the right one in words, not colour alone"
    many = [0] * 512
    many[7], many[300] = 4, 1
    assert [said for said, *_ in tally_lines(tallied(many, revealed=False))] == [
        "**#8 t8** · 4 answers",
        "**#301 t301** · 1 answer",
    ]
    assert [n for _, n, _ in tally_lines(tallied(many, right=100))] == [4, 0, 1], "the right one even when unchosen"
    assert len(tally_lines(tallied([0] * 16))) == 16, "up to 16 choices every bar is drawn"
    assert tally_lines(tallied([0, 1], right=0))[0][0].startswith("✓ **#1 t1** · 0 answers")


@pytest.mark.slow
@pytest.mark.parametrize("page", ["streamlit_app.py", *PAGES])
def test_every_page_works_in_a_class_for_the_teacher_and_a_student(page, fresh_store, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = fresh_store.start_class()
    student = run_ok(app(page, {"class": started.code.lower(), "classroom": "lock", "teacher": "x" * 40}))
    assert "You are in class" in texts(student) and ":material/co_present:" not in texts(student)
    teacher = run_ok(app(page, {"class": started.code, "teacher": started.token, "view": "projector"}))
    assert f"Class {started.code}" in texts(teacher)
    assert "teacher" not in teacher.query_params, "the token leaves the address bar (a projector shows it)"
    assert started.token not in texts(teacher) and all(started.token not in c.value for c in teacher.code)
    # the projector view's larger type reaches every page (the browser tests measure it on three)
    assert any(m.value == PROJECTOR_CSS for m in teacher.markdown), "view=projector sent no projector style"
    assert not any(m.value == PROJECTOR_CSS for m in student.markdown)


def test_a_teacher_who_opens_the_link_while_the_store_is_away_gets_the_view_when_it_is_back(fresh_store):
    _, student_link, teacher_link = start_class()
    fresh_store.down = True
    teacher = run_ok(app(PLAYGROUND, query(teacher_link)))
    assert "the class tally is unavailable" in texts(teacher)
    fresh_store.down = False
    run_ok(teacher)
    shown = texts(teacher)  # (the test store's clock stands still: 4 h to go)
    assert ":material/co_present: Class" in shown and "ends in 4 h 00 min" in shown


def test_ends_in():
    from ui.classroom.pulse_panel import ends_in

    assert ends_in(3600 * 4, 0) == " · ends in 4 h 00 min"
    assert ends_in(59 * 60 + 59, 0) == " · ends in 59 min"
    assert ends_in(10, 100) == " · ends in 0 min"
    assert ends_in(float("inf"), 0) == ""


def test_a_forged_token_while_the_store_is_away_shows_nothing_and_is_refused_when_it_is_back(fresh_store):
    _, student_link, teacher_link = start_class()
    forged = {**query(student_link), "teacher": "A" * len(query(teacher_link)["teacher"])}
    fresh_store.down = True
    at = run_ok(app(PLAYGROUND, forged))
    shown = texts(at)
    assert "the class tally is unavailable" in shown and "answers so far" not in shown and not tally_charts(at)
    fresh_store.down = False
    run_ok(at)
    shown = texts(at)
    assert "not the one of class" in shown and ":material/co_present:" not in shown and not tally_charts(at)
    assert "teacher" not in at.query_params


def tally_charts(at) -> list:
    return [m for m in at.markdown if TALLY_LINE.match(str(m.value))]
