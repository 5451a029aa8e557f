"""A lesson the class follows, in Chromium: the teacher opens a lesson file in the sidebar's Lesson box, and six
students (two on phones, touch) follow its three steps; every student's page goes there unasked and draws it
without an error; they answer the step's typed question; one student explores alone and stays where they are,
then taps "Follow my teacher" and is at the teacher's step; the teacher reloads mid-lesson and the lesson and the
class go on; the class's answers file counts what was sent. How long each step took to reach the last student's
page is printed (no timing is asserted: the machine is shared).
"""

from __future__ import annotations

import contextlib
import csv
import io
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from harness.server import wait_for_address, wait_for_app
from tests.a11y_util import assert_accessible
from tests.page_pool import load_app
from tests.test_browser import assert_no_errors, horizontal_overflow
from tests.test_browser_pulse import PHONE, SETTING, browser_tab, start_class, wait_text
from ui.classroom import lesson as L

pytestmark = [pytest.mark.browser, pytest.mark.slow]
IGNORED = {"teacher", "view", "join", "classroom", "lesson", "lesson_step"}  # who looks, and the teacher's lesson


def place(url: str) -> tuple[str, dict]:
    parts = urlsplit(url)
    return parts.path.rstrip("/"), {k: v for k, v in parse_qsl(parts.query) if k not in IGNORED}


def wait_at(page, teacher, timeout_s: float = 90.0) -> None:
    """Wait until ``page`` shows the page and setting the teacher's page shows and has drawn it (the teacher's
    address is read again each time: the end of a run writes the whole setting into it)."""
    end = time.monotonic() + timeout_s
    while place(page.url) != place(teacher.url):
        assert time.monotonic() < end, f"still at {page.url}, not at {teacher.url}"
        page.wait_for_timeout(50)
    # drawn as a page opened by its link is (tests/page_pool.load_app): a page that the teacher's step sent to a new
    # document and that drew nothing on a busy machine (a blank document: Chromium did not get Streamlit's scripts
    # in 45 s, seen in CI with seven browsers on two cores), or failed to fetch a chunk, is loaded once more
    load_app(page, None)


def step(teacher, students: list, act, tmp, name: str) -> float:
    """The teacher does ``act()``; every student's page gets to the teacher's page and setting. Returns the seconds
    from the act until the last student's URL was the teacher's."""
    before, t0 = teacher.url, time.monotonic()
    act()
    wait_for_address(teacher, lambda url: url != before, timeout=60000)
    wait_for_app(teacher)
    for page in students:
        wait_at(page, teacher)
    last = time.monotonic() - t0
    for i, page in enumerate(students):
        assert_no_errors(page)
        assert "You are in class" in page.inner_text('[data-testid="stMain"]')
        page.screenshot(path=str(tmp / f"follow-{name}-{i}.png"))
    return last


def lesson_file(tmp) -> tuple[str, L.Lesson]:
    """Three steps: the Playground with a typed question, Multi-head at seq_len 7, Masks."""
    q = L.StepQuestion("Which head is sharper at this setting?", ("head 1", "head 2"), 0)
    setting = tuple(parse_qsl(SETTING))
    lesson = L.Lesson(
        "Three steps",
        (
            L.Step("Playground", setting, "Predict first, then we reveal.", q),
            L.Step("Multi-head", (*[(k, v) for k, v in setting if k != "seq_len"], ("seq_len", "7"))),
            L.Step("Masks", setting, "Now the masks."),
        ),
    )
    path = tmp / "three-steps.json"
    path.write_text(lesson.to_json(), encoding="utf-8")
    return str(path), lesson


def bar_text(page) -> str:
    box = page.locator(".st-key-lesson_bar")
    return box.inner_text() if box.count() else ""


