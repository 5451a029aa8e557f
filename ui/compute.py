"""Every cached computation of the app, in one place, under one policy (ui/server/cache.py).

Each page's computations are declared here with their byte budgets; the pages import the cached names from
this module and no other module declares a cached computation. What the modern-attention and Train pages
compute is written as plain functions beside its frozen result dataclasses (attention_core/position_views.py,
efficient_views.py and sinks_linear_views.py, training/views.py); the wrappers here give them the shared cached
run. (The chart and table modules keep byte caches of what they draw -- Altair skeletons, Arrow cells, PNGs --
as rendering internals, and ui/classroom/presets.py, ui/skeleton/page.py and ui/lessons/playground/export.py three small caches of file reads, all
under the same policy; ``cache_report()`` lists those too.)

Each cache is bounded by bytes, keyed by cheap hashable arguments (a WhatIf is a frozen dataclass of
primitives; its hash costs microseconds, where st.cache_data pickles and hashes it on every call), and
returns the stored object itself (read-only) instead of an unpickled copy. Budgets are chosen so that
all caches together stay well inside Community Cloud's memory with the interpreter and libraries loaded;
docs/DESIGN.md ("Memory: the caches") lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attention_core import (
    WhatIf,
    head_divergence_matrix,
    random_projection_weights,
    run_whatif,
    saturation_metrics,
    shuffle_experiment,
    twin_weights,
)
from attention_core.efficient_views import DecodeView, FlashView, WindowView, decode_view, flash_view, window_view
from attention_core.position_views import PositionsView, positions_view
from attention_core.saturation import NEAR_ONE_HOT
from attention_core.sinks_linear_views import (
    LinearView,
    SinksView,
    StreamingView,
    linear_view,
    sinks_view,
    streaming_view,
)
from attention_core.whatif import SOFTMAX_SETTINGS, project_whatif
from ui.server.cache import cached

if TYPE_CHECKING:  # attention_core.training imports torch; see the Train section
    from attention_core.training.trajectory import Trajectory
    from attention_core.training.views import SnapshotView

# ---- shared what-if runs (Playground, Multi-head, Masks, Positional encoding, Compare, ...)


@cached(max_mb=48)  # four d_model x d_model float32 matrices: 16 MB at d_model 1024, 4 MB at 512
def cached_weights(d_model: int, seed: int) -> tuple[np.ndarray, ...]:
    """random_projection_weights(d_model, seed) as a tuple (W_q, W_k, W_v, W_o): every run of the same d_model
    and seed uses them, whatever its temperature, scaling, mask or tokens (14 ms to draw at d_model 512)."""
    return tuple(random_projection_weights(d_model, seed))


_SOFTMAX_DEFAULTS = {n: getattr(WhatIf(), n) for n in SOFTMAX_SETTINGS}


@cached(max_mb=32)  # x, q, k and v: 8 MB at the largest (512 x 1024, float32): four of them
def cached_projection(cfg: WhatIf):
    """project_whatif(cfg) with the kept projection weights; ``cfg`` has its scaling, temperature and mask at their
    defaults (cached_run asks so): every run of the same input, size, heads and seed shares it, and a new
    temperature then costs the softmax and the output only (the projections are about half of a run at 512 x
    1024)."""
    return project_whatif(cfg, cached_weights(cfg.d_model, cfg.seed))


@cached(max_mb=96)  # the largest run (512 x 1024, 16 heads) holds about 46 MB, its projections shared
def cached_run(cfg: WhatIf):
    """run_whatif(cfg), cached per configuration, from the kept projections of its input (cached_projection)."""
    return run_whatif(cfg, projected=cached_projection(cfg.replace(**_SOFTMAX_DEFAULTS)))


@cached(max_mb=4)
def cached_saturation(cfg: WhatIf) -> list[dict[str, float]]:
    """Per-head saturation summaries for cfg: a list of H dicts (see SaturationMetrics.summary)."""
    run = cached_run(cfg)
    return [saturation_metrics(w).summary() for w in run.weights]


@cached(max_mb=4)
def cached_twin_saturation(cfg: WhatIf, head: int) -> dict[str, float]:
    """cached_saturation(...)[head] of cfg's scaling twin (``scaled`` flipped), from cfg's run: the twin's weights need
    only its softmax (twin_weights), not a second run with its projections, and only of the head whose figures the
    page states (at 512 x 16 the twin's figures of every head were half the CPU of a new temperature)."""
    return saturation_metrics(twin_weights(cached_run(cfg), head)).summary()


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
    diffs = [
        shuffle_experiment(
            run.x, *run.w, n_heads=cfg.n_heads, perm=perm, positional=pe, scaled=cfg.scaled, temperature=cfg.temperature
        ).max_diff
        for pe in (False, True)
    ]
    return perm, diffs[0], diffs[1]


# ---- Transformer block


@cached(max_mb=48)
def cached_block(cfg: WhatIf, it_sentence: bool, norm_first: bool, decoder_tokens: int):
    """run_block for the page's setting: the "it" sentence (True) or cfg's own input (False).

    The largest entry (the what-if input at 512 tokens, d_model 1024, 16 heads) is about 40 MB; the 'it'
    sentence at d_model 1024 about 1.5 MB."""
    from attention_core.block_run import run_block
    from attention_core.config import DEFAULT_SENTENCE

    return run_block(cfg, DEFAULT_SENTENCE if it_sentence else None, norm_first, decoder_tokens)


# ---- Playground, Compare, Multi-head, Cross-attention


@cached(max_mb=1)
def cached_logit_std(cfg: WhatIf) -> np.ndarray:
    """(H,) standard deviation of the logits each head's softmax sees (allowed cells only); 8 bytes a head.

    The logits are q . k times one positive factor (1/sqrt(d_k) if scaled, then 1/temperature), so their spread is
    the raw scores' spread times that factor: the spread is computed once per input and mask (138 ms at 512 tokens
    x 16 heads), and a new temperature or scaling only multiplies it."""
    from attention_core.attention import score_factor
    from attention_core.readout import logit_std

    raw = cfg.replace(temperature=1.0, scaled=False)
    if cfg != raw:
        return cached_logit_std(raw) * score_factor(cfg.d_k, cfg.scaled, cfg.temperature)
    run = cached_run(cfg)
    return logit_std(run.q, run.k, scaled=False, temperature=1.0, mask=run.mask)


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
    d_model 1024: weights 17 MB, W_q..W_o 17 MB, inputs and q, k, v 10 MB) holds about 44 MB; the default
    sentences at d_model 64 about 70 kB, so 64 MB keeps the largest run beside hundreds of typical ones."""
    from attention_core.cross_attention import run_cross_attention

    return run_cross_attention(cfg, kv_cfg)


# ---- Softmax saturation
# A new temperature re-applies the softmax to stored raw scores (attention_core/sweep.py): the scores of one
# (d_k, seq_len) are 4 seeds x 256 rows x T float32 (4 KB x T: 2.1 MB at T = 512, 23 MB for the 11 d_k of a
# sweep), the upstream gradients one float64 array of that shape per seq_len (4.2 MB at T = 512). Measured with ui.server.cache.nbytes: a point ~1 KB, a sweep
# (33 points) ~35 KB, the six charts of one setting 20-70 KB (Arrow datasets).

SWEEP_SEEDS, SWEEP_ROWS = 4, 256  # each point: the mean over 4 seeds of 256 query rows


@cached(max_mb=32)
def cached_score_samples(d_k: int, seq_len: int, n_seeds: int = SWEEP_SEEDS, n_rows: int = SWEEP_ROWS):
    """score_samples: the raw scores of one (d_k, seq_len), whatever the scaling and temperature."""
    from attention_core.sweep import score_samples

    return score_samples(d_k, seq_len, n_seeds, n_rows)


@cached(max_mb=8)
def cached_upstream(seq_len: int, n_seeds: int = SWEEP_SEEDS, n_rows: int = SWEEP_ROWS):
    """upstream_gradients of one seq_len (the same for every d_k)."""
    from attention_core.sweep import upstream_gradients

    return upstream_gradients(seq_len, n_seeds, n_rows)


@cached(max_mb=2)
def cached_saturation_point(d_k: int, seq_len: int, scaled: bool, temperature: float):
    """saturation_point at the page's seeds and rows (the marked point at the current d_k), from stored scores."""
    from attention_core.sweep import saturation_point

    return saturation_point(
        d_k, seq_len, scaled, temperature, SWEEP_SEEDS, SWEEP_ROWS, cached_score_samples, cached_upstream
    )


