"""Class pulse on the pages: who is in which class, the teacher's live tally, and the students' reveal watcher.

A teacher presses "Start a class" in the share box (:func:`class_box`) and gets two links: the students' link
carries ``class=CODE`` (and classroom mode, locked), the teacher's adds ``teacher=TOKEN``. Every page draws
:func:`class_panel` under its title (ui.layout.page_setup):

- the teacher (a link whose token the store accepts) sees the class's answers as bars, refreshed by a fragment
  every ``TEACHER_EVERY`` seconds, and "Reveal to the class";
- a student sees one line saying they are in the class, and a fragment that every ``STUDENT_EVERY`` seconds asks
  whether a question on their page was revealed, and then reruns the page (the weights appear, no reload).

The questions themselves are drawn by ui/pulse_questions.py. The store (classpulse/) is one per process; it never
raises, and when it is unavailable the students' pages work as without a class and the teacher's view says so.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode, urlsplit

import pandas as pd
import streamlit as st

from classpulse import CLASS_HOURS, Outcome, PulseStore, Tally, new_voter, open_store
from ui.links import link_options, set_link_options
from ui.runtime import collect_garbage
from ui.state import CLASSROOM_KEY, set_kept
from ui.text import md_escape

TEACHER_EVERY = 0.5  # seconds between refreshes of the teacher's tally (answers show within about this)
STUDENT_EVERY = 2.0  # seconds between a student page's checks for a reveal
ALL_BARS = 16  # questions with more choices show only the chosen ones (and the right one once revealed)

_MEMBER, _NOTICES, _PENDING, _VOTER = "pulse_member", "pulse_notices", "pulse_pending", "pulse_voter"
CURRENT, PICK, _FOLLOWED, _ERROR = "pulse_current", "pulse_pick", "pulse_followed", "pulse_error"

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
    st.session_state.setdefault(_NOTICES, []).append(text)


def _leave(why: str) -> None:
    """Drop the class from the session and its links (a code that names no live class), with a notice."""
    set_link_options(replace(link_options(), class_code="", teacher=""))
    st.session_state.pop(_MEMBER, None)
    _notice(f"{why} The page works as without a class.")


def membership() -> Membership | None:
    """This session's class, checked against the store once per session (again while the store is unavailable)."""
    opts = link_options()
    if not opts.class_code:
        return None
    key = (opts.class_code, opts.teacher)
    kept = st.session_state.get(_MEMBER)
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
    st.session_state[_MEMBER] = (key, m)
    return m


def watch(qid: str) -> None:
    """A question on this page waits for the teacher's reveal (the student's watcher asks about it)."""
    st.session_state.setdefault(_PENDING, set()).add(qid)


def class_panel() -> None:
    """The class's part of a page, under its title: notices, and the teacher's tally or the student's line."""
    m = membership()
    for text in st.session_state.pop(_NOTICES, None) or []:
        st.warning(f"Class: {text}", icon="⚠️")
    st.session_state[_PENDING] = set()  # this run's questions add themselves (ui/pulse_questions.py)
    if m is None:
        return
    if m.teacher:
        _teacher_view(m.code, m.token)
    else:
        st.caption(
            f"🎓 You are in class **{m.code}**: your answers count for the class anonymously (nothing asks for your "
            "name), and your teacher reveals the answers to everyone."
        )
        _watch_reveals(m.code)


@st.fragment(run_every=STUDENT_EVERY)
def _watch_reveals(code: str) -> None:
    """Every few seconds: has the teacher revealed a question this page is waiting for? Then rerun the page."""
    pending = st.session_state.get(_PENDING)
    if pending:
        shown = store().revealed(code, sorted(pending))
        if not isinstance(shown, Outcome) and shown:
            st.rerun()  # the whole page: its questions see the reveal and show the weights
    collect_garbage()


