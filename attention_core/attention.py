"""Scaled dot-product attention and multi-head attention in NumPy.

Shape legend:
    B   batch (any leading dims ``...`` are kept)
    T   tokens; T_q query tokens, T_k key (and value) tokens
    d_model  embedding width
    H   number of heads
    d_k = d_model / H  query/key width per head; d_v value width
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_attention_inputs, check_finite_array, check_positive_int, check_temperature
from .softmax import _softmax


def score_factor(d_k: int, scaled: bool = True, temperature: float = 1.0) -> float:
    """What q . k is multiplied by before the softmax: 1/sqrt(d_k) if ``scaled``, then 1/temperature."""
    return (1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature


def attention_scores(q, k, scaled: bool = True) -> np.ndarray:
    """The logits ``q k^T`` (divided by sqrt(d_k) when ``scaled``), shape ``(..., T_q, T_k)``."""
    q = check_finite_array("q", q, min_ndim=2)
    k = check_finite_array("k", k, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d_k (last dim); got q {q.shape} and k {k.shape}")
    scores = q @ np.swapaxes(k, -1, -2)  # (..., T_q, T_k)
    if scaled:
        scores = scores / math.sqrt(q.shape[-1])
    return scores


def scaled_dot_product_attention(q, k, v, mask=None, scaled: bool = True, temperature: float = 1.0):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) / temperature) V, returning the weights too.

    Reference::

        scores = q @ k.T / sqrt(d_k)          # (T_q, T_k)   (skip the division if not scaled)
        scores[~mask] = -inf                   # blocked keys
        weights = softmax(scores / temperature, axis=-1)
        output = weights @ v                   # (T_q, d_v)

    Args:
        q: ``(..., T_q, d_k)`` queries.
        k: ``(..., T_k, d_k)`` keys.
        v: ``(..., T_k, d_v)`` values.
        mask: optional bool array broadcastable to ``(..., T_q, T_k)``; **True = may attend**.
            A query row with no allowed key gets all-zero weights and a zero output (never NaN).
        scaled: divide the scores by sqrt(d_k) (the "scaled" in scaled dot-product attention).
        temperature: > 0; the (scaled) scores are divided by it before the softmax.

    Returns:
        ``(output, weights)``: output ``(..., T_q, d_v)``, weights ``(..., T_q, T_k)`` with rows
        summing to 1 (0 for fully masked rows).
    """
    t = check_temperature(temperature)
    q, k, v, m, lead = check_attention_inputs(q, k, v, mask)
    weights = _weights(q, k, m, scaled, t)  # (..., T_q, T_k)
    weights = weights.astype(np.result_type(weights.dtype, v.dtype), copy=False)
    output = weights @ v  # (..., T_q, d_v)
    return output, weights


def _weights(q: np.ndarray, k: np.ndarray, m, scaled: bool, t: float) -> np.ndarray:
    """The weights of :func:`scaled_dot_product_attention` from checked inputs (``m``: the mask or None)."""
    # Fold 1/sqrt(d_k) and 1/temperature into q: T_q * d_k multiplications instead of T_q * T_k.
    factor = score_factor(q.shape[-1], scaled, t)
    q_in = q * np.asarray(factor, dtype=q.dtype) if factor != 1.0 else q
    logits = q_in @ np.swapaxes(k, -1, -2)  # (..., T_q, T_k), a fresh array
    return _softmax(logits, axis=-1, where=m, inplace=True)


def attention_weights(q, k, mask=None, scaled: bool = True, temperature: float = 1.0) -> np.ndarray:
    """The weights :func:`scaled_dot_product_attention` computes, bit for bit, without the output (no ``weights @
    v``): what a page needs when it states only the weights' figures (the scaling twin's saturation)."""
    t = check_temperature(temperature)
    k = np.asarray(k)
    q, k, _, m, _ = check_attention_inputs(q, k, k[..., :1], mask)  # (k stands in for v, whose check it passes)
    return _weights(q, k, m, scaled, t)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """``(..., T, d_model)`` -> ``(..., H, T, d_k)``: head h takes columns h*d_k .. (h+1)*d_k - 1."""
    *lead, T, d_model = x.shape
    d_k = d_model // n_heads
    return np.swapaxes(x.reshape(*lead, T, n_heads, d_k), -2, -3)  # (..., H, T, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(..., H, T, d_k)`` -> ``(..., T, H * d_k)``: the heads' outputs side by side (concatenation)."""
    *lead, H, T, d_k = x.shape
    return np.swapaxes(x, -2, -3).reshape(*lead, T, H * d_k)  # (..., T, d_model)


