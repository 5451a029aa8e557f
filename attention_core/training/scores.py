"""Head scores: what each head attends to, measured on fixed sequences.

    previous-token score   mean weight from position t to t - 1
    prefix-matching score  on a run of period p repeated: mean weight from t (t >= p) to the tokens that
                           followed earlier copies of the current token, t - p + 1, t - 2p + 1, ...
                           (an induction head puts ~1 there; Olsson et al., 2022)
    attention on B         find_b: mean weight from every query to the position of the B

Every score lies in [0, 1]. Shape legend: B batch, L layers, H heads, T tokens.
"""

from __future__ import annotations

import numpy as np

SCORE_NAMES = ("previous-token", "prefix-matching", "attention on B")


def previous_token_score(weights: np.ndarray) -> np.ndarray:
    """Mean weight on the previous token.

    Args:
        weights: ``(..., B, T, T)`` attention weights (query rows, key columns).

    Returns:
        ``(...)``: the mean over the batch and the queries 1..T-1 of ``weights[t, t - 1]``.
    """
    w = np.asarray(weights)
    if w.ndim < 3 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 2:
        raise ValueError(f"weights must be (..., B, T, T) with T >= 2; got shape {w.shape}")
    return np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(-2, -1))  # (...)


def prefix_matching_targets(period: np.ndarray, T: int) -> np.ndarray:
    """``(B, T, T)`` bool: True at (t, s) when s = t - k p + 1 for some k >= 1 and t >= p (the tokens after
    earlier copies of token t in a sequence repeating with period p)."""
    p = np.asarray(period).reshape(-1, 1, 1)  # (B, 1, 1)
    if p.size == 0 or np.any(p < 2) or np.any(p >= T):
        raise ValueError(f"periods must be between 2 and T-1={T - 1}; got {np.asarray(period).ravel().tolist()}")
    t = np.arange(T)[None, :, None]  # (1, T, 1) queries
    s = np.arange(T)[None, None, :]  # (1, 1, T) keys
    gap = t - s + 1  # k * p when s follows an earlier copy
    return (t >= p) & (gap >= p) & (gap % p == 0) & (s >= 1)  # (B, T, T)


def prefix_matching_score(weights: np.ndarray, period: np.ndarray) -> np.ndarray:
    """Mean attention from repeated tokens to the tokens after their earlier copies.

    Args:
        weights: ``(..., B, T, T)``; period: ``(B,)`` repeat length of each sequence.

    Returns:
        ``(...)``: for every query t >= p the summed weight on its prefix-matching keys, averaged over
        those queries and the batch.
    """
    w = np.asarray(weights)
    if w.ndim < 3 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (..., B, T, T); got shape {w.shape}")
    T = w.shape[-1]
    target = prefix_matching_targets(period, T)  # (B, T, T)
    rows = target.any(axis=-1)  # (B, T) queries that have a target
    if target.shape[0] != w.shape[-3]:
        raise ValueError(f"period has {target.shape[0]} entries but weights have batch {w.shape[-3]}")
    per_row = (w * target).sum(axis=-1)  # (..., B, T)
    return (per_row * rows).sum(axis=(-2, -1)) / rows.sum()  # (...)


def attention_on_b_score(weights: np.ndarray, b_pos: np.ndarray) -> np.ndarray:
    """Mean weight every query puts on the B.

    Args:
        weights: ``(..., B, T, T)``; b_pos: ``(B,)`` the position of the B in each sequence.

    Returns:
        ``(...)``: the mean over the batch and every query row of ``weights[b, t, b_pos[b]]``.
    """
    w = np.asarray(weights)
    b = np.asarray(b_pos).ravel()
    if w.ndim < 3 or b.shape[0] != w.shape[-3] or np.any(b < 0) or np.any(b >= w.shape[-1]):
        raise ValueError(f"b_pos must hold one position in 0..T-1 per sequence; got {b.tolist()} for weights {w.shape}")
    on_b = np.arange(w.shape[-1])[None, :] == b[:, None]  # (B, T) one-hot keys
    return (w * on_b[:, None, :]).sum(axis=-1).mean(axis=(-2, -1))  # (...)


def head_scores(
    weights: list[np.ndarray], period: np.ndarray | None = None, b_pos: np.ndarray | None = None
) -> np.ndarray:
    """All three scores for every head.

    Args:
        weights: one ``(B, H, T, T)`` array per layer (all layers with the same H).
        period: ``(B,)`` repeat lengths when the sequences repeat (else prefix-matching is NaN).
        b_pos: ``(B,)`` positions of B for find_b sequences (else attention on B is NaN).

    Returns:
        ``(L, H, 3)`` float32 in the order of :data:`SCORE_NAMES`.
    """
    w = np.stack([np.swapaxes(np.asarray(x, dtype=np.float64), 0, 1) for x in weights])  # (L, H, B, T, T)
    out = np.full(w.shape[:2] + (3,), np.nan)
    out[..., 0] = previous_token_score(w)
    if period is not None:
        out[..., 1] = prefix_matching_score(w, period)
    if b_pos is not None:
        out[..., 2] = attention_on_b_score(w, b_pos)
    return out.astype(np.float32)
