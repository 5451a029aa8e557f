"""Every cached computation of the app, in one place, under one policy (ui/cache.py).

Each cache is bounded by bytes, keyed by cheap hashable arguments (a WhatIf is a frozen dataclass of
primitives; its hash costs microseconds, where st.cache_data pickles and hashes it on every call), and
returns the stored object itself (read-only) instead of an unpickled copy. Budgets are chosen so that
all caches together stay well inside Community Cloud's memory with the interpreter and libraries loaded;
README "Memory" lists them.
"""

from __future__ import annotations

import numpy as np

from attention_core import WhatIf, head_divergence_matrix, run_whatif, saturation_metrics, shuffle_experiment
from ui.cache import cached

# ---- shared what-if runs (Playground, Multi-head, Masks, Positional encoding, Compare, ...)


@cached(max_mb=192)
def cached_run(cfg: WhatIf):
    """run_whatif(cfg), cached per configuration."""
    return run_whatif(cfg)


@cached(max_mb=4)
def cached_saturation(cfg: WhatIf) -> list[dict[str, float]]:
    """Per-head saturation summaries for cfg: a list of H dicts (see SaturationMetrics.summary)."""
    run = cached_run(cfg)
    return [saturation_metrics(w).summary() for w in run.weights]


@cached(max_mb=4)
def cached_head_divergence(cfg: WhatIf) -> np.ndarray:
    """(H, H) Jensen-Shannon divergence between the heads of cfg's run (O(H^2 T^2): worth keeping)."""
    return head_divergence_matrix(cached_run(cfg).weights)


@cached(max_mb=4)
def cached_shuffle(cfg: WhatIf, shuffle: int) -> tuple[np.ndarray, float, float]:
    """The shuffle experiment on cfg's input (without positions) and weights, shuffle number ``shuffle``.

    Returns (perm, max difference without positional encoding, max difference with it)."""
    run = cached_run(cfg.replace(positional=False))
    perm = np.random.default_rng([cfg.seed, shuffle]).permutation(run.T)
    diffs = [shuffle_experiment(run.x, *run.w, n_heads=cfg.n_heads, perm=perm, positional=pe, scaled=cfg.scaled,
                                temperature=cfg.temperature)["max_diff"] for pe in (False, True)]
    return perm, diffs[0], diffs[1]


# ---- Playground, Compare, Multi-head, Cross-attention (pages/1, 8, 4, 7)


@cached(max_mb=1)
def cached_logit_std(cfg: WhatIf) -> np.ndarray:
    """(H,) standard deviation of the logits each head's softmax sees (allowed cells only); 8 bytes a head."""
    from attention_core.readout import logit_std

    run = cached_run(cfg)
    return logit_std(run.q, run.k, scaled=cfg.scaled, temperature=cfg.temperature, mask=run.mask)


@cached(max_mb=48)
def cached_comparison(cfg_a: WhatIf, cfg_b: WhatIf, head_a: int, head_b: int):
    """compare_runs of the two sides' runs (Compare page): one T x T and one T x d_model difference, at most
    512 x 512 + 512 x 1024 float32 = 3 MB, so 48 MB keeps a class's worth of pairs at their largest."""
    from attention_core.readout import compare_runs

    return compare_runs(cached_run(cfg_a), cached_run(cfg_b), head_a, head_b)


@cached(max_mb=1)
def cached_heads_demo(scaled: bool, temperature: float, seed: int):
    """The class-notes example with one purposeful and two random heads (Multi-head page); about 1 kB."""
    from attention_core.class_notes import purposeful_vs_random_heads

    return purposeful_vs_random_heads(scaled, temperature, seed)


@cached(max_mb=64)
def cached_cross(cfg: WhatIf, kv_cfg: WhatIf):
    """run_cross_attention(cfg, kv_cfg) (Cross-attention page). The largest run (512 x 512 tokens, 16 heads,
    d_model 1024) holds about 24 MB; typical ones well under 1 MB."""
    from attention_core.cross_attention import run_cross_attention

    return run_cross_attention(cfg, kv_cfg)
