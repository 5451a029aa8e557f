"""The preset gallery on the home page: one card per experiment, one click to open it."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from ui.classroom.presets import Preset, load_presets
from ui.session.links import link_options, set_link_options
from ui.skeleton.controls import set_current
from ui.text import md_escape

PAGE_STATE = ("whatif_a", "whatif_b", "sbs_good", "sbs_base", "sbs_version", "sbs_preset")


def apply_preset(preset: Preset) -> None:
    """Load a preset into the session: the shared settings now, the page's own state from its link."""
    set_current(preset.settings)
    set_link_options(replace(link_options(), preset=preset.slug))  # the page it opens shows the preset's question
    for key in PAGE_STATE:  # the Compare sides and Step-by-step matrices re-seed from the link's parameters
        st.session_state.pop(key, None)


def preset_gallery() -> None:
    presets, errors = load_presets()
    for err in errors:
        st.warning(f"Preset file skipped: {err}", icon=":material/warning:")
    base = (st.context.url or "").rstrip("/")
    cols = st.columns(3)
    for i, preset in enumerate(presets):
        with cols[i % 3].container(border=True):
            st.markdown(f"**{preset.name}**")
            st.caption(preset.description)
            st.markdown(f"*{md_escape(preset.question)}*")
            if st.button("Open this experiment", key=f"preset_{preset.slug}", icon="▶️"):
                apply_preset(preset)
                st.switch_page(preset.page, query_params=preset.query_params())
            with st.expander("Link to share"):
                st.code(preset.link(base), language=None, wrap_lines=True)