def test_six_students_follow_three_steps_of_a_lesson(browser_and_base, tmp_path):
    """The teacher opens a lesson file; six students (two phones) follow its steps; one explores alone, stays, and
    rejoins; the teacher reloads mid-lesson; the class's answers file counts what was sent."""
    browser, base = browser_and_base
    took = {}
    path, lesson = lesson_file(tmp_path)
    with contextlib.ExitStack() as stack:
        teacher_ctx, teacher = stack.enter_context(browser_tab(browser, f"{base}/Playground?{SETTING}"))
        students_link, _ = start_class(teacher)
        students = [  # the class joins, then the teacher opens the lesson: its first step moves them
            stack.enter_context(browser_tab(browser, students_link, **(PHONE if i >= 4 else {})))[1] for i in range(6)
        ]
        for page in students:
            wait_text(page, "Your page follows your teacher's")
        sidebar = teacher.locator('[data-testid="stSidebar"]')
        sidebar.locator('[data-testid="stExpander"] summary').filter(
            has_text="Lesson"
        ).click()  # the Lesson box: opened, it draws its widgets
        uploader = sidebar.locator('[data-testid="stFileUploaderDropzoneInput"]')
        uploader.wait_for(state="attached", timeout=60000)
        uploader.set_input_files(path)
        wait_text(teacher, "step 1 of 3")
        wait_for_app(teacher)
        assert "Predict first, then we reveal." in bar_text(teacher) and "Your class follows your steps" in bar_text(
            teacher
        )
        for page in students:  # at the teacher's step: its typed question under the title, no lesson tools
            wait_at(page, teacher)
            wait_text(page, "Your teacher asks: Which head is sharper at this setting?")
            assert "lesson=" not in page.url and bar_text(page) == ""
            assert page.locator(".st-key-lesson_open").count() == 0, "a student has no Lesson box"
        loner, followers = students[0], students[1:]
        sent = {"head 1": 0, "head 2": 0}
        for i, page in enumerate(followers):
            choice = "head 1" if i < 3 else "head 2"
            page.locator(".st-key-lesson_ask").get_by_text(choice, exact=True).click()
            wait_text(page, "Sent: you chose")
            sent[choice] += 1
        loner.get_by_role("button", name="Explore alone").click()
        wait_text(loner, "You explore alone")
        wait_for_app(loner)
        alone_at = loner.url

        next_step = lambda: teacher.locator(".st-key-lesson_bar").get_by_role("button", name="Next").click()  # noqa: E731
        took["step 2 (Multi-head, seq_len 7)"] = step(teacher, followers, next_step, tmp_path, "step2")
        assert all("/Multi-head" in p.url and "seq_len=7" in p.url for p in followers)
        assert place(loner.url) == place(alone_at), "a student who explores alone is never moved"

        teacher.reload()  # the teacher's laptop reloads mid-lesson: the lesson and the class go on
        load_app(teacher, None)
        assert "step 2 of 3" in bar_text(teacher)
        took["step 3 after the teacher's reload (Masks)"] = step(teacher, followers, next_step, tmp_path, "step3")

        loner.get_by_role("button", name="Follow my teacher").click()  # one tap: at the teacher's step
        wait_at(loner, teacher)
        assert "Your page follows your teacher's" in loner.inner_text('[data-testid="stMain"]')

        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download the class's answers (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
        asked = {r["choice"]: int(r["count"]) for r in rows if r["question"] == lesson.steps[0].question.prompt}
        assert asked == sent, (asked, sent)
        assert {r["step"] for r in rows if r["question"] == lesson.steps[0].question.prompt} == {"1"}

        for page in students:
            assert_no_errors(page)
        assert_no_errors(teacher)
        assert not horizontal_overflow(students[-1]), horizontal_overflow(students[-1])
        students[-1].screenshot(path=str(tmp_path / "follow-phone.png"), full_page=True)
        teacher.screenshot(path=str(tmp_path / "follow-teacher.png"), full_page=True)
        assert_accessible(students[-1], "a phone student's page that follows the teacher")
        assert_accessible(teacher, "the teacher's page in a lesson with a class")
        teacher_ctx.pages[0].set_viewport_size({"width": 1400, "height": 1000})
        teacher.screenshot(path=str(tmp_path / "follow-teacher-1400.png"))
    print("the last of five students' pages at the teacher's step, seconds after the teacher's Next:", took)
