"""Class pulse on the pages: the process's store, which class a session is in (and as whom), and the share box's
"Start a class".

A teacher presses "Start a class" in the share box (:func:`class_controls`) and gets two links: the students' link
carries ``class=CODE`` (and classroom mode, locked), the teacher's adds ``teacher=TOKEN``. What every page draws
for the class under its title is in ui/classroom/pulse_panel.py (the teacher's tally, the students' reveal watcher); the
questions are in ui/classroom/pulse_questions.py. The store (classpulse/) is one per process; it never raises, and when it
is unavailable the students' pages work as without a class and the teacher's view says so.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit

import streamlit as st

from classpulse import CLASS_HOURS, Outcome, PulseStore, open_store
from classpulse.model import lead_link
from ui.classroom import pulse_push
from ui.classroom.pulse_device import STUDENT_COOKIE, TEACHER_COOKIE, class_cookie, join_address, keep
from ui.session.links import link_options, set_link_options
from ui.session.state import CLASSROOM_KEY, set_kept

MEMBER, NOTICES, PENDING, _VOTER = "pulse_member", "pulse_notices", "pulse_pending", "pulse_voter"
PUSHED = "pulse_pushed"  # this run registered a question's reveal slot with ui/classroom/pulse_push.py
CURRENT, _START_ERROR = "pulse_current", "pulse_start_error"  # the question the teacher's page asks; why no class
_JOIN_LINK = "pulse_join_link"  # the students' link this session last gave the store
FREE_KEY = "follow_free"  # the teacher's switch: students explore freely (ui/classroom/follow.py)

_store: PulseStore | None = None
_store_lock = threading.Lock()


def store() -> PulseStore:
    """The process's store (classpulse.open_store: Redis when AEXP_REDIS_URL is set, else embedded)."""
    global _store
    if _store is None:
        with _store_lock:
            if _store is None:
                _store = open_store()
    return _store


def set_store(new: PulseStore | None) -> None:
    """Replace the process's store (tests; None opens the environment's again on next use)."""
    global _store
    with _store_lock:
        _store = new


def voter() -> str | None:
    """This browser's student id in its class (:func:`student_id`), None outside a class or while the store cannot
    issue one."""
    m = membership()
    return student_id(m.code) if m is not None else None


def student_id(code: str) -> str | None:
    """This browser's student id in class ``code``: the one its cookie holds when the class issued it, else a new
    one, which the browser then keeps (ui/classroom/pulse_device.py); None while the store cannot be asked. An id the class
    did not issue (an edited cookie, one copied from another class) is replaced, with a notice."""
    kept = st.session_state.get(_VOTER)
    if kept and kept[0] == code:
        return kept[1]
    s = store()
    cookie = class_cookie(STUDENT_COOKIE, code)
    if cookie:
        checked = s.check_voter(code, cookie)
        if checked is Outcome.OK:
            st.session_state[_VOTER] = (code, cookie)
            keep(STUDENT_COOKIE, code, cookie)
            return cookie
        if checked is Outcome.UNAVAILABLE:
            return None
        _notice(
            "this browser's student id was not made by this class (an edited or copied cookie), so it has a new one. "
            "If you had answered before, send your answers again: each counts once."
        )
    issued = s.issue_voter(code)
    if isinstance(issued, Outcome):
        return None
    st.session_state[_VOTER] = (code, issued)
    keep(STUDENT_COOKIE, code, issued)
    return issued


@dataclass(frozen=True)
class Membership:
    """This session's class: its code, whether the session is its teacher (token accepted), when it ends."""

    code: str
    teacher: bool
    token: str  # the teacher token ("" for a student)
    expires: float  # epoch seconds; inf while the store could not be asked


def _notice(text: str) -> None:
    st.session_state.setdefault(NOTICES, []).append(text)


def _leave(why: str) -> None:
    """Drop the class from the session and its links (a code that names no live class), with a notice."""
    set_link_options(replace(link_options(), class_code="", teacher=""))
    st.session_state.pop(MEMBER, None)
    _notice(f"{why} The page works as without a class.")


def membership() -> Membership | None:
    """This session's class, checked against the store once per session (again while the store is unavailable)."""
    opts = link_options()
    if not opts.class_code:
        return None
    token = opts.teacher or class_cookie(TEACHER_COOKIE, opts.class_code)  # a reload: the URL has no token
    key = (opts.class_code, token)
    kept = st.session_state.get(MEMBER)
    if kept is not None and kept[0] == key:
        m = kept[1]
        if m.expires > store().clock():
            return m
        _leave(f"class {m.code} has ended (a class lasts {CLASS_HOURS:g} hours).")
        return None
    s = store()
    info = s.info(opts.class_code)
    if info is Outcome.UNAVAILABLE:  # not kept: asked again on the next run
        return Membership(opts.class_code, bool(opts.teacher), opts.teacher, math.inf)
    if isinstance(info, Outcome):
        _leave(f"class {opts.class_code}: {info.value}.")
        return None
    teacher = False
    if token:
        who = s.check_teacher(opts.class_code, token)
        teacher = who is Outcome.OK
        if who is Outcome.FORBIDDEN:
            where = "this link's" if opts.teacher else "this browser's kept"
            _notice(f"{where} teacher token is not the one of class {info.code}: you are in it as a student.")
            set_link_options(replace(opts, teacher=""))
            key = (opts.class_code, "")
    m = Membership(info.code, teacher, token if teacher else "", info.expires)
    if teacher:
        set_link_options(replace(link_options(), teacher=token))  # the session keeps it; the URL does not
        keep(TEACHER_COOKIE, m.code, token)  # and the browser, for a reload
    st.session_state[MEMBER] = (key, m)
    return m


