"""Classroom mode: hide the weights until the student predicts where a query will look.

No accounts: the toggle and the guesses live in the session. A link can turn the mode on (``classroom=1``) or
lock it on (``classroom=lock``, no switch), see ui/links.py. A link with ``class=CODE`` also sends the prediction
to the class's tally, and the weights wait for the teacher's reveal (ui/pulse_questions.class_gate).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from ui.links import link_options, set_link_options, write_link_options
from ui.partial import question_asked
from ui.pulse_questions import class_gate
from ui.state import CLASSROOM_KEY, kept_toggle, kept_value
from ui.text import md_escape

TOGGLE_KEY = CLASSROOM_KEY


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
        st.sidebar.info("🎓 Classroom mode is on for this lesson: predict, then reveal.")
        return True
    kept_toggle(
        st.sidebar,
        "🎓 Classroom mode: predict, then reveal",
        TOGGLE_KEY,
        link_options().classroom == "on",
        on_change=_remember,
        help="Hides the attention weights until you predict which key a query attends to most.",
    )
    return classroom_on()


def ask(page: str, query_label: str, key_labels: list[str]) -> int:
    """The prediction question and its picker (also in a class, ui/pulse_questions.py); returns the picked key."""
    st.markdown(f"🎓 **Predict first.** Which key will query **{md_escape(query_label)}** attend to most?")
    return st.selectbox(
        "Your prediction", range(len(key_labels)), format_func=lambda j: key_labels[j], key=f"classroom_guess_{page}"
    )


def prediction_gate(page: str, signature: tuple, row: np.ndarray, query_label: str, key_labels: list[str]) -> bool:
    """Ask for a prediction about ``row`` (one query's weights); return True once the answer may be shown.

    ``signature`` identifies the question (settings, head, query); a new question hides the weights again.
    """
    if not classroom_on():
        return True
    question_asked()
    state_key = f"classroom_{page}"
    state = st.session_state.get(state_key)
    if state is None or state["signature"] != signature:
        state = {"signature": signature, "guess": None}
        st.session_state[state_key] = state
    answer = int(np.argmax(row))
    in_class = class_gate(page, signature, query_label, key_labels, answer, state, ask)  # None outside a class
    if in_class is False:
        return False
    if state["guess"] is None and in_class:
        return True  # the teacher revealed it to the class; this session did not predict
    if state["guess"] is None:
        with st.container(border=True):
            guess = ask(page, query_label, key_labels)
            if st.button("Reveal the weights", key=f"classroom_reveal_{page}"):
                state["guess"] = int(guess)
                st.rerun()
            st.caption("The weights stay hidden until you reveal them.")
        return False
    if state["guess"] == answer:
        st.success(
            f"🎓 Right: query {md_escape(query_label)} attends most to **{md_escape(key_labels[answer])}** "
            f"(weight {row[answer]:.3f})."
        )
    else:
        st.warning(
            f"🎓 Not this time: you predicted {md_escape(key_labels[state['guess']])} (weight "
            f"{row[state['guess']]:.3f}); the largest weight goes to **{md_escape(key_labels[answer])}** "
            f"({row[answer]:.3f})."
        )
    return True