@cached(max_mb=8)
def cached_saturation_sweep(seq_len: int, temperature: float):
    """saturation_sweep over d_k = 1 .. 1024 at the page's seeds and rows, from stored scores."""
    from attention_core.sweep import saturation_sweep

    return saturation_sweep(seq_len, temperature, 1024, SWEEP_SEEDS, SWEEP_ROWS, cached_score_samples, cached_upstream)


SWEEP_CHARTS = {  # measure: (title, y axis title, log y axis, with the unscaled-at-tau*sqrt(d_k) curve, theory lines)
    "score_std": ("spread (std) of the scores; dashed: theory √d_k and 1", "std of the scores", True, False, True),
    "max_weight": ("mean largest weight of a row", "largest weight", False, True, False),
    "effective_tokens": ("effective tokens e^entropy", "effective tokens", False, False, False),
    "near_one_hot_share": (
        f"share of near-one-hot rows (largest weight > {NEAR_ONE_HOT:g})",
        "near-one-hot share",
        False,
        False,
        False,
    ),
    "grad_norm": ("gradient reaching the scores, ‖∂L/∂logits‖", "gradient length", True, False, False),
}


@cached(max_mb=16)
def cached_sweep_specs(seq_len: int, temperature: float, d_k: int, scaled: bool) -> dict[str, dict]:
    """The sweep charts of the Softmax saturation page by measure, as Vega-Lite specs with Arrow datasets (their
    layouts are built by Altair once per kind, ui/lessons/softmax_saturation/charts.py)."""
    from ui.lessons.softmax_saturation.charts import sweep_chart_spec

    sweep = cached_saturation_sweep(seq_len, temperature)
    now = cached_saturation_point(d_k, seq_len, scaled, temperature)
    other = cached_saturation_point(d_k, seq_len, not scaled, temperature)
    return {
        m: sweep_chart_spec(sweep, m, title, y, now, other, log_y=log_y, with_sqrt_dk=sq, theory=th)
        for m, (title, y, log_y, sq, th) in SWEEP_CHARTS.items()
    }


