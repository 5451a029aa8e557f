"""Rotary position embedding, RoPE (Su et al., 2021, "RoFormer", arXiv:2104.09864).

Each 2-D pair of a query or key is rotated by the angle ``position x theta_i`` with
``theta_i = base^(-2i/d)``, i = 0 .. d/2 - 1. A rotation by m then a dot product with a rotation by n
is a rotation by n - m: ``<R_m q, R_n k> = <q, R_(n-m) k>``, so the score sees only the offset.

Two pairing conventions exist and both are offered (``pairing=``):

- ``"interleaved"``: pair i is dims (2i, 2i+1), as in the paper and GPT-J;
- ``"halves"``: pair i is dims (i, i + d/2), as in Llama / Hugging Face ``rotate_half``.

They are the same rotation applied to a permuted vector; for a given pairing the scores are offset-only.

Shapes: T tokens (T_q / T_k), d the rotated width (d_k of a head), must be even.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_finite_above, check_finite_array, check_mask, check_temperature
from .attention import score_factor
from .softmax import _softmax

PAIRINGS = ("interleaved", "halves")


def _check_even(d) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2 or d % 2:
        raise ValueError(f"d={d!r} is not allowed; RoPE rotates pairs of dimensions, so d must be an even integer >= 2")
    return int(d)


def _positions(positions, T: int, name: str = "positions") -> np.ndarray:
    """``positions`` as a float64 ``(T,)`` array; None means 0 .. T-1."""
    if positions is None:
        return np.arange(T, dtype=np.float64)
    p = check_finite_array(name, positions).astype(np.float64)
    if p.shape != (T,):
        raise ValueError(f"{name} must have shape ({T},), one position per token; got {p.shape}")
    return p


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """``theta_i = base^(-2i/d)`` for i = 0 .. d/2 - 1, float64 ``(d/2,)``; theta_0 = 1 rad per position."""
    d, base = _check_even(d), check_finite_above("base", base, 1)
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)


def rope_angles(positions, d: int, base: float = 10000.0) -> np.ndarray:
    """The rotation angle of every pair at every position, ``positions[:, None] * theta[None, :]``.

    Args:
        positions: ``(T,)`` finite numbers (token positions; integers in practice).
        d: even width.
        base: > 1; 10000 in the paper, 500000 in Llama 3.

    Returns:
        float64 ``(T, d/2)`` angles in radians.
    """
    p = check_finite_array("positions", positions).astype(np.float64)
    if p.ndim != 1:
        raise ValueError(f"positions must be a 1-D array (T,); got shape {p.shape}")
    return p[:, None] * rope_frequencies(d, base)[None, :]  # (T, d/2)


def apply_rope(x, positions=None, base: float = 10000.0, pairing: str = "interleaved") -> np.ndarray:
    """Rotate each pair of ``x``'s last dim by ``position x theta_i``.

    Reference (interleaved)::

        x1, x2 = x[..., 0::2], x[..., 1::2]               # (..., T, d/2) each
        out[..., 0::2] = x1 * cos(angle) - x2 * sin(angle)
        out[..., 1::2] = x1 * sin(angle) + x2 * cos(angle)

    ("halves" takes x1, x2 = x[..., :d/2], x[..., d/2:] and writes them back there.)

    Args:
        x: ``(..., T, d)`` queries or keys, d even.
        positions: ``(T,)`` positions of the T tokens; default 0 .. T-1.
        base: > 1.
        pairing: ``"interleaved"`` (paper, GPT-J) or ``"halves"`` (Llama / HF rotate_half).

    Returns:
        ``(..., T, d)`` array of ``x``'s float dtype (angles are computed in float64); every pair keeps its norm.
    """
    x = check_finite_array("x", x, min_ndim=2)
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing={pairing!r} is not allowed; choose one of {list(PAIRINGS)}")
    T, d = x.shape[-2], x.shape[-1]
    _check_even(d)
    angles = rope_angles(_positions(positions, T), d, base)  # (T, d/2)
    cos, sin = np.cos(angles), np.sin(angles)  # (T, d/2) each
    if pairing == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2)
    else:
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]  # (..., T, d/2)
    r1 = x1 * cos - x2 * sin  # (..., T, d/2)
    r2 = x1 * sin + x2 * cos  # (..., T, d/2)
    out = np.empty(np.broadcast_shapes(x.shape), dtype=np.result_type(x.dtype, np.float32))
    if pairing == "interleaved":
        out[..., 0::2], out[..., 1::2] = r1, r2
    else:
        out[..., : d // 2], out[..., d // 2 :] = r1, r2
    return out  # (..., T, d)


def rope_scores(
    q, k, positions_q=None, positions_k=None, base: float = 10000.0, pairing: str = "interleaved", scaled: bool = True
) -> np.ndarray:
    """Logits of rotated queries and keys, ``(R_m q) . (R_n k)`` (divided by sqrt(d) when ``scaled``).

    Args:
        q: ``(..., T_q, d)``; k: ``(..., T_k, d)``; d even.
        positions_q, positions_k: ``(T_q,)`` and ``(T_k,)`` positions; default 0 .. T-1 each.
        base, pairing: as in :func:`apply_rope`.
        scaled: divide by sqrt(d).

    Returns:
        ``(..., T_q, T_k)``; entry (m, n) depends on the positions only through positions_k[n] - positions_q[m].
    """
    q = check_finite_array("q", q, min_ndim=2)
    k = check_finite_array("k", k, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d (last dim); got q {q.shape} and k {k.shape}")
    rq = apply_rope(q, positions_q, base, pairing)  # (..., T_q, d)
    rk = apply_rope(k, positions_k, base, pairing)  # (..., T_k, d)
    scores = rq @ np.swapaxes(rk, -1, -2)  # (..., T_q, T_k)
    return scores / math.sqrt(q.shape[-1]) if scaled else scores


def rope_attention(
    q,
    k,
    v,
    positions_q=None,
    positions_k=None,
    mask=None,
    base: float = 10000.0,
    pairing: str = "interleaved",
    scaled: bool = True,
    temperature: float = 1.0,
):
    """Scaled dot-product attention with RoPE applied to q and k (v is not rotated).

    Args:
        q: ``(..., T_q, d)``, k: ``(..., T_k, d)``, v: ``(..., T_k, d_v)``.
        mask: bool broadcastable to ``(..., T_q, T_k)``, True = may attend; a fully masked row gives zeros.
        Others as in :func:`rope_scores` and ``scaled_dot_product_attention``.

    Returns:
        ``(output, weights)``: ``(..., T_q, d_v)`` and ``(..., T_q, T_k)``.
    """
    t = check_temperature(temperature)
    v = check_finite_array("v", v, min_ndim=2)
    logits = rope_scores(q, k, positions_q, positions_k, base, pairing, scaled=False)  # (..., T_q, T_k)
    if v.shape[-2] != logits.shape[-1]:
        raise ValueError(f"k and v must have the same number of tokens T_k; got {logits.shape[-1]} and {v.shape[-2]}")
    m = check_mask(mask, logits.shape)
    weights = _softmax(logits * score_factor(np.shape(q)[-1], scaled, t), axis=-1, where=m, inplace=True)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)
