"""How saturated is a softmax? Entropy, max weight, effective tokens, the Jacobian, and the
variance argument for the 1/sqrt(d_k) scaling.

Shapes: weights ``(..., T_q, T_k)``; every per-row measure has shape ``(..., T_q)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int

NEAR_ONE_HOT = 0.99  # a row whose largest weight exceeds this is counted as "near one-hot"


@dataclass(frozen=True)
class SaturationMetrics:
    """Per-row saturation measures of attention weights ``(..., T_q, T_k)``.

    Rows that sum to 0 (fully masked) are "empty": they have entropy 0, max weight 0, effective
    tokens 0, Jacobian norm 0, and are left out of the summary means and the near-one-hot share.
    """

    entropy: np.ndarray  # (..., T_q) nats; 0 = one-hot, log T_k = uniform
    normalized_entropy: np.ndarray  # (..., T_q) entropy / log T_k in [0, 1] (0 when T_k = 1)
    max_weight: np.ndarray  # (..., T_q) the largest weight of the row
    effective_tokens: np.ndarray  # (..., T_q) exp(entropy): how many keys the row really spreads over
    jacobian_norm: np.ndarray  # (..., T_q) Frobenius norm of diag(p) - p p^T
    valid: np.ndarray  # (..., T_q) bool, False for empty (fully masked) rows
    near_one_hot_share: float  # share of valid rows whose max weight > NEAR_ONE_HOT

    def summary(self) -> dict[str, float]:
        """Means over valid rows (plus the near-one-hot share) as plain floats."""

        def mean(a):
            return float(a[self.valid].mean()) if self.valid.any() else 0.0

        return {
            "entropy": mean(self.entropy),
            "normalized_entropy": mean(self.normalized_entropy),
            "max_weight": mean(self.max_weight),
            "effective_tokens": mean(self.effective_tokens),
            "near_one_hot_share": self.near_one_hot_share,
            "jacobian_norm": mean(self.jacobian_norm),
        }


def softmax_jacobian(p) -> np.ndarray:
    """The softmax Jacobian ``diag(p) - p p^T`` for each row: ``(..., T)`` -> ``(..., T, T)``."""
    p = check_finite_array("p", p)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def jacobian_frobenius(p: np.ndarray, top: np.ndarray | None = None) -> np.ndarray:
    """Frobenius norm of diag(p) - p p^T per row, accurate also for near-one-hot rows. ``top``: each row's largest
    entry (``p.max(-1)``), if the caller has it.

    With the row's sums S1 = sum p, S2 = sum p^2 and S3 = sum p^3,
    ``||J||_F^2 = sum_i p_i^2 ((S1 - p_i)^2 + S2 - p_i^2) = S1^2 S2 - 2 S1 S3 + S2^2``: three sums a row. Where no
    entry passes half the row, every term is within a small factor of the result (which is at least S2 / 4), so
    nothing cancels. A row with an entry over half (near one-hot: S1^2 S2 and 2 S1 S3 both near 1 while the norm
    may be 1e-13) is summed as :func:`_jacobian_frobenius_peaked` does, without the cancellation.
    """
    if top is None:
        top = p.max(axis=-1)
    s1 = p.sum(axis=-1)
    peaked = top > 0.5 * s1
    if peaked.mean() > 0.5:  # mostly peaked rows (a low temperature): the careful sum for all is cheaper
        return _jacobian_frobenius_peaked(p)
    p2 = np.square(p)
    s2 = p2.sum(axis=-1)
    s3 = np.einsum("...i,...i->...", p2, p)
    out = np.sqrt(np.maximum(s1 * s1 * s2 - 2.0 * s1 * s3 + s2 * s2, 0.0))
    if peaked.any():
        out[peaked] = _jacobian_frobenius_peaked(p[peaked])
    return out


def _jacobian_frobenius_peaked(p: np.ndarray) -> np.ndarray:
    """:func:`jacobian_frobenius` summed so that a near-one-hot row loses nothing.

    ``||J||_F^2 = sum_i p_i^2 (r1_i^2 + r2_i)`` with ``r1_i = sum_{j != i} p_j`` (= 1 - p_i) and
    ``r2_i = sum_{j != i} p_j^2``. Off a row's largest entry m, ``r_i = (row sum) - p_i`` loses nothing,
    since p_i is at most half the row sum; at m the row sum minus p_m would cancel (a near-one-hot row
    has p_m ~ 1), so r_m is summed from the other entries directly. O(T) a row, no T x T matrix.
    """
    m = p.argmax(axis=-1)[..., None]  # (..., 1) the largest entry of each row
    top = np.take_along_axis(p, m, axis=-1)  # (..., 1)
    others = p.copy()
    np.put_along_axis(others, m, 0.0, axis=-1)  # the row without its largest entry
    o1 = others.sum(axis=-1, keepdims=True)  # (..., 1) sum_{j != m} p_j
    o2 = np.square(others).sum(axis=-1, keepdims=True)  # (..., 1) sum_{j != m} p_j^2
    p2 = np.square(p)
    r1 = (o1 + top) - p  # (..., T) sum_{j != i} p_j, exact off m
    r2 = (o2 + np.square(top)) - p2  # (..., T) sum_{j != i} p_j^2, exact off m
    np.put_along_axis(r1, m, o1, axis=-1)
    np.put_along_axis(r2, m, o2, axis=-1)
    return np.sqrt((p2 * (np.square(r1) + r2)).sum(axis=-1))


def saturation_metrics(weights) -> SaturationMetrics:
    """Saturation measures of attention weights.

    Args:
        weights: ``(..., T_q, T_k)``, rows of non-negative numbers summing to 1 (or all 0 for a
            fully masked row).

    Returns:
        :class:`SaturationMetrics`. The Jacobian norm uses
        ``||diag(p) - p p^T||_F^2 = sum_i p_i^2 ((1 - p_i)^2 + sum_{j != i} p_j^2)``, so no T x T
        matrix is built (see :func:`jacobian_frobenius`).
    """
    p = np.asarray(check_finite_array("weights", weights, min_ndim=2), dtype=np.float64)  # no copy if it is
    if p.min() < 0:
        raise ValueError("weights must be non-negative (they are softmax outputs)")
    T_k = p.shape[-1]
    row_sum = p.sum(axis=-1)
    valid = row_sum > 0.5
    # 0 log 0 = 0: a zero weight's log is taken at the smallest normal number, and 0 times it is 0 (a subnormal
    # weight, under 2.3e-308, adds under 1e-305 to the entropy, which has no digit there)
    logp = np.log(np.maximum(p, np.finfo(np.float64).tiny))
    entropy = np.maximum(-np.einsum("...i,...i->...", p, logp), 0.0)  # (..., T_q)
    del logp
    normalized = entropy / math.log(T_k) if T_k > 1 else np.zeros_like(entropy)
    max_weight = p.max(axis=-1)
    effective = np.where(valid, np.exp(entropy), 0.0)
    jac = jacobian_frobenius(p, max_weight)
    n_valid = int(valid.sum())
    share = float(((max_weight > NEAR_ONE_HOT) & valid).sum() / n_valid) if n_valid else 0.0
    return SaturationMetrics(entropy, normalized, max_weight, effective, jac, valid, share)


def score_std(d_k: int, scaled: bool, n_samples: int = 20000, seed: int = 0) -> tuple[float, float]:
    """Measured and predicted standard deviation of the attention score q . k.

    For q, k with i.i.d. entries of mean 0 and variance 1, q . k = sum_i q_i k_i is a sum of d_k
    independent terms of variance 1, so Var(q . k) = d_k and std = sqrt(d_k). Dividing by sqrt(d_k)
    brings it back to 1, whatever d_k is.

    Returns:
        ``(measured, predicted)`` with predicted = sqrt(d_k) if not ``scaled`` else 1.
    """
    d_k = check_positive_int("d_k", d_k)
    n_samples = check_positive_int("n_samples", n_samples, low=2)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    scores = np.einsum("nd,nd->n", q, k)  # (N,)
    if scaled:
        scores = scores / math.sqrt(d_k)
    return float(scores.std()), (1.0 if scaled else math.sqrt(d_k))


def _entropy_bits(p: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits along the last axis (0 log 0 = 0)."""
    return -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=-1)


