"""What the Positions page computes for one setting: sinusoidal, learned, RoPE and ALiBi on the same input,
their scores by offset, and what each knows beyond the trained length.

Pure NumPy on a what-if run (no Streamlit, no caches): ui/compute.py (the app) declares the cached version the page
calls and hands it the shared cached run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .alibi import alibi_slopes
from .positions import (
    METHODS,
    OffsetProfile,
    angles_beyond_training,
    learned_position_table,
    lookup_positions,
    offset_profile,
    pair_scores,
    position_attention,
)
from .whatif import WhatIfRun


@dataclass(frozen=True)
class MethodSummary:
    """How one position method's score between the same two tokens varies with their absolute positions."""

    method: str  # one of METHODS
    spread: float | None  # largest spread of the scores that share an offset; None when the method cannot run
    positions: int  # positions compared (fewer than T for a learned table shorter than T)
    note: str  # why the method is restricted or cannot run ("" when it runs on every position)


@dataclass(frozen=True)
class PositionsView:
    """Everything the Positions page draws for one setting."""

    tokens: tuple[str, ...]  # (T,) token labels
    pair: tuple[str, str]  # the query token and the key token moved across positions
    scores: np.ndarray | None  # (P, P) their score at query position m and key position n (selected method)
    profile: OffsetProfile | None  # scores grouped by offset n - m
    weights: np.ndarray | None  # (H, T, T) float32 weights of the selected method on the input
    problem: str  # why the selected method cannot show weights here ("" when it can)
    summaries: tuple[MethodSummary, ...]  # one per method, in METHODS order
    slopes: np.ndarray  # (H,) ALiBi slopes
    unseen_sinusoidal: int  # sinusoidal frequencies meeting angles beyond the trained length that training never saw
    unseen_rope: int  # the same for RoPE's d_k / 2 frequencies
    learned_error: str  # what looking up positions 0 .. T-1 in the learned table says ("" when it has the rows)
    causal: bool  # the mask is causal: offsets n - m <= 0 only, ALiBi in its paper form


def _pair_profile(method, cfg, x, w, head, P, base, table, slope, causal):
    d_k = cfg.d_k
    cols = slice(head * d_k, (head + 1) * d_k)
    i_k = min(1, x.shape[0] - 1)
    s = pair_scores(
        method,
        x[0],
        x[i_k],
        w[0][:, cols],
        w[1][:, cols],
        P,
        base=base,
        table=table,
        slope=slope,
        symmetric=not causal,
        scaled=cfg.scaled,
    )
    return s, offset_profile(s, causal)


def positions_view(run: WhatIfRun, method: str, base: float, train_len: int, head: int) -> PositionsView:
    """The four position methods on the input of a what-if run without positional encoding, for one head.

    Args:
        run: the what-if run with ``positional=False`` (each method adds its own positions).
        method: the method whose scores and weights are drawn, one of METHODS.
        base: the sinusoid / RoPE base.
        train_len: the trained length L (rows of the learned table; angles beyond it).
        head: which head, 0 <= head < H.
    """
    if run.config.positional:
        raise ValueError("positions_view needs the run without positional encoding (positional=False)")
    cfg = run.config
    x, w, T, H = run.x.astype(np.float64), run.w, run.T, cfg.n_heads
    causal = cfg.causal
    table = learned_position_table(train_len, cfg.d_model, seed=cfg.seed)
    slopes = alibi_slopes(H)
    summaries, chosen = [], (None, None)
    for m in METHODS:
        P, text = T, ""
        if m == "learned" and T > train_len:
            P, text = train_len, f"only positions 0 to {train_len - 1} have a row"
        if m == "rope" and cfg.d_k % 2:
            summaries.append(MethodSummary(m, None, 0, f"d_k = {cfg.d_k} is odd: RoPE rotates pairs"))
            continue
        s, prof = _pair_profile(m, cfg, x, w, head, P, base, table, float(slopes[head]), causal)
        summaries.append(MethodSummary(m, prof.spread, P, text))
        if m == method:
            chosen = (s, prof)
    weights, problem = None, ""
    try:
        _, wts = position_attention(
            method,
            x,
            *w[:3],
            n_heads=H,
            base=base,
            table=table,
            mask=run.mask,
            scaled=cfg.scaled,
            temperature=cfg.temperature,
        )
        weights = wts.astype(np.float32)
    except ValueError as exc:
        problem = str(exc)
    pair = (run.tokens[0], run.tokens[min(1, T - 1)])
    try:
        lookup_positions(table, np.arange(T))
        learned_error = ""
    except ValueError as exc:
        learned_error = str(exc)
    return PositionsView(
        tuple(run.tokens),
        pair,
        chosen[0],
        chosen[1],
        weights,
        problem,
        tuple(summaries),
        slopes,
        angles_beyond_training(train_len, T, cfg.d_model, base),
        angles_beyond_training(train_len, T, cfg.d_k, base) if cfg.d_k % 2 == 0 else 0,
        learned_error,
        causal,
    )
