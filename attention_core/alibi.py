"""ALiBi: attention with linear biases (Press, Smith & Lewis, 2022, "Train Short, Test Long", arXiv:2108.12409).

No position is added to the input. Instead head h adds ``-m_h * (i - j)`` to the score of query i and
key j: the further back a key, the lower its score, with a slope m_h per head. For H a power of 2 the
slopes are ``2^(-8h/H)``, h = 1 .. H (H = 8: 1/2, 1/4, ..., 1/256). For other H the paper takes the
slopes of the nearest smaller power of two P and fills up with every other slope of 2P.

Because softmax ignores a constant added to a whole row, ``-m (i - j)`` and ``m * j`` (the form the
reference code adds) give the same weights under a causal mask: they differ by ``-m * i`` per row.

Shapes: H heads, T_q query tokens, T_k key tokens, d_k query/key width, d_v value width.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_finite_array, check_mask, check_positive_int, check_qkv, check_temperature
from .attention import score_factor
from .softmax import _softmax

FORMS = ("distance", "symmetric", "key_position")


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)
    return [start**h for h in range(1, n + 1)]  # 2^(-8h/n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """The per-head slopes m_h, float64 ``(H,)``, following the paper's reference code.

    H a power of 2: ``2^(-8h/H)`` for h = 1 .. H. Otherwise, with P the largest power of 2 below H:
    the P slopes for P, then the slopes for 2P at even indices (0, 2, 4, ...), the first H - P of them.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    p = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = _power_of_two_slopes(p)
    if p != n_heads:
        slopes += _power_of_two_slopes(2 * p)[0::2][: n_heads - p]
    return np.asarray(slopes, dtype=np.float64)  # (H,)


def alibi_bias(T_q: int, T_k: int, n_heads: int, form: str = "distance") -> np.ndarray:
    """The additive bias of every head, float64 ``(H, T_q, T_k)``.

    The T_q queries are the *last* T_q of the T_k positions (query i sits at position i + T_k - T_q),
    which is what decoding with a cache needs; for self-attention T_q = T_k.

    Args:
        T_q, T_k: query and key counts, T_q <= T_k.
        n_heads: H.
        form: ``"distance"``: ``-m (i - j)`` (the paper's formula; positive above the diagonal, meant for a
            causal mask); ``"symmetric"``: ``-m |i - j|`` (a common encoder variant, not in the paper);
            ``"key_position"``: ``m * j`` (what the reference code adds; same softmax as "distance"
            under a causal mask).
    """
    T_q, T_k = check_positive_int("T_q", T_q), check_positive_int("T_k", T_k)
    if T_q > T_k:
        raise ValueError(f"T_q={T_q} must be <= T_k={T_k}: the queries are the last T_q key positions")
    if form not in FORMS:
        raise ValueError(f"form={form!r} is not allowed; choose one of {list(FORMS)}")
    m = alibi_slopes(n_heads)[:, None, None]  # (H, 1, 1)
    i = np.arange(T_k - T_q, T_k, dtype=np.float64)[:, None]  # (T_q, 1) query positions
    j = np.arange(T_k, dtype=np.float64)[None, :]  # (1, T_k) key positions
    if form == "key_position":
        return m * np.broadcast_to(j, (T_q, T_k))  # (H, T_q, T_k)
    dist = np.abs(i - j) if form == "symmetric" else i - j  # (T_q, T_k)
    return -m * dist  # (H, T_q, T_k)


def attention_with_bias(q, k, v, bias=None, mask=None, scaled: bool = True, temperature: float = 1.0):
    """softmax((q k^T * scale + bias) / temperature) v: attention with an additive float bias on the logits.

    With ``temperature=1`` this is ``torch.nn.functional.scaled_dot_product_attention(q, k, v,
    attn_mask=bias)`` (a float attn_mask is added to the scaled scores); ``mask`` blocks keys as
    everywhere in attention_core (True = may attend, a fully masked row gives zeros, never NaN).

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        bias: finite floats broadcastable to ``(..., T_q, T_k)``, e.g. :func:`alibi_bias` for ``(..., H, T, d_k)`` q.
        mask: bool broadcastable to ``(..., T_q, T_k)``.
        scaled: multiply q k^T by 1/sqrt(d_k) (the bias is not scaled).
        temperature: > 0, divides the biased logits.

    Returns:
        ``(output, weights)``: ``(..., T_q, d_v)`` and ``(..., T_q, T_k)``.
    """
    t = check_temperature(temperature)
    q, k, v = check_qkv(q, k, v)
    logits = (q @ np.swapaxes(k, -1, -2)) * score_factor(q.shape[-1], scaled)  # (..., T_q, T_k)
    if bias is not None:
        b = check_finite_array("bias", bias)
        try:
            logits = logits + b  # (..., T_q, T_k)
        except ValueError:
            raise ValueError(
                f"bias of shape {b.shape} does not broadcast to the scores' shape {logits.shape}"
            ) from None
    m = check_mask(mask, logits.shape)
    weights = _softmax(logits / t, axis=-1, where=m, inplace=True)  # (..., T_q, T_k)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def alibi_attention(q, k, v, mask=None, scaled: bool = True, temperature: float = 1.0, form: str = "distance"):
    """Multi-head attention scores plus the ALiBi bias of each head.

    Args:
        q: ``(..., H, T_q, d_k)``; k: ``(..., H, T_k, d_k)``; v: ``(..., H, T_k, d_v)``.
        mask: bool broadcastable to ``(..., H, T_q, T_k)``; the paper uses a causal mask.
        form: see :func:`alibi_bias`.

    Returns:
        ``(output, weights)``: ``(..., H, T_q, d_v)`` and ``(..., H, T_q, T_k)``.
    """
    q = check_finite_array("q", q, min_ndim=3)
    k = check_finite_array("k", k, min_ndim=3)
    if q.shape[-3] != k.shape[-3]:
        raise ValueError(f"q and k must have the same number of heads (dim -3); got q {q.shape} and k {k.shape}")
    bias = alibi_bias(q.shape[-2], k.shape[-2], q.shape[-3], form)  # (H, T_q, T_k)
    return attention_with_bias(q, k, v, bias, mask=mask, scaled=scaled, temperature=temperature)
