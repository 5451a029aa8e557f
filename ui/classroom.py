"""Classroom mode: hide the weights until the student predicts where a query will look.

No accounts and no storage: the toggle and the guesses live in the session only.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.text import md_escape

ON_KEY = "classroom_on"  # survives page switches (the widget key does not)


def _sync() -> None:
    st.session_state[ON_KEY] = st.session_state["classroom_toggle"]


def classroom_toggle() -> bool:
    """The sidebar toggle; returns whether classroom mode is on."""
    st.session_state["classroom_toggle"] = st.session_state.get(ON_KEY, False)
    st.sidebar.toggle("🎓 Classroom mode: predict, then reveal", key="classroom_toggle", on_change=_sync,
                      help="Hides the attention weights until you predict which key a query attends to most.")
    return st.session_state[ON_KEY] if ON_KEY in st.session_state else False


def prediction_gate(page: str, signature: tuple, row: np.ndarray, query_label: str, key_labels: list[str]) -> bool:
    """Ask for a prediction about ``row`` (one query's weights); return True once the answer may be shown.

    ``signature`` identifies the question (settings, head, query); a new question hides the weights again.
    """
    if not st.session_state.get(ON_KEY, False):
        return True
    state_key = f"classroom_{page}"
    state = st.session_state.get(state_key)
    if state is None or state["signature"] != signature:
        state = {"signature": signature, "guess": None}
        st.session_state[state_key] = state
    answer = int(np.argmax(row))
    if state["guess"] is None:
        with st.container(border=True):
            st.markdown(f"🎓 **Predict first.** Which key will query **{md_escape(query_label)}** attend to most?")
            guess = st.selectbox("Your prediction", range(len(key_labels)), format_func=lambda j: key_labels[j],
                                 key=f"classroom_guess_{page}")
            if st.button("Reveal the weights", key=f"classroom_reveal_{page}"):
                state["guess"] = int(guess)
                st.rerun()
            st.caption("The weights stay hidden until you reveal them.")
        return False
    if state["guess"] == answer:
        st.success(f"🎓 Right: query {md_escape(query_label)} attends most to **{md_escape(key_labels[answer])}** "
                   f"(weight {row[answer]:.3f}).")
    else:
        st.warning(f"🎓 Not this time: you predicted {md_escape(key_labels[state['guess']])} (weight "
                   f"{row[state['guess']]:.3f}); the largest weight goes to **{md_escape(key_labels[answer])}** "
                   f"({row[answer]:.3f}).")
    return True
