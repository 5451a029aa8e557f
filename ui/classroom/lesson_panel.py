"""A lesson on the pages: the step bar under the title, the step's own question, and the sidebar's Lesson box.

- **The step bar** (:func:`lesson_bar`, under every page's title while a lesson is open): the lesson's title, "step 2
  of 7", the step's note, Back and Next. Next opens the next step's page with its whole setting as a new session
  would (ui/classroom/follow.py's ``open_place``); in a class the teacher's page is the class's, so the class follows
  the teacher's step. "Step 2 again" opens the step's setting again after the teacher changed it.
- **The step's question** (:func:`asked_question`): a question the teacher typed travels in the link (``ask=``), so
  that every student's page draws it under the title, a class counts it and the teacher reveals it like the
  pages' own questions (ui/classroom/pulse_questions.choice_question). It is shown as text, never as markup.
- **The Lesson box** (:func:`lesson_box`, in the sidebar under the share box): "Add this what-if to my lesson" with
  the page's own prediction or a typed question, the steps (go to, move up or down, remove), the title, the lesson
  as a file to download and as a link (when it fits), a lesson file to open, and the shipped lesson.

The lesson lives in the session (and in the teacher's address bar, ``lesson=`` and ``lesson_step=``, when it fits a link,
so that a reload keeps it); the students' link of a class never carries it (ui/classroom/pulse.class_links): a
student follows the teacher's page and cannot move the class or edit the lesson.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import replace

import streamlit as st

from classpulse.model import question_id
from ui.classroom import lesson as L
from ui.classroom.follow import here, open_place
from ui.classroom.pulse import CURRENT, membership
from ui.classroom.pulse_questions import choice_question, page_name
from ui.session.links import link_options, parse_link_options
from ui.text import md_escape

LESSON, STEP, QIDS, PARAM = "lesson", "lesson_step", "lesson_qids", "lesson_param"
GO = "lesson_go_to"  # a step the Lesson box asked to open (its widgets' callbacks cannot switch pages)
ASK = "ask"
IGNORED = frozenset({*L.NOT_IN_A_LESSON, "view", "classroom", ASK})  # not part of what a step shows


def encode_question(q: L.StepQuestion) -> str:
    raw = json.dumps([q.prompt, list(q.choices), q.right], ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_question(value: object) -> L.StepQuestion:
    """The question of a link's ``ask=``; LessonError says what is wrong."""
    if not isinstance(value, str) or not value or len(value) > 1200:
        raise L.LessonError("ask= must be a question made by a lesson's step")
    try:
        raw = zlib.decompressobj().decompress(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), 16384)
        prompt, choices, right = json.loads(raw.decode("utf-8"))
    except (ValueError, TypeError, zlib.error, UnicodeDecodeError):
        raise L.LessonError("ask= is not a question (cut short, or changed by hand?)") from None
    question = L._question({"prompt": prompt, "choices": choices, "right": right}, "ask=")
    assert question is not None
    return question


def current() -> tuple[L.Lesson | None, int]:
    lesson = st.session_state.get(LESSON)
    return lesson, min(max(int(st.session_state.get(STEP, 0)), 0), len(lesson.steps) - 1) if lesson else 0


def step_params(lesson: L.Lesson, k: int) -> dict[str, str]:
    """The link parameters that open step ``k``: its setting, its question, this session's class and view, and the
    lesson itself when it fits a link."""
    step = lesson.steps[k]
    params = step.params()
    if step.question is not None:
        params[ASK] = encode_question(step.question)
    opts = link_options()
    if opts.class_code:
        params["class"] = opts.class_code
        params.setdefault("classroom", "lock" if opts.classroom == "lock" else "1")
    if opts.projector:
        params["view"] = "projector"
    if L.step_link(lesson, k):
        params.update(lesson=lesson.to_param(), lesson_step=str(k + 1))
    return params


def go(k: int) -> None:
    """Open step ``k`` of the session's lesson (stops the run). The teacher stays the class's teacher."""
    lesson, _ = current()
    if lesson is None:
        return
    k = min(max(k, 0), len(lesson.steps) - 1)
    st.session_state[STEP] = k
    params = step_params(lesson, k)
    token = link_options().teacher
    options = replace(parse_link_options(params)[0], teacher=token)
    open_place(lesson.steps[k].page, params, options)


def at_step(step: L.Step) -> bool:
    """Whether this run's page shows ``step``: its page, and every parameter the step names."""
    page, shown = here()
    shown = dict(shown)
    return page == step.page and all(shown.get(k) == v for k, v in step.query if k not in IGNORED)


