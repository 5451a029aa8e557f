"""The end of every page: check questions whose answers open on click, and where to go next.

ui.skeleton.page.Page draws both (a page's ``draw`` returns its questions). Questions are plain text that the page
computes from the numbers on screen, so the answer is true for the setting shown; they are shown as expanders
(the answer appears on click). A question with ``choices`` asks the student to pick one first, and in a class
the pick counts for the teacher's tally (ui/classroom/pulse_questions.py). The next page follows ``ui/skeleton/registry.PAGES``.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from ui.classroom.pulse_questions import choice_question
from ui.skeleton.registry import next_page


class Question(NamedTuple):
    """A check question and its answer, both computed for the setting on screen. ``choices`` (optional) are the
    answers a student may pick among, ``correct`` the index of the right one."""

    question: str
    answer: str
    choices: tuple[str, ...] = ()
    correct: int | None = None


def check_yourself(questions: list[Question]) -> None:
    """Check questions, each answer in an expander (computed for the setting on screen); a question with choices
    asks the student to pick one first (and counts the pick in a class)."""
    if questions:
        st.subheader("Check yourself")
        for i, q in enumerate(questions, start=1):
            with st.expander(f"{i}. {q.question}"):
                if q.choices:
                    choice_question(q.question, q.answer, q.choices, q.correct)
                else:
                    st.markdown(q.answer)


def next_link(current: str) -> None:
    """The link to the next page in the reading order (a page's full-run part draws it: it never changes)."""
    nxt = next_page(current)
    if nxt is not None:
        st.markdown("---\n\n**Next in the reading order**")  # the rule and the heading: one element, not two
        page_link_with_caption(nxt)


def page_link_with_caption(p) -> None:
    """A link to the registered page ``p`` by its name, what it teaches in a caption under it (a page link is one
    line: a long label was cut off without an ellipsis at 1280 px)."""
    st.page_link(p.path, label=p.label, icon=p.icon)
    st.caption(p.teaches)
