"""The sidebar's Lesson box: write a lesson from the what-ifs on screen, keep it as a file or a link, open one.

"Add this what-if to my lesson" records the page and its whole setting (the address bar's parameters but the
class's, the projector view and the lesson's own) with the page's own prediction, or with a question the teacher
types (a prompt, one choice per line, the right one's number), and a note to read out. The steps can be opened,
moved up or down, removed, and their note and question edited (loaded into the form, saved back); the title
renamed. The lesson downloads as a file (ui/classroom/lesson.py's format)
and, when it fits, as a link; a lesson file opens again (a bad one gets a message naming the step and the field);
the shipped lesson (the six experiments) opens with one button. A student of a class sees no box: the teacher's
steps move their page.
"""

from __future__ import annotations

import re

import streamlit as st

from ui.classroom import lesson as L
from ui.classroom.follow import here
from ui.classroom.lesson_panel import GO, IGNORED, LESSON, STEP, current
from ui.classroom.pulse import membership
from ui.text import md_escape

_ERROR, _HERE = "lesson_error", "lesson_here"


def _here_step(note: str, prompt: str, choices: str, right: int, where: L.Step | None = None) -> L.Step:
    """A step of the form's note and question (validated: LessonError says what is wrong) at ``where``'s page and
    setting, or at the page the box was drawn on and its setting (the address the browser sent, which the page's
    last run, whole or its body alone, wrote). A callback runs before the page does: the run that drew the box
    noted which page it was (:func:`lesson_box`)."""
    if where is not None:
        page, query = where.page, where.params()
    else:
        page = st.session_state.get(_HERE, "")
        query = {k: v for k, v in st.query_params.to_dict().items() if k not in IGNORED}  # as the browser has it
    raw: dict = {"page": page, "query": query, "note": note}
    if prompt.strip():
        labels = [c.strip() for c in choices.splitlines() if c.strip()]
        raw["question"] = {"prompt": prompt, "choices": labels, "right": right - 1}
    data = {"format": L.FORMAT, "version": L.VERSION, "title": "x", "steps": [raw]}
    return L.parse_lesson(data).steps[0]


def _add(title: str) -> None:
    s = st.session_state
    try:
        step = _here_step(s["lesson_note"], s["lesson_prompt"], s["lesson_choices"], int(s["lesson_right"]))
    except L.LessonError as exc:
        s[_ERROR] = f"Not added: {exc}."
        st.rerun()
    lesson, _ = current()
    steps = (*(lesson.steps if lesson else ()), step)
    if len(steps) > L.MAX_STEPS:
        s[_ERROR] = f"Not added: a lesson has at most {L.MAX_STEPS} steps."
        st.rerun()
    s[LESSON] = L.Lesson(lesson.title if lesson else title, steps)
    s[STEP] = len(steps) - 1
    for key in ("lesson_note", "lesson_prompt", "lesson_choices"):
        s[key] = ""
    st.rerun()  # the whole page: the step bar shows the new step


def _save(k: int) -> None:
    """The form's note and question replace step ``k``'s (its page and setting stay)."""
    s = st.session_state
    lesson, _ = current()
    try:
        step = _here_step(
            s["lesson_note"], s["lesson_prompt"], s["lesson_choices"], int(s["lesson_right"]), lesson.steps[k]
        )
    except L.LessonError as exc:
        s[_ERROR] = f"Step {k + 1} not changed: {exc}."
        st.rerun()
    s[LESSON] = L.Lesson(lesson.title, lesson.steps[:k] + (step,) + lesson.steps[k + 1 :])
    for key in ("lesson_note", "lesson_prompt", "lesson_choices"):
        s[key] = ""
    st.rerun()


def _load(k: int) -> None:
    """Step ``k``'s note and question into the form, to edit them."""
    lesson, _ = current()
    step, s = lesson.steps[k], st.session_state
    q = step.question
    s["lesson_note"] = step.note
    s["lesson_prompt"] = q.prompt if q else ""
    s["lesson_choices"] = "\n".join(q.choices) if q else ""
    s["lesson_right"] = q.right + 1 if q else 1
    st.rerun()


def _retitle() -> None:
    lesson, _ = current()
    try:
        title = L._text(st.session_state["lesson_title"], "the title", L.MAX_TITLE)
    except L.LessonError as exc:
        st.session_state[_ERROR] = f"Not renamed: {exc}."
        st.session_state["lesson_title"] = lesson.title
        st.rerun()
    st.session_state[LESSON] = L.Lesson(title, lesson.steps)
    st.rerun()


def _move(k: int, by: int) -> None:
    lesson, at = current()
    steps = list(lesson.steps)
    j = k + by
    if 0 <= j < len(steps):
        steps[k], steps[j] = steps[j], steps[k]
        st.session_state[LESSON] = L.Lesson(lesson.title, tuple(steps))
        st.session_state[STEP] = j if at == k else k if at == j else at
        st.session_state["lesson_pick"] = j
    st.rerun()


def _remove(k: int) -> None:
    lesson, at = current()
    steps = lesson.steps[:k] + lesson.steps[k + 1 :]
    if not steps:
        for key in (LESSON, STEP):
            st.session_state.pop(key, None)
        st.rerun()
    st.session_state[LESSON] = L.Lesson(lesson.title, steps)
    st.session_state[STEP] = min(at if at < k else max(at - 1, 0), len(steps) - 1)
    st.session_state["lesson_pick"] = min(k, len(steps) - 1)
    st.rerun()