def read_link() -> None:
    """A run whose address carries ``lesson=`` (a shared lesson link, the teacher's reload) opens it, once."""
    raw = st.query_params.get("lesson")
    if not raw or st.session_state.get(PARAM) == raw:
        return
    st.session_state[PARAM] = raw
    try:
        lesson = L.from_param(raw)
    except L.LessonError as exc:
        st.warning(f"Lesson link: {exc}. The page works without the lesson.", icon=":material/warning:")
        del st.query_params["lesson"]
        return
    try:
        k = int(st.query_params.get("lesson_step", "1")) - 1
    except ValueError:
        k = 0
    st.session_state[LESSON] = lesson
    st.session_state[STEP] = min(max(k, 0), len(lesson.steps) - 1)


def asked_question() -> None:
    """The question a lesson's step asks (``ask=`` in the link), under the title, for everyone on the page."""
    raw = st.query_params.get(ASK)
    if raw is None:
        return
    try:
        q = decode_question(raw)
    except L.LessonError as exc:
        st.warning(f"Link: {exc}; the page works without it.", icon=":material/warning:")
        return
    with st.container(border=True, key="lesson_ask"):
        st.markdown(f"**:material/quiz: Your teacher asks:** {md_escape(q.prompt)}")
        choice_question(q.prompt, f"The right answer: **{md_escape(q.choices[q.right])}**.", q.choices, q.right)


def asked_qid() -> str | None:
    """The id of the class question that ``ask=`` makes on this page (as choice_question makes it), or None."""
    try:
        q = decode_question(st.query_params.get(ASK))
    except L.LessonError:
        return None
    return question_id("check", page_name(), q.prompt, tuple(q.choices), q.right)


def lesson_bar() -> None:
    """Under the title, for whoever opened the lesson (never a student of a class): the step bar."""
    read_link()
    if GO in st.session_state and st.session_state.get(LESSON) is not None:
        go(int(st.session_state.pop(GO)))  # stops the run: the step's page opens
    st.session_state.pop(GO, None)
    lesson, k = current()
    m = membership()
    if lesson is None or (m is not None and not m.teacher):
        return
    step = lesson.steps[k]
    with st.container(border=True, key="lesson_bar"):
        st.markdown(
            f"**:material/format_list_numbered: {md_escape(lesson.title)}** · step {k + 1} of {len(lesson.steps)}"
        )
        if step.note:
            st.markdown(md_escape(step.note))
        if m is not None:
            st.caption("Your class follows your steps (unless you let them explore freely).")
        back, again, ahead = st.columns(3)
        target = None
        if back.button("Back", key="lesson_back", icon=":material/arrow_back:", disabled=k == 0):
            target = k - 1
        if again.button(  # always there: the run draws the bar before it knows the setting it will end with
            f"Step {k + 1} again",
            key="lesson_again",
            icon=":material/undo:",
            help="Open this step's page with its setting again (after you changed it).",
        ):
            target = k
        last = k == len(lesson.steps) - 1
        if ahead.button("Next", key="lesson_next", icon=":material/arrow_forward:", type="primary", disabled=last):
            target = k + 1
    if target is not None:
        go(target)  # stops the run: the step's page opens


def note_questions() -> None:
    """At the end of a teacher's run at a lesson's step: the questions this page asked belong to that step (the
    class's answers file says so)."""
    lesson, k = current()
    m = membership()
    if lesson is None or m is None or not m.teacher or not at_step(lesson.steps[k]):
        return
    found = st.session_state.setdefault(QIDS, {})
    for qid in (st.session_state.get(CURRENT), asked_qid()):
        if qid:
            found[qid] = k + 1


def write_lesson_link() -> None:
    """At the end of a run: the open lesson and its step in the address bar when it fits a link (a reload keeps
    it), else neither."""
    lesson, k = current()
    if lesson is not None and L.step_link(lesson, k):
        param = lesson.to_param()
        st.session_state[PARAM] = param
        if st.query_params.get("lesson") != param or st.query_params.get("lesson_step") != str(k + 1):
            st.query_params.update(lesson=param, lesson_step=str(k + 1))
        return
    for name in ("lesson", "lesson_step"):
        if name in st.query_params:
            del st.query_params[name]


def _page_label(url_name: str) -> str:
    """The page name a question records for the page at ``url_name`` (as pulse_questions.page_name makes it)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    pages = ctx.pages_manager.get_pages().values() if ctx is not None else ()
    found = next((p for p in pages if p.get("url_pathname", "") == url_name), None)
    return str((found or {}).get("page_name", url_name)).replace("_", " ") or "Home"


def answer_steps() -> dict[str, int]:
    """Question id -> the step of the open lesson that asked it, for the class's answers file: every typed question
    of the lesson (its id is made from the step itself, so a reload of the teacher's page loses none), and the
    pages' own predictions this session saw asked at a step (:func:`note_questions`)."""
    found = dict(st.session_state.get(QIDS, {}))
    lesson, _ = current()
    for k, step in enumerate(lesson.steps if lesson else ()):
        q = step.question
        if q is not None:
            found[question_id("check", _page_label(step.page), q.prompt, tuple(q.choices), q.right)] = k + 1
    return found
