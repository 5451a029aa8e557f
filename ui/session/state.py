"""Values that must outlive a page switch, kept under keys of our own and put back into their widgets.

Streamlit 1.67 drops the state of a widget its page does not draw, and in Chromium a widget drawn with
``persist_state="session"`` came back at its default (a slider at its minimum) after a switch between
legacy pages, although AppTest kept the value. So the app keeps what must survive (the WhatIf, the
classroom and colour toggles) itself and puts it back into the widgets once, on the first run of each
page visit. Within a visit the widgets are the truth; nothing is copied back and forth on every run.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

_PAGE, _ENTERED, _VISIT = "_state_page", "_state_entered", "_state_visit"
STRETCH_KEY = "stretch_colours"  # the sidebar's "stretch the colour scales" toggle (off by default: 0 to 1)
LIVE_KEY = "live_maps"  # the "live maps" toggle (ui/live; on by default)
SHARE_OPEN = "share_open"  # the share box is open (its expander keeps its state: closed, nothing in it is drawn)
CODE_OPEN = "code_open"  # "Show the code that ran" is open (the same)
CLASSROOM_KEY = "classroom_on"  # the sidebar's classroom-mode toggle (ui/classroom/mode.py)


def enter_page() -> None:
    """Record which page this run draws; call once per run, first (ui.skeleton.page.Page does)."""
    ctx = get_script_run_ctx()
    page = ctx.page_script_hash if ctx is not None else ""
    entered = st.session_state.get(_PAGE) != page
    st.session_state[_ENTERED] = entered
    st.session_state[_PAGE] = page
    if entered:
        st.session_state[_VISIT] = st.session_state.get(_VISIT, 0) + 1


def entered_page() -> bool:
    """True on the first run of a page visit (a new session, or a switch from another page).

    A rerun of a fragment alone (a widget in a page's ``@st.fragment`` body changed) never is: ui.skeleton.page.Page,
    which records the visit, runs only with the whole page."""
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run:
        return False
    return st.session_state.get(_ENTERED, True)


def visit() -> int:
    """The number of the current page visit in this session (1, 2, ...)."""
    return st.session_state.get(_VISIT, 0)


def kept_value(key: str, default):
    """The value a kept widget (``kept_toggle``) holds, also on pages that do not draw it."""
    return st.session_state.get(f"{key}_kept", default)


def keep(key: str, first) -> None:
    """Keep the widget ``key`` across page switches: its kept value starts at ``first`` (once per session) and
    is put back into the widget on the first run of each page visit (or when the widget has no state yet)."""
    kept = f"{key}_kept"
    if kept not in st.session_state:
        st.session_state[kept] = first
    if entered_page() or key not in st.session_state:
        st.session_state[key] = st.session_state[kept]


def set_kept(key: str, value) -> None:
    """Set a kept widget's value from code (a callback, before the widget is drawn), e.g. classroom mode on."""
    st.session_state[key] = st.session_state[f"{key}_kept"] = value


def remember(key: str) -> None:
    """Keep the widget ``key``'s new value (its on_change, or part of it)."""
    st.session_state[f"{key}_kept"] = st.session_state[key]


def kept_toggle(box, label: str, key: str, default: bool, **kw) -> bool:
    """A toggle whose value survives page switches (kept under ``key + '_kept'``, see :func:`keep`)."""
    keep(key, default)
    on_change = kw.pop("on_change", None)

    def changed():
        remember(key)
        if on_change is not None:
            on_change()

    return box.toggle(label, key=key, on_change=changed, **kw)