def step_label(k: int, step: L.Step) -> str:
    what = step.question.prompt if step.question else step.note or "the page's own question"
    return f"{k + 1}. {(step.page or 'Home').replace('_', ' ')}: {what}"[:70]


def lesson_box(box) -> None:
    """The sidebar's Lesson box (not for a student of a class)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run:  # a body-only rerun: the box of the page's full run stays
        return
    m = membership()
    if m is not None and not m.teacher:
        return
    lesson, at = current()
    st.session_state[_HERE] = here()[0]
    expander = box.expander("Lesson", icon=":material/format_list_numbered:", key="lesson_open", on_change=_full)
    if not expander.open:  # drawn only when opened: a page carries none of its widgets until then
        return
    with expander:
        error = st.session_state.pop(_ERROR, None)
        if error:
            st.warning(error, icon=":material/warning:")
        if lesson is not None:
            _steps(lesson, at)
        with st.form("lesson_add", border=False):
            st.markdown("**Add this what-if to my lesson**")
            st.text_input("Note to read out (optional)", key="lesson_note", max_chars=L.MAX_NOTE)
            st.text_input("Your question (empty: the page's own prediction)", key="lesson_prompt", max_chars=200)
            st.text_area("Its choices, one per line (2 to 8)", key="lesson_choices", height=90)
            st.number_input("The right choice's number", min_value=1, max_value=L.MAX_CHOICES, key="lesson_right")
            st.form_submit_button(
                "Add this what-if to my lesson", icon=":material/playlist_add:", on_click=_add, args=("My lesson",)
            )
            if lesson is not None:  # edit: the note and question of the step picked above (its setting stays)
                k = min(int(st.session_state.get("lesson_pick", 0)), len(lesson.steps) - 1)
                st.form_submit_button(f"Save to step {k + 1}", icon=":material/edit:", on_click=_save, args=(k,))
        _keep_and_open(lesson, at)


def _full() -> None:
    """A widget of the box changed (it is drawn with the page's body): the whole page runs, not the body alone
    (ui/session/partial.py), so that the box and the step bar are drawn for it."""
    st.rerun()


def _go(k: int) -> None:
    st.session_state[GO] = k
    st.rerun()  # the step bar, at the top of the full run, opens it (ui/classroom/lesson_panel.lesson_bar)


def _open(lesson: L.Lesson) -> None:
    st.session_state[LESSON], st.session_state[STEP] = lesson, 0
    _go(0)


def _shipped() -> None:
    _open(L.read_lesson(L.SHIPPED.read_bytes()))


def _uploaded() -> None:
    uploaded = st.session_state.get("lesson_upload")
    if uploaded is None:
        return
    try:
        opened = L.read_lesson(uploaded.getvalue())
    except L.LessonError as exc:
        st.session_state[_ERROR] = f"Not opened: {md_escape(uploaded.name[:60])}: {exc}."
        st.rerun()
    _open(opened)


def _steps(lesson: L.Lesson, at: int) -> None:
    st.text_input("Title", value=lesson.title, key="lesson_title", on_change=_retitle, max_chars=L.MAX_TITLE)
    st.markdown(
        "\n".join(
            f"{'**' if k == at else ''}{md_escape(step_label(k, s))}{'**' if k == at else ''}  "
            for k, s in enumerate(lesson.steps)
        )
    )
    n = len(lesson.steps)
    if st.session_state.get("lesson_pick", 0) >= n:
        st.session_state["lesson_pick"] = n - 1
    k = st.selectbox(
        "Step", range(n), format_func=lambda i: step_label(i, lesson.steps[i]), key="lesson_pick", on_change=_full
    )
    go_to, up, down, drop = st.columns(4)
    go_to.button("Open", key="lesson_go", icon=":material/play_arrow:", on_click=_go, args=(k,))
    up.button("Up", key="lesson_up", icon=":material/arrow_upward:", disabled=k == 0, on_click=_move, args=(k, -1))
    down.button(
        "Down", key="lesson_down", icon=":material/arrow_downward:", disabled=k == n - 1, on_click=_move, args=(k, 1)
    )
    drop.button("Remove", key="lesson_remove", icon=":material/delete:", on_click=_remove, args=(k,))
    st.button(
        f"Edit step {k + 1}'s note and question",
        key="lesson_edit",
        icon=":material/edit_note:",
        on_click=_load,
        args=(k,),
        help=f"Puts them into the form below; change them there and press Save to step {k + 1}.",
    )


def _keep_and_open(lesson: L.Lesson | None, at: int) -> None:
    if lesson is not None:
        slug = re.sub(r"[^a-z0-9]+", "-", lesson.title.lower()).strip("-")[:40] or "lesson"
        st.download_button(
            "Download the lesson (a file to open again)",
            lesson.to_json(),
            file_name=f"{slug}.json",
            mime="application/json",
            icon=":material/download:",
            key="lesson_download",
        )
        link = L.step_link(lesson, at, st.context.url.rsplit("/", 1)[0] if st.context.url else "")
        if link:
            st.code(link, language=None, wrap_lines=True)
            st.caption(f"The lesson's link, at step {at + 1} ({len(link)} characters).")
        else:
            st.caption(f"Too long for a link (more than {L.MAX_LINK} characters): share the file.")
    st.file_uploader("Open a lesson file", type=["json"], key="lesson_upload", on_change=_uploaded)
    st.button(
        "Open the shipped lesson (six experiments)", key="lesson_shipped", icon=":material/school:", on_click=_shipped
    )