# ---- Real model


class ModelHolder:
    """The loaded Hugging Face models, shared by every session: at most ``max_models`` (least recently used
    goes first; bert-base is about 0.45 GB in memory, GPT-2 0.5 GB). A failed load is not kept."""

    def __init__(self, max_models: int = 2):
        import threading
        from collections import OrderedDict

        self.max_models = max_models
        self._models: OrderedDict = OrderedDict()  # name -> (model, tokenizer)
        self._lock = threading.Lock()  # one load at a time: thirty sessions do not load the same model thirty times

    def get(self, name: str):
        """(model, tokenizer) for ``name``, loading it on first use (raises ModelLoadError)."""
        from attention_core.hf import load_pretrained

        with self._lock:
            if name in self._models:
                self._models.move_to_end(name)
                return self._models[name]
            loaded = load_pretrained(name)
            self._models[name] = loaded
            while len(self._models) > self.max_models:
                self._models.popitem(last=False)
            return loaded

    def __contains__(self, name: str) -> bool:
        return name in self._models


MODELS = ModelHolder(max_models=2)


@cached(max_mb=100)
def cached_model_forward(name: str, text: str, max_tokens: int = 128):
    """model_forward for a model, a sentence and a token limit: the model's weights and each attention layer's
    input (0.3 MB for the embedded model on the default sentence, 85 MB at 512 tokens: L x H x T x T float32
    weights are 75 MB of it), so one run at 512 tokens and many short ones stay."""
    from attention_core.model_views import model_forward

    model, tokenizer = MODELS.get(name)
    return model_forward(model, tokenizer, text, max_tokens=max_tokens)


def model_weights_run(name: str, text: str, max_tokens: int = 128):
    """The cached forward pass as an AttentionRun without q, k and parity: what the model view and the heads'
    figures need, ready before attention_core recomputes anything (not cached itself: it wraps the cached arrays)."""
    from attention_core.model_views import attention_run

    return attention_run(MODELS.get(name)[0], cached_model_forward(name, text, max_tokens), recompute=False)


@cached(max_mb=100)
def cached_attention_run(name: str, text: str, max_tokens: int = 128):
    """The cached forward pass with every layer recomputed by attention_core (q, k and the parity per layer): it
    shares the forward's weights, adding 9 MB of q and k at 512 tokens (its budget counts the shared 75 MB too)."""
    from attention_core.model_views import attention_run

    return attention_run(MODELS.get(name)[0], cached_model_forward(name, text, max_tokens))


