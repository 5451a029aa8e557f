"""The sidebar's page list as one element (ui/skeleton/page_list.js and .css, a components v2 module).

Seventeen ``st.page_link`` elements were seventeen of the 87-99 messages of every page run, and a sixth of its server
CPU: the class's server pays for a page run once per student whenever the teacher moves the class. One element
carries the whole list ({pages, current page, base path}); its links are real links (a new tab, a copied address),
and a plain click reports the page's address (the ``go`` trigger). The server then switches this session to that
page before the next run draws anything (:func:`switch_if_chosen`, first in every page's top), as Streamlit's own
page links do: the session, its setting and its class stay. On a screen where the sidebar lies over the page the
click also closes the sidebar, as Streamlit's own page list does.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.classroom.pulse_device import base_path
from ui.skeleton.registry import HOME_INFO, PAGES, address

KEY = "ae_pages"
_CHOSEN = "ae_pages_chosen"  # the page file a click chose, switched to by the next run's top
_HERE = Path(__file__).parent
_LIST = st.components.v2.component(
    "attention_explorer.page_list",
    js=(_HERE / "page_list.js").read_text(encoding="utf-8"),
    css=(_HERE / "page_list.css").read_text(encoding="utf-8"),
)
_BY_ADDRESS = {p.address: p.path for p in (HOME_INFO, *PAGES)}
_ITEMS = [[p.address, p.label, p.symbol] for p in (HOME_INFO, *PAGES)]


def _chosen() -> None:
    """on_go_change: the page a click chose, if it is one of the app's (anything else the browser sends is dropped)."""
    state = st.session_state.get(KEY)
    go = state.get("go") if hasattr(state, "get") else None
    if isinstance(go, str) and go in _BY_ADDRESS:
        st.session_state[_CHOSEN] = _BY_ADDRESS[go]


def switch_if_chosen() -> None:
    """Go to the page the list's click chose (before this run draws anything: nothing of the page left is sent)."""
    chosen = st.session_state.pop(_CHOSEN, None)
    if chosen:  # the link's query stays (as a page link's click keeps it): no address without it enters the history
        st.switch_page(chosen, query_params=st.query_params.to_dict())


def page_list(place, current: str) -> None:
    """Every page of the app in reading order, ``current`` (its file) marked, into ``place`` (the sidebar)."""
    with place:
        _LIST(
            key=KEY,
            data={"pages": _ITEMS, "current": address(current), "base": base_path()},
            on_go_change=_chosen,
            height="content",
        )
