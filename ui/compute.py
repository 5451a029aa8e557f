"""Cached core calls. Arguments are primitives (a WhatIf is a frozen dataclass of primitives), and
every cache is bounded so that thirty students sharing a server do not exhaust its memory."""

from __future__ import annotations

import streamlit as st

import numpy as np

from attention_core import WhatIf, head_divergence_matrix, run_whatif, saturation_metrics, shuffle_experiment


@st.cache_data(max_entries=64, show_spinner=False)
def cached_run(cfg: WhatIf):
    """run_whatif(cfg), cached per configuration."""
    return run_whatif(cfg)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_saturation(cfg: WhatIf) -> list[dict[str, float]]:
    """Per-head saturation summaries for cfg: a list of H dicts (see SaturationMetrics.summary)."""
    run = cached_run(cfg)
    return [saturation_metrics(w).summary() for w in run.weights]


@st.cache_data(max_entries=64, show_spinner=False)
def cached_head_divergence(cfg: WhatIf) -> np.ndarray:
    """(H, H) Jensen-Shannon divergence between the heads of cfg's run (O(H^2 T^2): worth keeping)."""
    return head_divergence_matrix(cached_run(cfg).weights)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_shuffle(cfg: WhatIf, shuffle: int) -> tuple[np.ndarray, float, float]:
    """The shuffle experiment on cfg's input (without positions) and weights, shuffle number ``shuffle``.

    Returns (perm, max difference without positional encoding, max difference with it)."""
    run = cached_run(cfg.replace(positional=False))
    perm = np.random.default_rng([cfg.seed, shuffle]).permutation(run.T)
    diffs = [shuffle_experiment(run.x, *run.w, n_heads=cfg.n_heads, perm=perm, positional=pe, scaled=cfg.scaled,
                                temperature=cfg.temperature)["max_diff"] for pe in (False, True)]
    return perm, diffs[0], diffs[1]