@cached(max_mb=2)
def cached_head_roles(name: str, text: str, max_tokens: int = 128):
    """(HeadRoles, random attention's Sharpness at the model's shape, or None when the toy pages cannot make
    that shape): a few kilobytes an entry."""
    from attention_core.real_heads import head_roles

    inputs = cached_model_forward(name, text, max_tokens).run.layer_inputs  # L x (T, d_model), None if not parsed
    arun = model_weights_run(name, text, max_tokens)
    roles = head_roles(arun.attentions, arun.tokens, arun.special)
    L, H, T = arun.shape
    return roles, (cached_random_sharpness(T, inputs[0].shape[-1], H) if inputs is not None else None)


@cached(max_mb=1)
def cached_random_sharpness(T: int, d_model: int, n_heads: int):
    """Per-head saturation of the toy pages' seeded random attention at a model's shape (T tokens, d_model,
    n_heads), from their own cached run; None for a shape the toy pages do not allow. Under 1 KB an entry."""
    from attention_core.real_heads import sharpness

    try:
        cfg = WhatIf(seq_len=T, d_model=d_model, n_heads=n_heads)
    except ValueError:  # a model wider than the toy pages' d_model
        return None
    return sharpness(cached_run(cfg).weights)  # (H,) each


@cached(max_mb=16)
def cached_model_view(name: str, text: str, max_tokens: int, hide: bool) -> bytes:
    """The canvas model view's bytes (ui.lessons.real_model.model_view): 1 byte a weight, deflated; about 5 MB for the
    embedded model at 512 tokens, a few kilobytes on the default sentence."""
    from attention_core.hf import hide_special
    from ui.lessons.real_model.model_view import model_view_payload

    arun = model_weights_run(name, text, max_tokens)
    attn, tokens = arun.attentions, list(arun.tokens)
    if hide:
        attn = hide_special(attn, arun.special)
        tokens = [t for t, s in zip(arun.tokens, arun.special) if not s]
    L, H, T = attn.shape[0], attn.shape[1], attn.shape[2]
    description = (
        f"Model view: {L} layers x {H} heads of {name} on the sentence, each a {T} x {T} map of weights, "
        "rows are queries and columns keys, colour 0 (purple) to 1 (yellow) on one scale for every head"
        + ", where a tile has fewer pixels than tokens each pixel the largest weight it covers"
        + (", special tokens hidden and rows renormalised." if hide else ".")
    )
    return model_view_payload(attn, tokens, description)


# ---- Implementations


@cached(max_mb=1)
def cached_implementations(cfg: WhatIf):
    """compare_implementations on cfg's input, weights and mask: every implementation runs (and is timed) once
    per setting. A result is seven short rows (under 2 KB), so 1 MB keeps hundreds of settings."""
    from attention_core.implementations import compare_implementations

    run = cached_run(cfg)
    return tuple(
        compare_implementations(
            run.x, *run.w, n_heads=cfg.n_heads, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature
        )
    )


# ---- Positional encoding


@cached(max_mb=16)
def cached_positions(T: int, d_model: int):
    """(PE (T, d_model), PE PE^T (T, T), mean similarity by distance (T,)); at most 4 MB an entry (T 512,
    d_model 1024), so the last few settings stay."""
    from attention_core.positional import position_similarity, sinusoidal_positional_encoding

    return (sinusoidal_positional_encoding(T, d_model), *position_similarity(T, d_model))


# ---- Masks


@cached(max_mb=64)
def cached_mask_lab(cfg: WhatIf, head: int):
    """mask_lab for one head of cfg's unmasked run (Masks page). About 0.02 MB at T = 8 and 22 MB at T = 512."""
    from attention_core.mask_demo import mask_lab

    run = cached_run(cfg.replace(mask="none"))
    return mask_lab(
        run.q[head], run.k[head], run.v[head], cfg.pad_count, scaled=cfg.scaled, temperature=cfg.temperature
    )


# ---- Positions, Efficient attention, Sinks and linear attention
# The views are pure functions (attention_core/position_views.py, efficient_views.py, sinks_linear_views.py);
# the ones on the what-if's input get the shared cached run from here. Sizes measured with ui.server.cache.nbytes.