def ends_in(expires: float, now: float) -> str:
    """'3 h 05 min' until ``expires``."""
    minutes = max(0, int((expires - now) // 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def tally_sentence(t: Tally) -> str:
    """What the teacher reads under the bars: the count, and once revealed the share that was right."""
    n = t.total
    count = f"**{n}** {'answer' if n == 1 else 'answers'}"
    if not t.revealed or t.question.right < 0:
        return f"{count} so far; the right answer stays hidden until you reveal it."
    right = f"#{t.question.right + 1} {md_escape(t.question.choices[t.question.right])}"
    if n == 0:
        return f"Revealed: **{right}** was right; nobody had answered."
    return f"{count}. Revealed: **{t.right_count} of {n}** ({100 * t.right_count / n:.0f}%) chose **{right}**, the right answer."


def tally_frame(t: Tally) -> pd.DataFrame:
    """One row per bar: the choice ("#3 t3"), its count, and whether it is the revealed right answer."""
    right = t.question.right if t.revealed else -1
    keep = [
        i for i, c in enumerate(t.counts) if len(t.counts) <= ALL_BARS or c > 0 or i == right
    ]  # a long list of keys shows the chosen ones
    return pd.DataFrame(
        {
            "choice": [f"#{i + 1} {t.question.choices[i]}" for i in keep],
            "answers": [t.counts[i] for i in keep],
            "right": ["right answer" if i == right else "other" for i in keep],
            "order": keep,
        }
    )


def tally_spec(frame: pd.DataFrame) -> dict:
    """Horizontal bars of answers per choice, the right one coloured once revealed (labels travel as data)."""
    return {
        "mark": {"type": "bar", "tooltip": True},
        "height": {"step": 22},
        "autosize": {"type": "pad"},  # a step-sized chart cannot be "fit" (Vega warns)
        "encoding": {
            "y": {"field": "choice", "type": "nominal", "sort": {"field": "order"}, "title": None},
            "x": {
                "field": "answers",
                "type": "quantitative",
                "title": "answers",
                "stack": None,  # one bar per choice
                "axis": {"tickMinStep": 1, "format": "d"},
                "scale": {"domain": [0, max(1, *(int(a) for a in frame["answers"]))]},  # no extent to compute
            },
            "color": {
                "field": "right",
                "type": "nominal",
                "scale": {"domain": ["other", "right answer"], "range": ["#8c9bb0", "#2e9e5b"]},
                "legend": None,
            },
        },
    }


@st.fragment(run_every=TEACHER_EVERY)
def _teacher_view(code: str, token: str) -> None:
    """The teacher's tally: every question of the class, the one the page asks now first, refreshed by itself."""
    s = store()
    tallies = s.tally(code, token)
    with st.container(border=True):
        if isinstance(tallies, Outcome):
            if tallies is Outcome.UNAVAILABLE:
                st.warning(
                    f"👩‍🏫 Class **{code}**: the class tally is unavailable right now (the class store does not answer). "
                    "Your students' pages keep working and keep their answers; the tally comes back with the store.",
                    icon="⚠️",
                )
            else:
                st.warning(f"👩‍🏫 Class **{code}**: {tallies.value}.", icon="⚠️")
            collect_garbage()
            return
        answers = sum(t.total for t in tallies)
        st.markdown(
            f"**👩‍🏫 Class {code}** · {answers} {'answer' if answers == 1 else 'answers'} to {len(tallies)} "
            f"{'question' if len(tallies) == 1 else 'questions'} · ends in {ends_in(_expires(code), s.clock())}"
        )
        if not tallies:
            st.caption("No question yet: your students' predictions appear here as they send them.")
        else:
            _show_tally(code, token, tallies)
        error = st.session_state.pop(_ERROR, None)
        if error:
            st.warning(f"Not revealed: {error}.", icon="⚠️")
    collect_garbage()


def _expires(code: str) -> float:
    kept = st.session_state.get(_MEMBER)
    return kept[1].expires if kept and kept[1].code == code else math.inf


def _show_tally(code: str, token: str, tallies: list[Tally]) -> None:
    by_id = {t.question.qid: t for t in tallies}
    current = st.session_state.get(CURRENT)
    if current in by_id and st.session_state.get(_FOLLOWED) != current:  # the page asks a new question: follow it
        st.session_state[PICK], st.session_state[_FOLLOWED] = current, current
    if st.session_state.get(PICK) not in by_id:
        st.session_state[PICK] = current if current in by_id else tallies[0].question.qid
    if len(tallies) > 1:
        st.selectbox(
            "Question",
            list(by_id),
            key=PICK,
            format_func=lambda q: f"{by_id[q].question.where}: {by_id[q].question.prompt} ({by_id[q].total})",
        )
    t = by_id[st.session_state[PICK]]
    st.markdown(f"**{md_escape(t.question.prompt)}** ({md_escape(t.question.where)})")
    frame = tally_frame(t)
    st.vega_lite_chart(frame, tally_spec(frame), width="stretch")
    st.markdown(tally_sentence(t))
    if not t.revealed:
        st.button("Reveal to the class", key="pulse_reveal", on_click=_reveal, args=(code, token, t.question.qid))


def _reveal(code: str, token: str, qid: str) -> None:
    got = store().reveal(code, token, qid)
    if got is not Outcome.OK:
        st.session_state[_ERROR] = got.value
    st.rerun()  # the whole page: the teacher's own question shows its weights too


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
    error = st.session_state.pop(_ERROR, None)
    if error:
        st.warning(f"Could not start a class: {error}.", icon="⚠️")


def _start() -> None:
    started = store().start_class()
    if isinstance(started, Outcome):
        st.session_state[_ERROR] = started.value
        return
    opts = link_options()
    classroom = "on" if opts.classroom == "off" else opts.classroom
    set_link_options(replace(opts, class_code=started.code, teacher=started.token, classroom=classroom))
    set_kept(CLASSROOM_KEY, True)  # the teacher's page asks what the class is asked (and keeps its answer back)
    st.rerun()  # the whole page: the teacher's view appears under the title
