"""FlashAttention's idea in NumPy: attention over key/value tiles with an online softmax, never a T x T matrix.

Dao et al., 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"
(the online softmax is Milakov & Gimelshein, 2018). Walk the keys in tiles of B. For every query keep
a running max m, a running sum l of exp(score - m) and an unnormalised output o. A tile with a larger
maximum rescales what came before by exp(m_old - m_new), so every exponent stays <= 0 (no overflow
even for huge logits) and the result is exact: o / l equals softmax(scores) @ V. Only a T_q x B tile
of scores exists at any time. (The GPU kernel also tiles the queries; rows are independent, so here
all queries walk the key tiles together.)

Shape legend: ``...`` leading dims (batch, heads), T_q / T_k query / key tokens, B tile size (keys per
tile), d_k query/key width, d_v value width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_attention_inputs, check_positive_int, check_temperature
from .attention import score_factor


@dataclass(frozen=True)
class TileStep:
    """The running statistics after one key tile (one head, every query)."""

    index: int  # tile number, 0-based
    start: int  # first key of the tile
    stop: int  # one past the last key of the tile
    tile_max: np.ndarray  # (T_q,) the largest allowed logit in this tile (-inf if the tile is fully masked)
    m_before: np.ndarray  # (T_q,) running max before the tile (-inf before any allowed key)
    m: np.ndarray  # (T_q,) running max after the tile
    rescale: np.ndarray  # (T_q,) exp(m_before - m): what the old sum and output were multiplied by
    l: np.ndarray  # (T_q,) running sum of exp(logit - m) after the tile

    @property
    def rescaled(self) -> np.ndarray:
        """(T_q,) bool: this tile raised a running max that earlier keys had set, so the old sum and output were
        multiplied by ``rescale`` = exp(m_before - m). False before the row's first allowed key (nothing to rescale:
        ``rescale`` is 0 times an empty sum) and when the max did not change (``rescale`` is 1)."""
        return np.isfinite(self.m_before) & (self.m > self.m_before)

    def rescale_note(self, row: int) -> str:
        """What happened to query ``row``'s old sum and output at this tile, in words: the factor
        e^(m - m') when the running max rose, else why nothing was rescaled."""
        if self.rescaled[row]:
            factor, rise = float(self.rescale[row]), float(self.m_before[row] - self.m[row])
            shown = f"{factor:.4g}"
            return f"× {shown} = e^({rise:.3g})" if shown != "1" else f"× e^({rise:.2e}) (rounds to 1)"
        if np.isfinite(self.m_before[row]):
            return "— (max unchanged)"
        return "— (first allowed keys)" if np.isfinite(self.m[row]) else "— (all keys masked so far)"


@dataclass(frozen=True)
class FlashRun:
    """The tiled result with every tile's statistics."""

    output: np.ndarray  # (T_q, d_v) equals softmax(q k^T) v
    steps: tuple[TileStep, ...]  # one per key tile
    tile_bytes: int  # bytes of the largest score tile that existed (T_q x B)
    full_bytes: int  # bytes a full T_q x T_k score matrix of the same dtype would take


def _check(q, k, v, mask, causal, tile_size, temperature):
    t = check_temperature(temperature)
    tile_size = check_positive_int("tile_size", tile_size)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False; got {causal!r}")
    q, k, v, mask, lead = check_attention_inputs(q, k, v, mask)  # the mask as a broadcast view: no T x T copy
    if q.shape[-2] == 0 or k.shape[-2] == 0:
        raise ValueError(f"q and k need T_q >= 1 and T_k >= 1 tokens; got q {q.shape}, k {k.shape}")
    return q, k, v, mask, tile_size, t, lead


def _walk_tiles(q, k, v, mask, causal: bool, tile_size: int, factor: float, lead):
    """Yield ``(start, stop, tile_max, m_before, m, rescale, l, o)`` after each key tile (o unnormalised)."""
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    T_q, T_k = q.shape[-2], k.shape[-2]
    m = np.full((*lead, T_q), -np.inf, dtype=dtype)  # (..., T_q) running max
    l = np.zeros((*lead, T_q), dtype=dtype)  # (..., T_q) running sum of exp(s - m)
    o = np.zeros((*lead, T_q, v.shape[-1]), dtype=dtype)  # (..., T_q, d_v) running sum of exp(s - m) v
    q_in = q * np.asarray(factor, dtype=dtype)  # (..., T_q, d_k) scale folded into q
    rows = np.arange(T_q)[:, None]  # (T_q, 1)
    for start in range(0, T_k, tile_size):
        stop = min(start + tile_size, T_k)
        s = q_in @ np.swapaxes(k[..., start:stop, :], -1, -2)  # (..., T_q, B) the only score tile
        allowed = None if mask is None else mask[..., start:stop]  # (..., T_q, B)
        if causal:
            below = rows >= np.arange(start, stop)[None, :]  # (T_q, B) key j <= query i
            allowed = below if allowed is None else allowed & below
        if allowed is not None:
            s = np.where(allowed, s, -np.inf)  # blocked keys: exp(-inf) = 0
        tile_max = s.max(axis=-1)  # (..., T_q)
        m_new = np.maximum(m, tile_max)
        shift = np.where(np.isfinite(m_new), m_new, 0.0).astype(dtype)  # rows with nothing allowed yet stay at 0
        s -= shift[..., None]
        p = np.exp(s, out=s)  # (..., T_q, B) every exponent <= 0
        rescale = np.exp(m - shift)  # (..., T_q) exp(m_old - m_new); 0 before the first allowed key
        l = rescale * l + p.sum(axis=-1)
        o = rescale[..., None] * o + p @ v[..., start:stop, :]  # (..., T_q, d_v)
        yield start, stop, tile_max, m, m_new, rescale, l, o
        m = m_new


def _finish(o: np.ndarray, l: np.ndarray) -> np.ndarray:
    """o / l, with a zero output for rows that allowed no key (l = 0), never NaN."""
    return np.divide(o, l[..., None], out=np.zeros_like(o), where=l[..., None] > 0)


def flash_attention(
    q, k, v, mask=None, causal: bool = False, tile_size: int = 64, scaled: bool = True, temperature: float = 1.0
) -> np.ndarray:
    """Exact attention output computed over key tiles with an online softmax (FlashAttention's forward pass).

    Reference::

        m, l, o = -inf, 0, 0                                  # per query
        for each key tile K_j, V_j:
            s = q K_j^T / sqrt(d_k)                           # (T_q, B)
            m_new = max(m, rowmax(s))
            l = exp(m - m_new) * l + rowsum(exp(s - m_new))
            o = exp(m - m_new) * o + exp(s - m_new) @ V_j
            m = m_new
        return o / l                                          # = softmax(q K^T / sqrt(d_k)) V

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: optional bool, broadcastable to ``(..., T_q, T_k)``; True = may attend. Pass a broadcastable
            mask (or ``causal=True``) to keep memory below T x T.
        causal: also block keys after the query (key j <= query i), computed per tile.
        tile_size: keys per tile, B >= 1 (B >= T_k is one tile: the ordinary softmax).
        scaled, temperature: as in :func:`attention_core.scaled_dot_product_attention`.

    Returns:
        ``(..., T_q, d_v)``; a row with no allowed key is all zeros (never NaN). No weights: keeping
        them would need the T_q x T_k matrix the method avoids.
    """
    q, k, v, mask, tile_size, t, lead = _check(q, k, v, mask, causal, tile_size, temperature)
    state = None
    for state in _walk_tiles(q, k, v, mask, bool(causal), tile_size, score_factor(q.shape[-1], scaled, t), lead):  # noqa: B007
        pass  # keep only the latest running state
    *_, l, o = state
    return _finish(o, l)


def flash_attention_steps(
    q, k, v, mask=None, causal: bool = False, tile_size: int = 64, scaled: bool = True, temperature: float = 1.0
) -> FlashRun:
    """:func:`flash_attention` for one head (``q (T_q, d_k)``), recording each tile's m, l and rescale factor."""
    q, k, v, mask, tile_size, t, lead = _check(q, k, v, mask, causal, tile_size, temperature)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(
            f"the stepper takes one head: q (T_q, d_k), k (T_k, d_k), v (T_k, d_v); got q {q.shape}, "
            f"k {k.shape}, v {v.shape}"
        )
    steps, tile_bytes = [], 0
    walk = _walk_tiles(q, k, v, mask, bool(causal), tile_size, score_factor(q.shape[-1], scaled, t), lead)
    for i, (start, stop, tile_max, m_before, m, rescale, l, o) in enumerate(walk):
        steps.append(TileStep(i, start, stop, tile_max, m_before, m, rescale, l))
        tile_bytes = max(tile_bytes, q.shape[0] * (stop - start) * o.itemsize)
    return FlashRun(_finish(o, l), tuple(steps), tile_bytes, q.shape[0] * k.shape[0] * o.itemsize)
