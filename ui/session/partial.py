"""Partial reruns: a control that changes only what a page draws reruns the page's drawing, not the page.

Streamlit reruns the whole page script on every change, and a rerun costs about 0.35 ms of server time per
element before any maths (sidebar links, every slider, every chart), which is what a class of thirty pays for.
A page that uses this module splits into two parts (see docs/DESIGN.md, "Partial reruns"):

- the full-run part draws every widget, what depends on no leaf control (Step by step's first five steps), and
  the containers the drawing will fill, in page order;
- ``body`` (a keyed ``st.fragment``) draws what the leaf controls change into those containers. It holds no
  widget that reruns the script (download buttons, which do not rerun, may stand in it).

A *leaf* control (one whose change alters no other widget: temperature, scaling, seed, a head picker) has
``on_change=rerun_body``, which asks Streamlit 1.67 to rerun the keyed fragment alone
(``st.rerun(BODY)`` from a callback replaces the interaction's full run). Every other control (input kind,
seq_len, d_model, heads, mask, typed text, presets) keeps the full run, because it changes other widgets.

Why the widgets stay outside the fragment: a change of a widget *inside* a fragment makes the browser ask for
that fragment by id, and Streamlit drops the request when the session does not hold the fragment. A session
that is new because the server restarted or nginx moved the student to another replica holds none, so every
such control would do nothing until a reload. A widget outside sends an ordinary rerun; a new session has no
callbacks registered yet, so that rerun is a full run, which registers the fragment for the next change.
"""

from __future__ import annotations

import functools

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.server.fairness import notice as pace_notice
from ui.server.runtime import collect_garbage

BODY = "body"  # the fragment key every page's drawing uses

# AppTest shows only a fragment's elements after a fragment rerun (it does not merge them into the page as a
# browser does), so harness/apptest.app() turns partial reruns off unless a test asks for them.
ENABLED = True

# The page whose body the last full run drew to its end. Streamlit keeps the previous run's fragments when a
# run ends early (st.stop, an exception, a newer change interrupting it), so "a body is registered" does not
# mean "this page's full-run part is current": a body from another page, or one whose pickers were not
# re-fitted to a new seq_len, could run. So a body rerun needs this page's body to have been drawn since the
# page's last full run began.
_READY = "_partial_body_ready"


def _page() -> str:
    ctx = get_script_run_ctx()
    return ctx.page_script_hash if ctx is not None else ""


_QUESTION = "_partial_question"  # this page's full run drew a prediction question (classroom mode)


def page_started() -> None:
    """Every full run of a page calls this first (ui.skeleton.page.Page): no body is current until it is drawn."""
    st.session_state[_READY] = None
    st.session_state[_QUESTION] = False


def question_asked() -> None:
    """The page drew a prediction question with its widgets (ui.classroom.mode.predict): the question depends
    on every setting, so until the next full run this page's changes rerun it whole."""
    st.session_state[_QUESTION] = True


def rerun_body() -> None:
    """``on_change`` of a leaf control: rerun only the page's body (else fall through to the full run).

    The full run is kept when partial reruns are off, when the page asks a prediction question (classroom mode:
    the question, drawn with the widgets, depends on every setting), when the page's last full run did not draw
    its body to the end, and when this session holds no body (a page without one).
    """
    if not ENABLED or st.session_state.get(_QUESTION) or st.session_state.get(_READY) != _page():
        return
    try:
        st.rerun(BODY)
    except StreamlitAPIException:
        return  # the session holds no body fragment: the interaction's full run draws the page


def full_run() -> None:
    """``on_change`` of a control that must rerun the page (typed text, an edited matrix): a callback that returns
    normally makes Streamlit rerun the whole page even when a leaf control changed in the same interaction (a
    widget without a callback has no say, so its change would reach only the body)."""


def body(fn):
    """Decorator: the page's drawing, as the fragment that ``rerun_body`` reruns."""

    @functools.wraps(fn)
    def drawn(*args, **kwargs):
        pace_notice()  # a body rerun that waited for its turn says so (ui/server/fairness.py)
        fn(*args, **kwargs)
        st.session_state[_READY] = _page()
        collect_garbage()  # a body rerun ends here: Streamlit's per-run collection is off (ui/server/runtime.py)

    return st.fragment(drawn, key=BODY)
