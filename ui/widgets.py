"""Small page-level widgets shared by several pages (pickers that survive a change of T or H)."""

from __future__ import annotations

import streamlit as st


def index_picker(label: str, labels: list[str], key: str, default: int = 0, container=None, **kw) -> int:
    """A selectbox over positions 0..n-1 shown by label; a missing or out-of-range stored choice falls back."""
    n = len(labels)
    if st.session_state.get(key) not in range(n):
        st.session_state[key] = min(default, n - 1)
    box = container or st
    return box.selectbox(label, range(n), format_func=lambda i: f"{labels[i]} (#{i + 1})", key=key, **kw)
