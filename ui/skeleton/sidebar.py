"""The sidebar's page list: Streamlit's own navigation, named, iconed and ordered by ui/skeleton/registry.PAGES.

``streamlit_app.py`` is the app's entry. Every run starts there: :func:`as_home_page` hands the run to
``st.navigation`` with Home and every page in reading order, which runs the page the session is on; Home is
``streamlit_app.py`` itself, run again as a page, and there :func:`as_home_page` says so and the file draws Home.

Why Streamlit's own list: it is drawn by the browser from the one navigation message a run sends anyway. The
app drew its list as 18 page links and a divider, 19 of the 87-99 messages a page run sent, each an element the
server builds, hashes and sends on every run of every student's page (about 7% of a run's server CPU). After a
choice in it the sidebar closes where it covers the page (:func:`close_after_a_choice`).

Streamlit 1.67 still sees the ``pages/`` folder at a process's first run and runs that one the legacy way, without
the entry (``PagesManager.uses_pages_directory``); ``st.navigation`` turns that off for every later run. So a page
that finds the legacy way in force turns it off and reruns before it draws (:func:`rerun_through_the_entry`): once a
process, on its first page load.
"""

from __future__ import annotations

import threading
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui.skeleton.registry import HOME, HOME_INFO, PAGES

KEY = "ae_sidebar_closer"  # its element is hidden by ui/skeleton/a11y.css (.st-key-ae_sidebar_closer): it takes no room
_CLOSER = st.components.v2.component(
    "attention_explorer.sidebar_closer", js=(Path(__file__).parent / "sidebar.js").read_text(encoding="utf-8")
)

_home = threading.local()  # set while st.navigation runs the page: the entry's second execution is Home's


def pages() -> list:
    """Home and the pages in reading order, as st.navigation lists them (their addresses from their files)."""
    home = st.Page(HOME, title=HOME_INFO.label, icon=HOME_INFO.icon, default=True)
    return [home, *(st.Page(p.path, title=p.label, icon=p.icon) for p in PAGES)]


def as_home_page() -> bool:
    """Called by streamlit_app.py first: True when this execution of it is the Home page; otherwise run the page
    the session is on through st.navigation (every page listed in the sidebar) and return False."""
    if getattr(_home, "routing", False):
        return True
    _home.routing = True
    try:
        st.navigation(pages(), position="sidebar", expanded=True).run()
    finally:
        _home.routing = False
    return False


def rerun_through_the_entry() -> None:
    """A process's first run went the legacy pages/ way (the page run without the entry, Streamlit's own list named
    from the files, and the widgets' ids of that way, which differ from the entry's): turn it off and run again at
    once, before anything is drawn or any widget read, so the session's widgets are the entry's from the start."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def close_after_a_choice() -> None:
    """Mount the listener that closes the sidebar after a page is chosen in it on a screen up to 768 px wide
    (ui/skeleton/sidebar.js; it draws nothing)."""
    _CLOSER(key=KEY, height=0)
