"""The end of every page: check questions whose answers open on click, and where to go next.

A page calls :func:`page_end` last (a page with a body fragment calls :func:`check_yourself` in its body
and :func:`next_link` after it, in the full run). Questions are ``(question, answer)`` pairs of plain text that
the page computes from the numbers on screen (so the answer is true for the setting shown); they are
shown as expanders (the answer appears on click). A question may add its choices and the index of the right one,
``(question, answer, choices, right)``: the student picks first, and in a class the pick counts for the teacher's
tally (ui/pulse_questions.py). The next page follows ``ui.layout.PAGES``.
"""

from __future__ import annotations

import streamlit as st

from ui.layout import PAGES
from ui.pulse_questions import choice_question
from ui.runtime import collect_garbage, settle_imports


def next_page(current: str) -> tuple[str, str, str, str] | None:
    """The PAGES entry after ``current`` (a path like "pages/1_Playground.py"; the home page gives the first)."""
    paths = [p[0] for p in PAGES]
    if current not in paths:
        return PAGES[0] if PAGES else None
    i = paths.index(current)
    return PAGES[i + 1] if i + 1 < len(PAGES) else None


def check_yourself(questions: list[tuple]) -> None:
    """Check questions, each answer in an expander (computed for the setting on screen); a question given as
    ``(question, answer, choices, right)`` asks the student to pick one of ``choices`` first."""
    if questions:
        st.subheader("Check yourself")
        for i, (question, answer, *choices) in enumerate(questions, start=1):
            with st.expander(f"{i}. {question}"):
                if choices:
                    choice_question(question, answer, *choices)
                else:
                    st.markdown(answer)


def next_link(current: str) -> None:
    """The link to the next page in the reading order (a page's full-run part draws it: it never changes)."""
    nxt = next_page(current)
    if nxt is not None:
        path, label, icon, teaches = nxt
        st.divider()
        st.markdown("**Next in the reading order**")
        st.page_link(path, label=f"{label}: {teaches}", icon=icon)
    settle_imports()
    collect_garbage()  # in place of Streamlit's per-run collection (ui/runtime.py)


def page_end(current: str, questions: list[tuple[str, str]] = ()) -> None:
    """Check questions (answers on click) and a link to the next page in the reading order."""
    check_yourself(questions)
    next_link(current)
