"""What every page draws for its class, under its title (ui.page.Page calls :func:`class_panel`).

- The teacher (a link whose token the store accepts) sees the class's answers as bars, refreshed by a fragment
  every ``TEACHER_EVERY`` seconds, the question the page asks first, and "Reveal to the class". Before the reveal
  the bars do not tell which choice is right (the projector must not give it away).
- A student sees one line saying they are in the class, and a fragment that every ``STUDENT_EVERY`` seconds asks
  whether a question on their page (ui.pulse.watch) was revealed, and then reruns the page (the weights appear,
  no reload).
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from classpulse import Outcome, Tally
from ui.pulse import CURRENT, MEMBER, NOTICES, PENDING, membership, store
from ui.runtime import collect_garbage
from ui.text import md_escape

TEACHER_EVERY = 0.5  # seconds between refreshes of the teacher's tally (answers show within about this)
STUDENT_EVERY = 2.0  # seconds between a student page's checks for a reveal
ALL_BARS = 16  # questions with more choices show only the chosen ones (and the right one once revealed)
PICK, _FOLLOWED = "pulse_pick", "pulse_followed"  # the teacher's choice of question; the page question followed
_REVEAL_ERROR = "pulse_reveal_error"


def class_panel() -> None:
    """The class's part of a page, under its title: notices, and the teacher's tally or the student's line."""
    m = membership()
    for text in st.session_state.pop(NOTICES, None) or []:
        st.warning(f"Class: {text}", icon="⚠️")
    st.session_state[PENDING] = set()  # this run's questions add themselves (ui/pulse_questions.py)
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
    pending = st.session_state.get(PENDING)
    if pending:
        shown = store().revealed(code, sorted(pending))
        if not isinstance(shown, Outcome) and shown:
            st.rerun()  # the whole page: its questions see the reveal and show the weights
    collect_garbage()


def ends_in(expires: float, now: float) -> str:
    """' · ends in 3 h 05 min' until ``expires``; "" when the end is not known (the store was away when the page
    first asked)."""
    if not math.isfinite(expires):
        return ""
    minutes = max(0, int((expires - now) // 60))
    return f" · ends in {minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f" · ends in {minutes} min"


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
        "height": 24 * len(frame) + 50,  # bars and the x axis; a number: a stepped height cannot be fit (Vega warns)
        "autosize": {"type": "fit", "contains": "padding"},  # within the teacher's box
        "encoding": {
            "y": {
                "field": "choice",
                "type": "nominal",
                "sort": {"field": "order"},
                "title": None,
                "axis": {"labelOverlap": False, "labelFontSize": 14},  # every choice named, readable on a projector
            },
            "x": {
                "field": "answers",
                "type": "quantitative",
                "title": "answers",
                "stack": None,  # one bar per choice
                "axis": {"tickMinStep": 1, "format": "d", "labelFontSize": 13},
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
            f"{'question' if len(tallies) == 1 else 'questions'}{ends_in(_expires(code), s.clock())}"
        )
        if not tallies:
            st.caption("No question yet: your students' predictions appear here as they send them.")
        else:
            _show_tally(code, token, tallies)
        error = st.session_state.pop(_REVEAL_ERROR, None)
        if error:
            st.warning(f"Not revealed: {error}.", icon="⚠️")
    collect_garbage()


def _expires(code: str) -> float:
    kept = st.session_state.get(MEMBER)
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
        st.session_state[_REVEAL_ERROR] = got.value
    st.rerun()  # the whole page: the teacher's own question shows its weights too
