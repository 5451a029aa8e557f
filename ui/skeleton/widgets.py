"""Small page-level widgets shared by several pages (pickers that survive a change of T or H)."""

from __future__ import annotations

import streamlit as st

from ui.text import head_names


def index_picker(
    label: str, labels: list[str], key: str, default: int = 0, container=None, numbered: bool = True, **kw
) -> int:
    """A selectbox over positions 0..n-1 shown by label (and its number, "t3 (#3)", unless not ``numbered``); a
    missing or out-of-range stored choice falls back."""
    n = len(labels)
    if st.session_state.get(key) not in range(n):
        st.session_state[key] = min(default, n - 1)
    box = container or st
    shown = (lambda i: f"{labels[i]} (#{i + 1})") if numbered else labels.__getitem__
    return box.selectbox(label, range(n), format_func=shown, key=key, **kw)


def head_picker(label: str, n_heads: int, key: str, default: int = 0, container=None, **kw) -> int:
    """The head picker of a page whose head is not in the link: a select box of the ``n_heads`` heads by name
    ("head 2", as a head in the link is drawn: ``ui.skeleton.page_params.head_param``), kept under ``key``; returns
    the 0-based head."""
    return index_picker(label, head_names(n_heads), key, default, container, numbered=False, **kw)
