"""What the Sinks and linear attention page computes for one setting: sink attention per head and its two
invariants, StreamingLLM's mask, and linear attention's three equal forms beside softmax attention.

Pure NumPy on a what-if run (no Streamlit, no caches): ui/compute.py (the app) declares the cached versions the page
calls and hands them the shared cached run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import attention_scores, scaled_dot_product_attention, softmax
from .linear_attention import linear_attention, linear_attention_factorised, linear_attention_recurrent
from .sinks import sink_attention, streaming_mask
from .whatif import WhatIfRun


@dataclass(frozen=True)
class SinksView:
    """Sink attention on every head of the what-if's input, with the plain attention it must reduce to."""

    tokens: tuple[str, ...]  # (T,) token labels
    weights: np.ndarray  # (H, T, T) float32 weights on the real tokens
    sink_weight: np.ndarray  # (H, T) float32 weight each query row gives the sink
    real_sum: np.ndarray  # (H, T) float64 weights on real tokens summed per row
    diff_reference: float  # max |weights - softmax([scores, sink]) without the sink column|
    diff_plain: float  # max |sink attention with sink -inf - plain attention| (weights)


def sinks_view(run: WhatIfRun, sinks: tuple[float, ...], no_sink: bool) -> SinksView:
    """sink_attention on the run's q, k, v (its mask) with one sink logit per head, and the two invariants
    measured on it. ``no_sink`` sets every sink to -inf (plain attention)."""
    cfg = run.config
    H, T = run.q.shape[0], run.T
    s = np.full(H, -np.inf) if no_sink else np.asarray(sinks, dtype=np.float64)  # (H,)
    q, k, v = (a.astype(np.float64) for a in (run.q, run.k, run.v))
    _, w, sink_w = sink_attention(q, k, v, s, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    # reference: one softmax over [scores, sink], then drop the sink column
    scores = attention_scores(q, k, scaled=cfg.scaled)  # (H, T, T)
    both = np.concatenate([scores, np.broadcast_to(np.where(np.isfinite(s), s, 0.0)[:, None, None], (H, T, 1))], -1)
    allowed = np.ones((H, T, T), bool) if run.mask is None else np.broadcast_to(run.mask, (H, T, T))
    where = np.concatenate([allowed, np.broadcast_to(np.isfinite(s)[:, None, None], (H, T, 1))], -1)
    ref = softmax(both, temperature=cfg.temperature, where=where)[..., :-1]  # (H, T, T)
    _, w_none, _ = sink_attention(q, k, v, -np.inf, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    _, plain = scaled_dot_product_attention(q, k, v, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    return SinksView(
        tuple(run.tokens),
        w.astype(np.float32),
        sink_w.astype(np.float32),
        w.sum(-1),
        float(np.abs(w - ref).max()),
        float(np.abs(w_none - plain).max()),
    )


@dataclass(frozen=True)
class StreamingView:
    """StreamingLLM's mask for T tokens and what the last query keeps."""

    mask: np.ndarray  # (T, T) bool, True = may attend
    kept_last: tuple[int, ...]  # key positions (0-based) the last query keeps
    allowed_share: float  # allowed pairs / T^2
    causal_share: float  # pairs a full causal mask allows / T^2


def streaming_view(T: int, n_sink: int, window: int) -> StreamingView:
    """StreamingLLM's mask on T tokens (``n_sink`` first tokens kept, plus a window of ``window``)."""
    m = streaming_mask(T, n_sink, window)
    return StreamingView(m, tuple(int(j) for j in np.nonzero(m[-1])[0]), float(m.mean()), (T + 1) / (2 * T))


@dataclass(frozen=True)
class LinearView:
    """Linear attention on one head of the what-if's input, beside softmax attention."""

    softmax_weights: np.ndarray  # (T, T) float32 softmax attention of the head (the sidebar's mask)
    linear_weights: np.ndarray  # (T, T) float32 normalised phi(q) phi(k)^T (causal when the mask is)
    causal: bool  # the sidebar's mask is causal
    diff_recurrent: float  # max |causal parallel form - recurrent form|
    diff_factorised: float  # max |non-causal parallel form - phi(q) (phi(k)^T v) form|
    state_numbers: int  # d_k * d_v + d_k: the recurrent state S and normaliser z
    d_k: int  # query/key width of the head
    d_v: int  # value width of the head

    @property
    def mean_peaks(self) -> tuple[float, float]:
        """A row's largest weight, averaged over the rows: (softmax, linear). The lower, the flatter the map."""
        return float(self.softmax_weights.max(axis=1).mean()), float(self.linear_weights.max(axis=1).mean())


def linear_view(run: WhatIfRun, head: int) -> LinearView:
    """Linear attention (phi = elu + 1) on head ``head`` of the run in its parallel, recurrent and factorised
    forms, beside the run's softmax weights (its mask)."""
    cfg = run.config
    q, k, v = (a[head].astype(np.float64) for a in (run.q, run.k, run.v))  # (T, d_k) each
    causal = cfg.causal
    par_c, w_c = linear_attention(q, k, v, causal=True)
    rec, _, _ = linear_attention_recurrent(q, k, v)
    par_n, w_n = linear_attention(q, k, v)
    fac, _, _ = linear_attention_factorised(q, k, v)
    d_k, d_v = q.shape[1], v.shape[1]
    return LinearView(
        run.weights[head].astype(np.float32),
        (w_c if causal else w_n).astype(np.float32),
        causal,
        float(np.abs(par_c - rec).max()),
        float(np.abs(par_n - fac).max()),
        d_k * d_v + d_k,
        d_k,
        d_v,
    )
