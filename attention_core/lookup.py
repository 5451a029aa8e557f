"""Attention as a soft dictionary lookup: a query finds keys by similarity and returns a weighted mix of values.

A Python dict returns the value of the one key equal to the query (the last one stored, if a key was stored
twice) and raises KeyError otherwise. Attention scores every key against the query, ``s_j = q · k_j / √d_k``,
and returns ``Σ_j softmax(s / τ)_j v_j``. As the temperature τ falls, the weight gathers on the best-scoring
keys: the soft lookup becomes a hard one, which returns the value of the best key (the average of the values
of keys that tie for best), whether or not the query equals a key.

Shapes: query ``(d_k,)``, keys ``(N, d_k)``, values ``(N, d_v)``, weights ``(N,)``, answer ``(d_v,)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_above, check_finite_array, check_temperature
from .attention import scaled_dot_product_attention

TIE_RTOL = 1e-9  # scores within this (relative to 1 + |best|) of the best count as tied for best


def _query_keys(query, keys) -> tuple[np.ndarray, np.ndarray]:
    """The query ``(d_k,)`` and keys ``(N, d_k)`` as float arrays, or a ValueError naming what is wrong."""
    q = check_finite_array("query", query)
    k = check_finite_array("keys", keys, min_ndim=2)
    if q.ndim != 1:
        raise ValueError(f"query must be one vector (d_k,); got shape {q.shape}")
    if k.ndim != 2 or k.shape[0] == 0:
        raise ValueError(f"keys must be a non-empty (N, d_k) array; got shape {k.shape}")
    if k.shape[1] != q.shape[0]:
        raise ValueError(f"query and keys must share d_k; got query {q.shape} and keys {k.shape}")
    return q, k


def _values(values, n: int) -> np.ndarray:
    v = check_finite_array("values", values, min_ndim=2)
    if v.ndim != 2 or v.shape[0] != n:
        raise ValueError(f"values must be an (N, d_v) array with one row per key (N = {n}); got shape {v.shape}")
    return v


def lookup_scores(query, keys) -> np.ndarray:
    """How well each key matches the query: ``s_j = q · k_j / √d_k``, shape ``(N,)`` (before the temperature)."""
    q, k = _query_keys(query, keys)
    return k @ q / math.sqrt(q.shape[0])  # (N,)


def best_keys(query, keys) -> np.ndarray:
    """Which keys tie for the best score (bool ``(N,)``): those within ``TIE_RTOL · (1 + |best|)`` of it."""
    s = lookup_scores(query, keys)  # (N,)
    best = s.max()
    return s >= best - TIE_RTOL * (1.0 + abs(best))


def soft_lookup(query, keys, values, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """One query's answer from a dictionary of ``keys`` and ``values``: attention for a single query.

    Args:
        query: ``(d_k,)``; keys: ``(N, d_k)``; values: ``(N, d_v)``; temperature: > 0.

    Returns:
        ``(answer (d_v,), weights (N,))``: weights = softmax(keys · query / (√d_k τ)), answer = weights @ values.
    """
    q, k = _query_keys(query, keys)
    v = _values(values, k.shape[0])
    out, w = scaled_dot_product_attention(q[None, :], k, v, temperature=check_temperature(temperature))
    return out[0], w[0]  # (d_v,), (N,)


def weights_over_temperature(query, keys, temperatures) -> np.ndarray:
    """The weights of :func:`soft_lookup` at each temperature, shape ``(len(temperatures), N)``, in one product:
    dividing the query by τ divides every score by τ, which is what the temperature does."""
    q, k = _query_keys(query, keys)
    taus = check_finite_array("temperatures", temperatures)
    if taus.ndim != 1 or np.any(taus <= 0):
        raise ValueError(f"temperatures must be a 1-D array of numbers > 0; got {np.asarray(temperatures)!r}")
    qs = q[None, :] / taus[:, None]  # (n_τ, d_k) one query per temperature
    _, w = scaled_dot_product_attention(qs, k, np.zeros((k.shape[0], 1)))  # (n_τ, N)
    return w


def hard_lookup(query, keys, values) -> tuple[np.ndarray, np.ndarray]:
    """The limit of :func:`soft_lookup` as τ → 0: all the weight on the best key, shared evenly by keys that tie.

    Returns:
        ``(answer (d_v,), weights (N,))``: weights 1/m on the m best keys (:func:`best_keys`), 0 elsewhere.
    """
    top = best_keys(query, keys)  # (N,)
    v = _values(values, top.shape[0])
    w = top / top.sum()  # (N,)
    return w @ v, w  # (d_v,), (N,)


def dict_lookup(query, keys) -> int | None:
    """What a Python dict from the keys to their positions returns for the query: the position of the key equal
    to it (the last such key: a dict keeps the last value stored under a key), or None where ``d[query]`` would
    raise KeyError."""
    q, k = _query_keys(query, keys)
    table = {tuple(row.tolist()): j for j, row in enumerate(k)}  # a real dict: equal keys overwrite
    return table.get(tuple(q.tolist()))


def hard_temperature(query, keys, share: float = 0.99) -> float:
    """The temperature below which the best keys (:func:`best_keys`) take at least ``share`` of the weight.

    Their weight falls as τ rises, from 1 (τ → 0) to m/N (τ → ∞), so there is one such temperature; ``inf``
    when they take ``share`` at every temperature (m/N ≥ share, e.g. when every key ties).
    """
    share = check_finite_above("share", share, 0.0)
    if share >= 1.0:
        raise ValueError(f"share={share!r} is not allowed; it must lie strictly between 0 and 1")
    top = best_keys(query, keys)  # (N,)
    m, n = int(top.sum()), top.shape[0]
    if m / n >= share:
        return math.inf

    def held(tau: float) -> float:
        return float(weights_over_temperature(query, keys, [tau])[0, top].sum())

    s = lookup_scores(query, keys)  # (N,)
    gaps = s.max() - s[~top]  # (N - m,) all > 0
    lo = hi = float(gaps.min()) / math.log((n - m) * share / (m * (1.0 - share)))  # exact for one gap
    for _ in range(2100):  # widen until lo holds share and hi does not (float64 spans 2^±1074)
        if held(lo) >= share:
            break
        lo /= 2.0
    for _ in range(2100):
        if held(hi) < share:
            break
        hi *= 2.0
    for _ in range(200):  # bisect in log τ
        if hi / lo - 1.0 < 1e-12:
            break
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if held(mid) >= share else (lo, mid)
    return lo


@dataclass(frozen=True)
class LookupRun:
    """One query against one dictionary: the soft lookup at a temperature, its limit, and what a dict returns."""

    query: np.ndarray  # (d_k,)
    keys: np.ndarray  # (N, d_k)
    values: np.ndarray  # (N, d_v)
    temperature: float
    scores: np.ndarray  # (N,) q · k_j / √d_k
    weights: np.ndarray  # (N,) softmax(scores / τ)
    answer: np.ndarray  # (d_v,) weights @ values
    hard_weights: np.ndarray  # (N,) the limit τ → 0: 1/m on the m best keys
    hard: np.ndarray  # (d_v,) hard_weights @ values
    found: int | None  # the key a Python dict returns (None: KeyError)
    share: float
    hard_below: float  # below this τ the best keys hold ``share`` of the weight (inf: at every τ)


def run_lookup(query, keys, values, temperature: float = 1.0, share: float = 0.99) -> LookupRun:
    """Everything a page shows about one lookup: :func:`soft_lookup`, :func:`hard_lookup`, :func:`dict_lookup`
    and :func:`hard_temperature` of the same query and dictionary."""
    answer, w = soft_lookup(query, keys, values, temperature)
    hard, w_hard = hard_lookup(query, keys, values)
    q, k = _query_keys(query, keys)
    return LookupRun(
        q,
        k,
        _values(values, k.shape[0]),
        float(temperature),
        lookup_scores(q, k),
        w,
        answer,
        w_hard,
        hard,
        dict_lookup(q, k),
        float(share),
        hard_temperature(q, k, share),
    )