def watch(qid: str) -> None:
    """A question on this page waits for the teacher's reveal (the student's watcher asks about it)."""
    st.session_state.setdefault(PENDING, set()).add(qid)


def class_links(link: str, m: Membership) -> tuple[str, str]:
    """The students' link and the teacher's link of class ``m``, made from this page's share ``link`` (without the
    projector view a teacher's page may be in: the students' pages are their own)."""
    parts = urlsplit(link)
    params = {  # the lesson itself is the teacher's (ui/classroom/lesson_panel.py): its question (ask=) goes along
        k: v
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k not in ("teacher", "view", "lesson", "lesson_step")
    }
    params["class"], params["classroom"] = m.code, "lock"  # students predict: no switch to skip it
    base = link.split("?", 1)[0]
    return f"{base}?{urlencode(params)}", f"{base}?{urlencode({**params, 'teacher': m.token})}"


class ClassPlaces(NamedTuple):
    """Where a page's drawing writes the class's links in the share box (:func:`class_controls` made them)."""

    member: Membership | None  # the session's class, as the controls saw it (None: no class)
    teacher: object | None  # a teacher who switched "Show my teacher link" on: where that link goes


def class_controls() -> ClassPlaces:
    """The share box's widgets, drawn by the page's full run under the place of its links (a body rerun, which
    redraws the links, sends no widget): "Start a class", or the teacher's switch "Show my teacher link" (a
    projector shows the sidebar, so the teacher's link stays behind it)."""
    m = membership()
    if m is not None and m.teacher:
        shown = st.toggle("Show my teacher link", key="pulse_show_teacher", help=TEACHER_LINK_HELP)
        return ClassPlaces(m, st.container() if shown else None)
    if m is not None:
        st.caption(f"The link includes your class ({m.code}).")
        return ClassPlaces(m, None)
    st.button(
        "Start a class",
        key="pulse_start",
        on_click=_start,
        help=f"A class code for your students' link (it ends after {CLASS_HOURS:g} hours), and a teacher link that "
        "shows their predictions as they come in and reveals the answer to everyone.",
    )
    error = st.session_state.pop(_START_ERROR, None)
    if error:
        st.warning(f"Could not start a class: {error}.", icon=":material/warning:")
    return ClassPlaces(None, None)


def class_links_text(link: str, box, places: ClassPlaces) -> bool:
    """The running class's links in place of the page's share ``link``, for a teacher (into ``box``, and the
    teacher's own link into its place when shown; ``box`` None: the share box is closed, nothing is drawn); the
    class is led to the students' link on every run. Returns whether the box shows them in place of the page's
    link (a teacher in a class: an unlocked link with the class in it would let a student skip the prediction and
    still be counted)."""
    m = places.member
    if m is None or not m.teacher:
        return False
    students, teacher = class_links(link, m)
    _keep_join_link(m, students)
    if box is None:
        return True
    box.markdown(f"**:material/school: Class {m.code}** · students open this link (nothing asks for their name):")
    box.code(students, language=None, wrap_lines=True)
    box.caption(f"Or the short address {join_address(m.code)}, or the code {m.code} on Home.")
    if places.teacher is not None:
        places.teacher.code(teacher, language=None, wrap_lines=True)
        places.teacher.caption("It shows the class's answers and reveals them: keep it to yourself, off the projector.")
    return True


TEACHER_LINK_HELP = (
    "Your teacher link opens the class's tally on another device. This browser remembers you as the teacher, "
    "so you do not need it to reload this page."
)


def _keep_join_link(m: Membership, students: str) -> None:
    """Where the short address takes a student, and where the class is led: the students' link of the page the
    teacher shows now (marked when the teacher lets the class explore freely)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash) if ctx is not None else None
    relative = f"{(info or {}).get('url_pathname', '')}?{urlsplit(students).query}"  # "Playground?seq_len=6&..."
    relative = lead_link(
        relative, bool(st.session_state.get(FREE_KEY))
    )  # the class follows it (ui/classroom/follow.py)
    if link_options().projector:  # the projector shows the class what the teacher's own page leads: it never leads
        return
    if st.session_state.get(_JOIN_LINK) != (m.code, relative):
        if store().set_link(m.code, m.token, relative) is Outcome.OK:
            st.session_state[_JOIN_LINK] = (m.code, relative)
            pulse_push.poke()  # this process's followers move now, the other replicas' within their POLL


def _start() -> None:
    started = store().start_class()
    if isinstance(started, Outcome):
        st.session_state[_START_ERROR] = started.value
        return
    opts = link_options()
    classroom = "on" if opts.classroom == "off" else opts.classroom
    set_link_options(replace(opts, class_code=started.code, teacher=started.token, classroom=classroom))
    set_kept(CLASSROOM_KEY, True)  # the teacher's page asks what the class is asked (and keeps its answer back)
    st.rerun()  # the whole page: the teacher's view appears under the title