def js_divergence(p, q) -> np.ndarray:
    """Jensen-Shannon divergence in bits between distributions along the last axis, in [0, 1].

    JS(p, q) = (KL(p || m) + KL(q || m)) / 2 with m = (p + q) / 2, computed as
    H(m) - (H(p) + H(q)) / 2; 0 iff p == q, 1 for disjoint supports.
    """
    p, q = np.broadcast_arrays(
        check_finite_array("p", p).astype(np.float64), check_finite_array("q", q).astype(np.float64)
    )
    return np.clip(_entropy_bits((p + q) / 2) - (_entropy_bits(p) + _entropy_bits(q)) / 2, 0.0, 1.0)


def head_divergence_matrix(weights) -> np.ndarray:
    """``(H, T_q, T_k)`` weights -> ``(H, H)`` mean JS divergence (bits) between the heads' rows.

    Entry (a, b) averages JS(row i of head a, row i of head b) over the query rows i: 0 when two
    heads attend identically, 1 when they never attend to the same keys.
    """
    w = check_finite_array("weights", weights, min_ndim=3)
    if w.ndim != 3:
        raise ValueError(f"weights must be (H, T_q, T_k); got shape {w.shape}")
    w = w.astype(np.float64)
    H = w.shape[0]
    h_rows = _entropy_bits(w)  # (H, T_q): each head's row entropies, computed once
    out = np.zeros((H, H))
    for a in range(H - 1):  # one head against all later heads: memory O(H T_q T_k), not O(H^2 T_q T_k)
        h_mix = _entropy_bits((w[a][None] + w[a + 1 :]) / 2)  # (H-a-1, T_q)
        out[a, a + 1 :] = np.clip(h_mix - (h_rows[a][None] + h_rows[a + 1 :]) / 2, 0.0, 1.0).mean(axis=-1)
    return out + out.T  # (H, H), symmetric with a zero diagonal