def check_heads(d_model: int, n_heads: int) -> int:
    """Return n_heads if it divides d_model, else raise."""
    n_heads = check_positive_int("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by n_heads={n_heads}; "
            f"allowed n_heads: {[h for h in range(1, d_model + 1) if d_model % h == 0]}"
        )
    return n_heads


def multi_head_attention(
    x,
    w_q,
    w_k,
    w_v,
    w_o,
    n_heads: int,
    mask=None,
    scaled: bool = True,
    temperature: float = 1.0,
    return_steps: bool = False,
    kv=None,
):
    """Multi-head attention: project, split into heads, attend, merge, project.

    Self-attention by default; pass ``kv`` for cross-attention (queries from ``x``, keys and values
    from ``kv``).

    Reference::

        q, k, v = x @ W_q, x @ W_k, x @ W_v                  # (T, d_model) each
        q, k, v = split into H heads                          # (H, T, d_k) each
        heads, weights = scaled_dot_product_attention(q, k, v, mask)   # (H, T, d_k), (H, T, T)
        output = concat(heads) @ W_o                          # (T, d_model)

    Args:
        x: ``(T, d_model)`` or ``(B, T, d_model)`` inputs.
        w_q, w_k, w_v, w_o: ``(d_model, d_model)`` each, in the ``x @ W`` convention.
        n_heads: H, must divide d_model; d_k = d_model / H.
        mask: bool, broadcastable to ``(..., T_q, T_k)`` (the same mask for every head); True = may attend.
        scaled, temperature: as in :func:`scaled_dot_product_attention`.
        return_steps: also return a dict of the intermediate tensors (q, k, v per head, per-head
            outputs, the concatenation) for display.
        kv: optional ``(T_k, d_model)`` or ``(B, T_k, d_model)`` source of keys and values
            (cross-attention); defaults to ``x``.

    Returns:
        ``(output, weights)`` with output ``(..., T_q, d_model)`` and weights ``(..., H, T_q, T_k)``;
        ``(output, weights, steps)`` when ``return_steps``.
    """
    x = check_finite_array("x", x, min_ndim=2)
    if x.ndim > 3:
        raise ValueError(f"x must be (T, d_model) or (B, T, d_model); got shape {x.shape}")
    d_model = x.shape[-1]
    n_heads = check_heads(d_model, n_heads)
    if kv is None:
        kv = x
    else:
        kv = check_finite_array("kv", kv, min_ndim=2)
        if kv.ndim > 3 or kv.shape[-1] != d_model:
            raise ValueError(f"kv must be (T_k, d_model={d_model}) or (B, T_k, d_model); got shape {kv.shape}")
    ws = {}
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        w = check_finite_array(name, w, min_ndim=2)
        if w.shape != (d_model, d_model):
            raise ValueError(f"{name} must have shape (d_model, d_model) = {(d_model, d_model)}; got {w.shape}")
        ws[name] = w
    q = split_heads(x @ ws["w_q"], n_heads)  # (..., H, T, d_k)
    k = split_heads(kv @ ws["w_k"], n_heads)  # (..., H, T_k, d_k)
    v = split_heads(kv @ ws["w_v"], n_heads)  # (..., H, T_k, d_k)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]  # (..., 1, T, T): same mask for every head
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, scaled=scaled, temperature=temperature)
    concat = merge_heads(heads)  # (..., T, d_model)
    output = concat @ ws["w_o"]  # (..., T, d_model)
    if return_steps:
        return output, weights, {"q": q, "k": k, "v": v, "heads": heads, "concat": concat}
    return output, weights
