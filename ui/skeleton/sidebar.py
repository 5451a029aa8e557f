"""The sidebar on a narrow screen: choosing a page closes it (ui/skeleton/sidebar.js, a components v2 module that adds one
click listener to the browser tab). Every page's top mounts it (ui/skeleton/page.py); it draws nothing."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

KEY = "ae_sidebar_closer"  # its element is hidden by ui/skeleton/a11y.css (.st-key-ae_sidebar_closer): it takes no room
_CLOSER = st.components.v2.component(
    "attention_explorer.sidebar_closer", js=(Path(__file__).parent / "sidebar.js").read_text(encoding="utf-8")
)


def close_after_a_choice() -> None:
    """Mount the listener that closes the sidebar after a page link is clicked on a screen up to 768 px wide."""
    _CLOSER(key=KEY, height=0)
