"""What the Efficient attention page computes for one setting: a KV-cache decode beside one causal pass, a
sliding window's receptive field, FlashAttention's tiles beside the full softmax.

Pure NumPy on the what-if's input (no Streamlit, no caches): ui/compute.py (the app) declares the cached versions the
page calls, and hands :func:`flash_view` the shared cached run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import causal_mask, scaled_dot_product_attention
from .flash import FlashRun, flash_attention_steps
from .gqa import gqa_self_attention
from .kv_cache import DecodeRun, decode_with_cache
from .mask_demo import clamp_pad
from .whatif import WhatIfRun
from .windows import influence_by_layer, receptive_field_formula, sliding_window_mask


@dataclass(frozen=True)
class DecodeView:
    """A KV-cache decode of the what-if's input beside the one-pass causal reference."""

    tokens: tuple[str, ...]  # (T,) labels
    run: DecodeRun  # every step and the final cache
    full_output: np.ndarray  # (T, d_model) one causal pass (gqa_self_attention = multi-head when G = H)
    full_weights: np.ndarray  # (H, T, T) the causal pass's weights
    max_diff: float  # largest |decoded - one pass| over every output number


def decode_view(whatif: WhatIfRun, kv_heads: int) -> DecodeView:
    """Decode the what-if run's input token by token with a cache of ``kv_heads`` K/V heads (its K/V projections
    cut to the first G heads' columns, G * d_k); compare with one causal pass."""
    cfg = whatif.config
    cols = kv_heads * cfg.d_k
    w_q, w_k, w_v, w_o = whatif.w
    w = (w_q, w_k[:, :cols], w_v[:, :cols], w_o)
    tokens, x = whatif.tokens, whatif.x
    run = decode_with_cache(
        x, *w, n_heads=cfg.n_heads, n_kv_heads=kv_heads, scaled=cfg.scaled, temperature=cfg.temperature
    )
    full, weights = gqa_self_attention(
        x,
        *w,
        n_heads=cfg.n_heads,
        n_kv_heads=kv_heads,
        mask=causal_mask(x.shape[0]),
        scaled=cfg.scaled,
        temperature=cfg.temperature,
    )
    return DecodeView(tuple(tokens), run, full, weights.astype(np.float32), float(np.abs(run.output - full).max()))


@dataclass(frozen=True)
class WindowView:
    """A sliding-window mask and the receptive field it gives over layers."""

    mask: np.ndarray  # (T, T) bool, True = may attend
    influence: np.ndarray  # (L + 1, T) bool: tokens that can influence the last token after 0..L layers
    measured: np.ndarray  # (L + 1,) tokens that can influence the last token after 0..L layers
    formula: tuple[int, ...]  # (L + 1,) min(T, l (w - 1) + 1) for l = 0..L
    scores: int  # scores one layer computes: the window mask's allowed cells
    causal_scores: int  # the same for the plain causal mask, T (T + 1) / 2


def window_view(T: int, window: int, layers: int) -> WindowView:
    """The window-``window`` mask on T tokens and the last token's receptive field after 0..``layers`` layers,
    measured and by the formula."""
    influence = influence_by_layer(T, window, layers)
    formula = (1, *(receptive_field_formula(window, layer, T) for layer in range(1, layers + 1)))
    mask = sliding_window_mask(T, window)  # (T, T)
    causal = int(causal_mask(T).sum())
    return WindowView(mask, influence, influence.sum(axis=1), formula, int(mask.sum()), causal)


@dataclass(frozen=True)
class FlashView:
    """The tiled online softmax of one head beside the full softmax."""

    run: FlashRun  # output and every tile's running statistics
    max_diff: float  # largest |tiled - full| output difference
    mask_note: str  # which mask was applied
    rescaled_rows: np.ndarray  # (T,) bool: a later tile raised the row's running max, rescaling its sum and output


def flash_view(run: WhatIfRun, mask: str, head: int, tile: int) -> FlashView:
    """flash_attention_steps on head ``head`` of an unmasked what-if run under the sidebar's ``mask`` (a WhatIf
    mask name; padding uses the run's pad count), and the full softmax's output.

    Args:
        run: the what-if run with ``mask="none"`` (the tiles apply the mask themselves).
        mask: the mask to apply, as WhatIf.mask ("none", "causal", "padding", "causal+padding").
        head: which head, 0 <= head < H.
        tile: keys per tile.
    """
    if run.config.mask != "none":
        raise ValueError(f"flash_view needs the unmasked run (mask='none'); got mask={run.config.mask!r}")
    cfg = run.config
    q, k, v = run.q[head], run.k[head], run.v[head]  # (T, d_k) each
    T = run.T
    want = cfg.replace(mask=mask)  # the WhatIf mask names checked, and their .causal / .padded
    pad = clamp_pad(cfg.pad_count, T) if want.padded else 0
    keys = (np.arange(T) < T - pad)[None, :]  # (1, T): a padding mask broadcasts over queries, no T x T copy
    causal = want.causal
    key_mask = keys if pad else None
    flash = flash_attention_steps(
        q, k, v, mask=key_mask, causal=causal, tile_size=tile, scaled=cfg.scaled, temperature=cfg.temperature
    )
    full_mask = key_mask if not causal else (causal_mask(T) if key_mask is None else causal_mask(T) & key_mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask=full_mask, scaled=cfg.scaled, temperature=cfg.temperature)
    note = " and ".join(n for n, on in (("causal (computed per tile)", causal), (f"padding ({pad} keys)", pad)) if on)
    rescaled = np.zeros(T, dtype=bool)  # (T,)
    for s in flash.steps:
        rescaled |= s.rescaled
    return FlashView(flash, float(np.abs(flash.output - ref).max()), note or "none", rescaled)
