"""Four ways to give attention positions, on the same input: sinusoidal, learned, RoPE and ALiBi.

The question each answers differently: does the score between two tokens depend on *where* they are
(absolute positions m, n) or only on *how far apart* (the offset n - m)? Added encodings (sinusoidal,
learned) mix position into the content, so the same pair scores differently at different places.
RoPE rotates q and k so that only n - m survives the dot product; ALiBi adds a bias of the distance.

Shapes: T tokens, P positions compared, d_model embedding width, H heads, d_k = d_model / H.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int
from .alibi import alibi_attention
from .attention import scaled_dot_product_attention, split_heads
from .positional import sinusoidal_positional_encoding
from .rope import rope_attention, rope_scores

METHODS = ("sinusoidal", "learned", "rope", "alibi")


def learned_position_table(n_positions: int, d_model: int, seed: int = 0) -> np.ndarray:
    """A seeded random ``(n_positions, d_model)`` table, N(0, 1/2) like the sinusoid's mean square.

    It stands in for a trained table (GPT-2's ``wpe``): one free row per position up to the longest
    training length, and nothing beyond it.
    """
    n_positions = check_positive_int("n_positions", n_positions)
    d_model = check_positive_int("d_model", d_model)
    rng = np.random.default_rng([int(seed), 104729])
    return (rng.standard_normal((n_positions, d_model)) * math.sqrt(0.5)).astype(np.float32)


def lookup_positions(table, positions) -> np.ndarray:
    """Rows of a learned position table; a position beyond the table raises ValueError (it cannot extrapolate).

    Args:
        table: ``(n_positions, d_model)``.
        positions: ``(T,)`` integers >= 0.

    Returns:
        ``(T, d_model)`` rows.
    """
    table = check_finite_array("table", table, min_ndim=2)
    p = np.asarray(positions)
    if p.ndim != 1 or not np.issubdtype(p.dtype, np.integer) or (p.size and p.min() < 0):
        raise ValueError(f"positions must be a 1-D array of integers >= 0; got {positions!r}")
    if p.size and p.max() >= table.shape[0]:
        raise ValueError(
            f"position {int(p[p >= table.shape[0]].min())} has no row: the learned table has {table.shape[0]} rows "
            f"(positions 0 to {table.shape[0] - 1}), so it cannot extrapolate beyond them"
        )
    return table[p]  # (T, d_model)


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed; choose one of {list(METHODS)}")
    return method


def pair_scores(
    method: str,
    x_q,
    x_k,
    w_q,
    w_k,
    n_positions: int,
    base: float = 10000.0,
    table=None,
    slope: float = 0.5,
    symmetric: bool = False,
    scaled: bool = True,
) -> np.ndarray:
    """The logit of token ``x_q`` at query position m against token ``x_k`` at key position n, for all m, n < P.

    Args:
        method: one of METHODS.
        x_q, x_k: ``(d_model,)`` the two tokens' embeddings (without positions).
        w_q, w_k: ``(d_model, d_k)`` one head's projections (d_k even for "rope").
        n_positions: P.
        base: wavelength base of "sinusoidal" and "rope".
        table: ``(n_rows, d_model)`` learned table for "learned" (P > n_rows raises ValueError).
        slope: the head's ALiBi slope; symmetric: bias ``-slope |m - n|`` instead of ``-slope (m - n)``.
        scaled: divide q . k by sqrt(d_k) (the ALiBi bias is not divided).

    Returns:
        float64 ``(P, P)``, rows = query position m, columns = key position n.
    """
    _check_method(method)
    P = check_positive_int("n_positions", n_positions)
    x_q, x_k = check_finite_array("x_q", x_q).astype(np.float64), check_finite_array("x_k", x_k).astype(np.float64)
    w_q, w_k = (
        check_finite_array("w_q", w_q, 2).astype(np.float64),
        check_finite_array("w_k", w_k, 2).astype(np.float64),
    )
    if not x_q.shape == x_k.shape == (w_q.shape[0],) or w_q.shape != w_k.shape:
        raise ValueError(
            f"need x_q, x_k (d_model,) and w_q, w_k (d_model, d_k); got {x_q.shape}, {x_k.shape}, "
            f"{w_q.shape}, {w_k.shape}"
        )
    d_model, d_k = w_q.shape
    scale = 1 / math.sqrt(d_k) if scaled else 1.0
    if method in ("sinusoidal", "learned"):
        if method == "sinusoidal":
            pe = sinusoidal_positional_encoding(P, d_model, base).astype(np.float64)  # (P, d_model)
        else:
            if table is None:
                raise ValueError("method='learned' needs a table (see learned_position_table)")
            pe = lookup_positions(table, np.arange(P)).astype(np.float64)  # (P, d_model)
        q = (x_q + pe) @ w_q  # (P, d_k)
        k = (x_k + pe) @ w_k  # (P, d_k)
        return (q @ k.T) * scale  # (P, P)
    q = np.broadcast_to(x_q @ w_q, (P, d_k))  # (P, d_k): the same token at every position
    k = np.broadcast_to(x_k @ w_k, (P, d_k))
    if method == "rope":
        return rope_scores(q, k, base=base, scaled=False) * scale  # (P, P)
    m = np.arange(P, dtype=np.float64)
    dist = m[:, None] - m[None, :]  # (P, P) query position - key position
    bias = -slope * (np.abs(dist) if symmetric else dist)
    return float(q[0] @ k[0]) * scale + bias  # (P, P)


@dataclass(frozen=True)
class OffsetProfile:
    """The scores of a (P, P) position-pair matrix grouped by offset n - m (key minus query position)."""

    offsets: np.ndarray  # (O,) offsets n - m, ascending; only n <= m when causal
    low: np.ndarray  # (O,) smallest score among the pairs with that offset
    high: np.ndarray  # (O,) largest score among them
    mean: np.ndarray  # (O,) their mean
    spread: float  # max over offsets of high - low: 0 when the score depends on the offset only


def offset_profile(scores, causal: bool = False) -> OffsetProfile:
    """Group the (P, P) ``scores`` by diagonal (offset n - m) and measure the spread within each."""
    s = check_finite_array("scores", scores, 2)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must be a square (P, P) matrix; got shape {s.shape}")
    P = s.shape[0]
    i, j = np.indices((P, P))  # (P, P) query and key positions
    skew = np.full((P, 2 * P - 1), np.nan)  # (P, 2P - 1): row i, column (j - i) + P - 1
    skew[i, j - i + P - 1] = s
    if causal:
        skew = skew[:, :P]  # offsets -(P - 1) .. 0
    offsets = np.arange(-(P - 1), skew.shape[1] - (P - 1))
    low, high, mean = np.nanmin(skew, axis=0), np.nanmax(skew, axis=0), np.nanmean(skew, axis=0)  # (O,) each
    return OffsetProfile(offsets, low, high, mean, float((high - low).max()))


def position_attention(
    method: str,
    x,
    w_q,
    w_k,
    w_v,
    n_heads: int,
    *,
    base: float = 10000.0,
    table=None,
    mask=None,
    scaled: bool = True,
    temperature: float = 1.0,
):
    """Multi-head attention weights with the positions given by ``method``, per head.

    The method's own settings (``base``, ``table``) come first, then the options every attention function
    takes (``mask``, ``scaled``, ``temperature``, as in :func:`scaled_dot_product_attention`); all by keyword.

    Args:
        method: one of METHODS; "sinusoidal" and "learned" add a table to x, "rope" rotates each head's
            q and k (d_k must be even), "alibi" adds each head's distance bias (symmetric unless the
            mask is causal, i.e. lower-triangular).
        x: ``(T, d_model)`` embeddings without positions.
        w_q, w_k, w_v: ``(d_model, d_model)`` each.
        n_heads: H (divides d_model).
        base: the frequency base of "sinusoidal" and "rope".
        table: ``(n_rows, d_model)`` for "learned"; T > n_rows raises ValueError.
        mask: ``(T, T)`` bool, True = may attend.

    Returns:
        ``(heads, weights)``: per-head outputs ``(H, T, d_k)`` and weights ``(H, T, T)``.
    """
    _check_method(method)
    x = check_finite_array("x", x, 2)
    T, d_model = x.shape
    if method == "sinusoidal":
        x = x + sinusoidal_positional_encoding(T, d_model, base)
    elif method == "learned":
        if table is None:
            raise ValueError("method='learned' needs a table (see learned_position_table)")
        x = x + lookup_positions(table, np.arange(T))
    q = split_heads(x @ w_q, n_heads)  # (H, T, d_k)
    k = split_heads(x @ w_k, n_heads)  # (H, T, d_k)
    v = split_heads(x @ w_v, n_heads)  # (H, T, d_k)
    if mask is not None:
        mask = np.asarray(mask)
    if method == "rope":
        return rope_attention(q, k, v, mask=mask, base=base, scaled=scaled, temperature=temperature)
    if method == "alibi":
        causal = mask is not None and not np.triu(mask, 1).any()
        return alibi_attention(
            q, k, v, mask=mask, scaled=scaled, temperature=temperature, form="distance" if causal else "symmetric"
        )
    return scaled_dot_product_attention(q, k, v, mask=mask, scaled=scaled, temperature=temperature)


def angles_beyond_training(train_len: int, n_positions: int, d: int, base: float = 10000.0) -> int:
    """How many of the d/2 frequencies (sinusoidal or RoPE) meet, at positions train_len .. n_positions - 1,
    an angle (mod 2 pi) that positions 0 .. train_len - 1 never produced.

    A fast pair turns full circles within training and only repeats itself; a slow one covers the arc
    [0, (train_len - 1) theta_i] and beyond the trained length walks off it.
    """
    train_len = check_positive_int("train_len", train_len)
    n_positions = check_positive_int("n_positions", n_positions)
    if n_positions <= train_len:
        return 0
    d = check_positive_int("d", d)
    theta = float(base) ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (ceil(d/2),) as in both tables
    seen = (train_len - 1) * theta  # (d/2,) the arc [0, seen] was covered in training
    new = np.arange(train_len, n_positions, dtype=np.float64)[:, None] * theta  # (P - L, d/2)
    unseen = (seen < 2 * np.pi) & (np.mod(new, 2 * np.pi) > seen + 1e-9).any(axis=0)  # (d/2,)
    return int(unseen.sum())
