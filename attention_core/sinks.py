"""Attention sinks: a learned sink logit per head, and StreamingLLM's keep-the-first-tokens window.

A softmax must hand out a total weight of 1, even when a head has nothing useful to read. gpt-oss
gives every head one learned logit ``s_h`` that joins the softmax's denominator but has no value:

    w_ij = exp(z_ij) / (exp(s_h) + sum_j' exp(z_ij'))

so the weights on the real tokens sum to ``1 - exp(s_h) / (...) < 1`` and the head can "look at
nothing". StreamingLLM (Xiao et al., 2023, "Efficient Streaming Language Models with Attention
Sinks", arXiv:2309.17453) found that trained models use the *first* tokens that way, so a sliding
window that keeps the first ``n_sink`` tokens besides the last ``window`` ones stays stable.

Shapes: H heads, T_q / T_k query / key tokens, d_k query/key width, d_v value width.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_mask, check_positive_int, check_qkv, check_temperature
from .attention import score_factor


def _check_sinks(sink_logits, lead: tuple[int, ...]) -> np.ndarray:
    """Sink logits as float64 broadcast to ``lead`` (the dims before T_q, T_k); -inf means "no sink"."""
    try:
        s = np.asarray(sink_logits, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sink_logits must be numbers (one per head); got {sink_logits!r}") from None
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("sink_logits must be finite numbers or -inf (= no sink); got NaN or +inf")
    try:
        return np.broadcast_to(s, lead)
    except ValueError:
        raise ValueError(f"sink_logits of shape {s.shape} do not broadcast to the heads' shape {lead}") from None


def sink_attention(q, k, v, sink_logits=None, mask=None, scaled: bool = True, temperature: float = 1.0):
    """Scaled dot-product attention with one extra sink logit per head in the softmax's denominator.

    Reference (gpt-oss)::

        scores = q @ k.T * scale                                  # (H, T_q, T_k)
        both = softmax(concat([scores, sink[:, None, None]], -1))  # (H, T_q, T_k + 1)
        weights, sink_weight = both[..., :-1], both[..., -1]
        output = weights @ v                                       # the sink has no value

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``; usually ``(..., H, T, d)``.
        sink_logits: numbers broadcastable to q's leading dims ``(...)`` (one per head for ``(H, T, d)``
            inputs); ``-inf`` or None = no sink, which is plain attention.
        mask: bool broadcastable to ``(..., T_q, T_k)``, True = may attend. A row with no allowed key
            puts all its weight on the sink (or is all zeros without one); never NaN.
        scaled: multiply q k^T by 1/sqrt(d_k) (not the sink logit).
        temperature: > 0, divides every logit, the sink's too.

    Returns:
        ``(output, weights, sink_weight)``: ``(..., T_q, d_v)``, ``(..., T_q, T_k)`` and ``(..., T_q)``;
        ``weights.sum(-1) + sink_weight`` is 1 on every row with an allowed key or a finite sink.
    """
    t = check_temperature(temperature)
    q, k, v = check_qkv(q, k, v)
    logits = (q @ np.swapaxes(k, -1, -2)) * score_factor(q.shape[-1], scaled, t)  # (..., T_q, T_k)
    lead = logits.shape[:-2]
    sink = (np.full(lead, -np.inf) if sink_logits is None else _check_sinks(sink_logits, lead)) / t  # (...)
    sink = np.broadcast_to(sink[..., None], logits.shape[:-1])  # (..., T_q)
    m = check_mask(mask, logits.shape)
    allowed = np.ones(logits.shape, dtype=bool) if m is None else m
    z_max = np.max(logits, axis=-1, initial=-np.inf, where=allowed)  # (..., T_q)
    z_max = np.maximum(z_max, sink)
    z_max = np.where(np.isfinite(z_max), z_max, 0.0)  # nothing allowed and no sink
    e = np.where(allowed, np.exp(np.where(allowed, logits - z_max[..., None], 0.0)), 0.0)  # (..., T_q, T_k)
    e_sink = np.exp(sink - z_max)  # (..., T_q), 0 for -inf
    total = e.sum(axis=-1) + e_sink  # (..., T_q)
    safe = np.where(total > 0, total, 1.0)
    weights = np.where(total[..., None] > 0, e / safe[..., None], 0.0)  # (..., T_q, T_k)
    sink_weight = np.where(total > 0, e_sink / safe, 0.0)  # (..., T_q)
    weights = weights.astype(np.result_type(logits.dtype, v.dtype), copy=False)
    return weights @ v, weights, sink_weight  # (..., T_q, d_v), (..., T_q, T_k), (..., T_q)


def streaming_mask(T: int, n_sink: int, window: int) -> np.ndarray:
    """StreamingLLM's mask, ``(T, T)`` bool: query i may attend key j if j <= i and (j < n_sink or i - j < window).

    The first ``n_sink`` tokens (the attention sinks) stay visible forever; besides them each query sees
    its last ``window`` tokens (itself included). Each row allows at most ``n_sink + window`` keys, so
    the key/value cache never grows beyond that. With ``n_sink = 0`` it is a plain sliding window.

    Args:
        T: tokens (>= 1).
        n_sink: first tokens always kept (>= 0).
        window: recent tokens kept, itself included (>= 1).
    """
    T = check_positive_int("T", T)
    n_sink = check_positive_int("n_sink", n_sink, low=0)
    window = check_positive_int("window", window)
    i = np.arange(T)[:, None]  # (T, 1) query positions
    j = np.arange(T)[None, :]  # (1, T) key positions
    return (j <= i) & ((j < n_sink) | (i - j < window))  # (T, T)
