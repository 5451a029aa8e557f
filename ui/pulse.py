"""Class pulse on the pages: the process's store, which class a session is in (and as whom), and the share box's
"Start a class".

A teacher presses "Start a class" in the share box (:func:`class_box`) and gets two links: the students' link
carries ``class=CODE`` (and classroom mode, locked), the teacher's adds ``teacher=TOKEN``. What every page draws
for the class under its title is in ui/pulse_panel.py (the teacher's tally, the students' reveal watcher); the
questions are in ui/pulse_questions.py. The store (classpulse/) is one per process; it never raises, and when it
is unavailable the students' pages work as without a class and the teacher's view says so.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode, urlsplit

import streamlit as st

from classpulse import CLASS_HOURS, Outcome, PulseStore, new_voter, open_store
from ui.links import link_options, set_link_options
from ui.state import CLASSROOM_KEY, set_kept

MEMBER, NOTICES, PENDING, _VOTER = "pulse_member", "pulse_notices", "pulse_pending", "pulse_voter"
CURRENT, _START_ERROR = "pulse_current", "pulse_start_error"  # the question the teacher's page asks; why no class

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


def voter() -> str:
    """This session's random voter id (nothing about the student; a new tab is a new voter)."""
    if _VOTER not in st.session_state:
        st.session_state[_VOTER] = new_voter()
    return st.session_state[_VOTER]


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
    key = (opts.class_code, opts.teacher)
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
    if opts.teacher:
        who = s.check_teacher(opts.class_code, opts.teacher)
        teacher = who is Outcome.OK
        if who is Outcome.FORBIDDEN:
            _notice(f"this link's teacher token is not the one of class {info.code}: you are in it as a student.")
            set_link_options(replace(opts, teacher=""))
            key = (opts.class_code, "")
    m = Membership(info.code, teacher, opts.teacher if teacher else "", info.expires)
    st.session_state[MEMBER] = (key, m)
    return m


def watch(qid: str) -> None:
    """A question on this page waits for the teacher's reveal (the student's watcher asks about it)."""
    st.session_state.setdefault(PENDING, set()).add(qid)


def class_links(link: str, m: Membership) -> tuple[str, str]:
    """The students' link and the teacher's link of class ``m``, made from this page's share ``link``."""
    parts = urlsplit(link)
    params = {k: v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "teacher"}
    params["class"], params["classroom"] = m.code, "lock"  # students predict: no switch to skip it
    base = link.split("?", 1)[0]
    return f"{base}?{urlencode(params)}", f"{base}?{urlencode({**params, 'teacher': m.token})}"


def class_box(link: str) -> None:
    """In the share box: "Start a class", or the running class's two links (the teacher's only to the teacher)."""
    m = membership()
    if m is not None and m.teacher:
        students, teacher = class_links(link, m)
        st.markdown(f"**🎓 Class {m.code}** · students open this link (nothing asks for their name):")
        st.code(students, language=None, wrap_lines=True)
        st.markdown("Your teacher link: it shows the class's answers and reveals them. Keep it to yourself.")
        st.code(teacher, language=None, wrap_lines=True)
        return
    if m is not None:
        st.caption(f"The link includes your class ({m.code}).")
        return
    st.button(
        "Start a class",
        key="pulse_start",
        on_click=_start,
        help=f"A class code for your students' link (it ends after {CLASS_HOURS:g} hours), and a teacher link that "
        "shows their predictions as they come in and reveals the answer to everyone.",
    )
    error = st.session_state.pop(_START_ERROR, None)
    if error:
        st.warning(f"Could not start a class: {error}.", icon="⚠️")


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
