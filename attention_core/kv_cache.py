"""The KV cache: decode one token at a time, computing only the new token's q, k, v and reusing the rest.

A decoder generates token t after tokens 0..t-1. Causal attention lets row t see keys 0..t only, and
the keys and values of earlier tokens never change, so they are kept in a cache: each step projects
one new row (q_t, k_t, v_t), appends k_t and v_t, and attends with q_t over the whole cache. The
outputs equal one causal pass over the whole sequence (the invariant the tests prove).

Shape legend: T tokens, d_model width, H query heads, G key/value heads (G divides H; G = H is
multi-head), d_k = d_model / H.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int, check_temperature
from .attention import merge_heads, score_factor
from .gqa import gqa_projections, project_heads
from .softmax import _softmax


class KVCache:
    """The keys and values of the tokens seen so far (one layer): ``(G, capacity, d)`` buffers filled row by row."""

    def __init__(self, n_kv_heads: int, d_k: int, d_v: int, capacity: int, dtype=np.float32):
        self.capacity = check_positive_int("capacity", capacity)
        self._k = np.zeros(
            (check_positive_int("n_kv_heads", n_kv_heads), capacity, check_positive_int("d_k", d_k)), dtype=dtype
        )  # (G, capacity, d_k)
        self._v = np.zeros((n_kv_heads, capacity, check_positive_int("d_v", d_v)), dtype=dtype)  # (G, capacity, d_v)
        self.length = 0  # tokens cached so far

    def append(self, k_new: np.ndarray, v_new: np.ndarray) -> None:
        """Store one token's keys ``(G, d_k)`` and values ``(G, d_v)``."""
        if self.length == self.capacity:
            raise ValueError(f"the cache is full ({self.capacity} tokens); make it with a larger capacity")
        if k_new.shape != self._k.shape[::2] or v_new.shape != self._v.shape[::2]:
            raise ValueError(
                f"expected k {self._k.shape[::2]} and v {self._v.shape[::2]}; got {k_new.shape}, {v_new.shape}"
            )
        self._k[:, self.length], self._v[:, self.length] = k_new, v_new
        self.length += 1

    @property
    def k(self) -> np.ndarray:
        return self._k[:, : self.length]  # (G, length, d_k), a view

    @property
    def v(self) -> np.ndarray:
        return self._v[:, : self.length]  # (G, length, d_v), a view

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached rows (K and V)."""
        return int(self.k.nbytes + self.v.nbytes)


@dataclass(frozen=True)
class DecodeStep:
    """What one decoding step computed and what it reused."""

    t: int  # position of the new token, 0-based
    q: np.ndarray  # (H, d_k) the new token's queries: computed this step
    k: np.ndarray  # (G, d_k) the new token's keys: computed this step, then appended to the cache
    v: np.ndarray  # (G, d_k) the new token's values: computed this step, then appended to the cache
    reused: int  # cached K and V rows read from the cache (tokens 0..t-1), not recomputed
    weights: np.ndarray  # (H, t + 1) the new query's attention over tokens 0..t
    output: np.ndarray  # (d_model,) the layer's output row for this token


@dataclass(frozen=True)
class DecodeRun:
    """Every step of a decode and the final cache."""

    steps: tuple[DecodeStep, ...]  # one per token
    output: np.ndarray  # (T, d_model) the output rows stacked: equals the causal pass
    k: np.ndarray  # (G, T, d_k) the cache's keys at the end
    v: np.ndarray  # (G, T, d_k) the cache's values at the end
    cache_bytes: int  # bytes of K and V in the cache at the end


def decode_with_cache(
    x, w_q, w_k, w_v, w_o, n_heads: int, n_kv_heads: int | None = None, scaled: bool = True, temperature: float = 1.0
) -> DecodeRun:
    """Causal self-attention computed token by token with a KV cache.

    Reference::

        for t in range(T):
            q_t, k_t, v_t = x[t] @ W_q, x[t] @ W_k, x[t] @ W_v     # one new row each: (H, d_k), (G, d_k), (G, d_k)
            cache.append(k_t, v_t)                                 # rows 0..t-1 are reused, not recomputed
            z_t = attention(q_t, cache.k, cache.v) @ W_o           # (d_model,)

    Args:
        x: ``(T, d_model)`` the tokens, in order.
        w_q, w_o: ``(d_model, d_model)``; w_k, w_v: ``(d_model, G * d_k)`` (``x @ W`` convention).
        n_heads: H, divides d_model. n_kv_heads: G, divides H (default H: multi-head attention).
        scaled, temperature: as in :func:`attention_core.scaled_dot_product_attention`.

    Returns:
        :class:`DecodeRun` whose ``output`` equals
        ``gqa_self_attention(x, ..., mask=causal_mask(T))[0]`` (``multi_head_attention`` when G = H).
    """
    t_ = check_temperature(temperature)
    x = check_finite_array("x", x, min_ndim=2)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"x must be (T, d_model) with at least one token; got shape {x.shape}")
    T, d_model = x.shape
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    gqa_projections(x[:1], w_q, w_k, w_v, n_heads, n_kv_heads)  # checks every shape and value once
    w_q, w_k, w_v = (np.asarray(w) for w in (w_q, w_k, w_v))
    w_o = check_finite_array("w_o", w_o, min_ndim=2)
    if w_o.shape != (d_model, d_model):
        raise ValueError(f"w_o must have shape (d_model, d_model) = {(d_model, d_model)}; got {w_o.shape}")
    d_k, rep = d_model // n_heads, n_heads // n_kv_heads
    factor = score_factor(d_k, scaled, t_)
    cache = KVCache(n_kv_heads, d_k, d_k, T, dtype=np.result_type(x.dtype, w_k.dtype, w_v.dtype))
    steps, rows = [], []
    for t in range(T):
        q, k, v = project_heads(x[t : t + 1], w_q, w_k, w_v, n_heads, n_kv_heads)  # (H, 1, d_k), (G, 1, d_k) x2
        reused = cache.length
        cache.append(k[:, 0], v[:, 0])
        q_grouped = q.reshape(n_kv_heads, rep, d_k) * factor  # (G, H/G, d_k): query heads beside their KV head
        scores = q_grouped @ np.swapaxes(cache.k, -1, -2)  # (G, H/G, t+1) one row per query head
        weights = _softmax(scores, inplace=True)  # no mask: the cache holds only tokens 0..t
        heads = (weights @ cache.v).reshape(n_heads, 1, d_k)  # (H, 1, d_k)
        row = (merge_heads(heads) @ w_o)[0]  # (d_model,)
        steps.append(DecodeStep(t, q[:, 0], k[:, 0], v[:, 0], reused, weights.reshape(n_heads, t + 1), row))
        rows.append(row)
    return DecodeRun(tuple(steps), np.stack(rows), cache.k, cache.v, cache.nbytes)