@cached(max_mb=32)
def cached_positions_view(cfg: WhatIf, method: str, base: float, train_len: int, head: int) -> PositionsView:
    """positions_view on cfg's run without the sidebar's positional encoding (Positions page). About 5 kB at
    the defaults, 18 MB at 512 tokens and 16 heads (the (H, T, T) weights and a (T, T) score table)."""
    return positions_view(cached_run(cfg.replace(positional=False)), method, base, train_len, head)


@cached(max_mb=48)
def cached_decode_view(cfg: WhatIf, kv_heads: int) -> DecodeView:
    """decode_view: cfg's input decoded with a cache of ``kv_heads`` K/V heads (Efficient attention). About
    24 kB at the defaults, 14 MB at 256 tokens and d_model 1024, 33-40 MB at 512 tokens: the budget keeps one
    of the largest (with 24 MB it was never kept, and every rerun decoded again, about 1.1 s)."""
    return decode_view(cached_run(cfg), kv_heads)


@cached(max_mb=8)
def cached_window_view(T: int, window: int, layers: int) -> WindowView:
    """window_view: a sliding window's mask and receptive field (Efficient attention). At most 0.3 MB an entry
    (512 tokens, 32 layers)."""
    return window_view(T, window, layers)


@cached(max_mb=16)
def cached_flash_view(cfg: WhatIf, head: int, tile: int) -> FlashView:
    """flash_view on one head of cfg's unmasked run under cfg's mask (Efficient attention). One entry per tile
    size: 0.14 MB at 512 tokens in one tile, 5.5 MB in 512 tiles of one key (every tile's statistics)."""
    return flash_view(cached_run(cfg.replace(mask="none")), cfg.mask, head, tile)


@cached(max_mb=32)
def cached_sinks_view(cfg: WhatIf, sinks: tuple[float, ...], no_sink: bool) -> SinksView:
    """sinks_view on cfg's run without positional encoding (Sinks and linear attention). About 2 kB at the
    defaults, 16 MB at 512 tokens and 16 heads (the (H, T, T) weights)."""
    return sinks_view(cached_run(cfg.replace(positional=False)), sinks, no_sink)


@cached(max_mb=4)
def cached_streaming_view(T: int, n_sink: int, window: int) -> StreamingView:
    """streaming_view: StreamingLLM's mask (Sinks and linear attention). At most 0.25 MB (512 tokens)."""
    return streaming_view(T, n_sink, window)


@cached(max_mb=16)
def cached_linear_view(cfg: WhatIf, head: int) -> LinearView:
    """linear_view on one head of cfg's run without positional encoding (Sinks and linear attention). At most
    2 MB (two (T, T) float32 maps at 512 tokens)."""
    return linear_view(cached_run(cfg.replace(positional=False)), head)


# ---- Train
# attention_core.training imports torch (about 2 s): it is imported on the first call, so the pages that never train
# do not load torch.


@cached(max_mb=16)
def cached_ready_trajectory(name: str) -> Trajectory:
    """load_ready(name): a shipped run, read once per process. The two shipped runs hold 1.6 and 1.1 MB."""
    from attention_core.training.views import load_ready

    return load_ready(name)


@cached(max_mb=4)
def cached_ready_layers() -> dict[str, dict]:
    """The shipped runs' four chart layers (loss and accuracy of both runs, prefix-matching and previous-token
    scores of every head), by metric or score name: built once per process, so a scrub redraws only the rules.
    The Arrow rows are about 0.5 MB in all."""
    import pandas as pd

    from attention_core.training.ready import READY
    from ui.lessons.train.charts import curve_frame, curves_layer, score_frame, scores_layer

    two, one = (cached_ready_trajectory(r.name) for r in READY)
    df = pd.concat((curve_frame(two, "2 layers"), curve_frame(one, "1 layer")))
    sf = pd.concat((score_frame(two, "2 layers"), score_frame(one, "1 layer")))
    return {m: curves_layer(df, m, by_run=True) for m in ("loss", "accuracy")} | {
        sc: scores_layer(sf, sc, by_run=True) for sc in ("prefix-matching", "previous-token")
    }


@cached(max_mb=16)
def cached_ready_snapshot_view(name: str, index: int, layer: int, head: int) -> SnapshotView:
    """snapshot_view of snapshot ``index`` of the shipped run ``name``, shared by every session. About 20 kB
    an entry (maps of every head on the probe), so 16 MB keeps every snapshot a class opens."""
    from attention_core.training.views import snapshot_view

    traj = cached_ready_trajectory(name)
    return snapshot_view(traj.cfg, traj.params[index], layer, head)
