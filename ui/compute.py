"""Cached core calls. Arguments are primitives (a WhatIf is a frozen dataclass of primitives), and
every cache is bounded so that thirty students sharing a server do not exhaust its memory."""

from __future__ import annotations

import streamlit as st

from attention_core import WhatIf, run_whatif, saturation_metrics


@st.cache_data(max_entries=64, show_spinner=False)
def cached_run(cfg: WhatIf):
    """run_whatif(cfg), cached per configuration."""
    return run_whatif(cfg)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_saturation(cfg: WhatIf) -> list[dict[str, float]]:
    """Per-head saturation summaries for cfg: a list of H dicts (see SaturationMetrics.summary)."""
    run = cached_run(cfg)
    return [saturation_metrics(w).summary() for w in run.weights]
