"""Classroom mode: predict, then reveal.

A page that has a question worth predicting (one a student can reason out from what is on screen: the formula,
the class-notes tokens, the setting's numbers) asks it with :func:`predict` and keeps what would give the answer
away (the maps, the numbers) hidden until the student has answered. Any change of the setting asks again.
The toggle (every page's sidebar) and the answers live in the session; a link can turn the mode on
(``classroom=1``) or lock it on (``classroom=lock``, no switch), see ui/session/links.py. A page without such a question
says so when classroom mode is on (ui.skeleton.page.Page). A link with ``class=CODE`` also sends the prediction to the
class's tally, and the answer waits for the teacher's reveal (ui/classroom/pulse_questions.class_gate).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from ui.classroom.pulse_questions import CHOOSE_FIRST, class_gate
from ui.session.links import link_options, set_link_options, write_link_options
from ui.session.partial import question_asked
from ui.session.state import CLASSROOM_KEY, kept_toggle, kept_value
from ui.text import md_escape

TOGGLE_KEY = CLASSROOM_KEY
ASKED = "_classroom_asked"  # the page this run asked a question on (read by ui.skeleton.page.Page)


def classroom_on() -> bool:
    """Whether classroom mode is on for this session (the toggle, or a link that locks it on)."""
    options = link_options()
    if options.classroom == "lock":
        return True
    return bool(kept_value(TOGGLE_KEY, options.classroom == "on"))


def _remember() -> None:
    options = link_options()
    if options.classroom != "lock":
        set_link_options(replace(options, classroom="on" if classroom_on() else "off"))
        write_link_options()


def classroom_toggle() -> bool:
    """The sidebar toggle (or, under a locking link, a note); returns whether classroom mode is on."""
    if link_options().classroom == "lock":
        st.sidebar.info("Classroom mode is on for this lesson: predict, then reveal.", icon=":material/school:")
        return True
    kept_toggle(
        st.sidebar,
        "Classroom mode: predict, then reveal",
        TOGGLE_KEY,
        link_options().classroom == "on",
        on_change=_remember,
        help="On pages that ask a question worth predicting, the maps and numbers that answer it stay hidden until "
        "you have predicted.",
    )
    return classroom_on()


@dataclass(frozen=True)
class Prediction:
    """A question a student can reason out from what is on screen, asked before the answer is shown."""

    key: str  # where the answer is kept, one per page and kind of question ("playground.twin")
    question: str  # Markdown; user text in it already escaped (ui.text.md_escape)
    choices: tuple[str, ...]  # the answers offered, plain text
    correct: int  # the index of the right one, computed for the setting
    reveal: str  # Markdown said after the answer: why, with the numbers of the setting
    signature: tuple = ()  # the setting asked about: another setting asks again


def ask(p: Prediction) -> int | None:
    """The question and its picker (also in a class, ui/classroom/pulse_questions.py); returns the index picked, None while
    the student has chosen nothing (the picker starts empty: a first option chosen for the student would be sent
    or revealed as their prediction)."""
    st.markdown(f":material/school: **Predict first.** {p.question}")
    widget = st.radio if len(p.choices) <= 4 else st.selectbox
    kw = {"horizontal": True} if widget is st.radio else {"placeholder": "Choose a key"}
    return widget(
        "Your prediction",
        range(len(p.choices)),
        format_func=lambda i: p.choices[i],
        index=None,
        key=f"guess_{p.key}",
        **kw,
    )


def asked_here() -> bool:
    """Whether this run of the page asked a prediction (ui.skeleton.page.Page says so when classroom mode is on and none)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return st.session_state.get(ASKED) == (ctx.page_script_hash if ctx else "")


def predict(p: Prediction) -> bool:
    """Ask ``p`` when classroom mode is on; return True once the answer may be shown (at once when the mode is off).

    The question is drawn with the page's widgets, so the page reruns whole while it is asked (ui/session/partial.py)."""
    if not classroom_on():
        return True
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    st.session_state[ASKED] = ctx.page_script_hash if ctx else ""
    question_asked()
    state_key = f"classroom_{p.key}"
    state = st.session_state.get(state_key)
    if state is None or state["signature"] != p.signature:
        state = {"signature": p.signature, "guess": None}
        st.session_state[state_key] = state
    in_class = class_gate(p, state, ask, verdict)  # None outside a class
    if in_class is False:
        return False
    if state["guess"] is None and in_class:
        return True  # the teacher revealed it to the class; this session did not predict
    if state["guess"] is None:
        with st.container(border=True):
            guess = ask(p)
            if st.button("Reveal the answer", key=f"reveal_{p.key}"):
                if guess is None:
                    st.warning(CHOOSE_FIRST, icon=":material/touch_app:")
                else:
                    state["guess"] = int(guess)
                    st.rerun()
            st.caption("What answers it stays hidden until you reveal it.")
        return False
    verdict(p, state["guess"])
    return True


def verdict(p: Prediction, guess: int) -> None:
    """Whether the prediction ``guess`` was right, and why (``p.reveal``)."""
    said = f"you predicted **{md_escape(p.choices[guess])}**. {p.reveal}"
    if guess == p.correct:
        st.success(f"Right: {said}", icon=":material/check_circle:")
    else:
        st.warning(
            f"Not this time: {said} The answer is **{md_escape(p.choices[p.correct])}**.", icon=":material/info:"
        )


def which_key(page: str, signature: tuple, row: np.ndarray, query_label: str, key_labels: list[str]) -> Prediction:
    """ "Which key will this query attend to most?" of one query's weights ``row`` (T_k,)."""
    top = int(np.argmax(row))
    return Prediction(
        key=f"{page}.key",
        question=f"Which key will query **{md_escape(query_label)}** attend to most?",
        choices=tuple(key_labels),
        correct=top,
        reveal=f"Query {md_escape(query_label)} puts weight {row[top]:.3f} on **{md_escape(key_labels[top])}**.",
        signature=signature,
    )


def sharper_or_softer(key: str, question: str, new: float, now: float, signature: tuple, why: str) -> Prediction:
    """A "sharper, softer or the same?" question about a change, answered by two mean max weights: ``new`` (after
    the change) against ``now``. Only equal numbers (to float rounding) are "the same": the questions are about
    changes whose direction the formula decides (a temperature, the scaling), however small."""
    choices = ("sharper", "softer", "the same")
    correct = 2 if abs(new - now) <= 1e-9 * max(abs(new), abs(now), 1e-12) else 0 if new > now else 1
    return Prediction(key, question, choices, correct, why, signature)
