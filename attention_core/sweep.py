"""Saturation measured over d_k: the numbers behind the "why 1/sqrt(d_k)" page.

One point = one (d_k, seq_len, scaled, temperature). For each seed: queries q (N, d_k) and one sequence of keys
k (T, d_k) with i.i.d. N(0, 1) entries give raw scores q k^T (:func:`score_samples`); an upstream gradient g
(N, T) ~ N(0, 1), the same for every d_k, stands for what the loss sends back to the weights
(:func:`upstream_gradients`). Neither depends on the scaling or the temperature, so a new temperature only
re-applies the softmax to them (:func:`point_from_samples`): logits = scores (/ sqrt(d_k) if scaled) /
temperature, weights = softmax(logits), and the gradient that reaches the logits J^T g with
J = diag(p) - p p^T (:func:`softmax_backward`, checked against torch autograd in the tests, :func:`score_gradient`).
Each measure is averaged over rows, then summarised over seeds. A sweep runs the points for d_k = 1, 2, 4, ...
scaled, unscaled, and unscaled at temperature * sqrt(d_k) (which must equal scaled).

Shapes: S seeds, N query rows, T keys, P points of a sweep.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int, check_temperature
from .saturation import NEAR_ONE_HOT, jacobian_frobenius, softmax_jacobian
from .softmax import softmax

MEASURES = ("score_std", "max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm")


def softmax_backward(weights: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    """The gradient that reaches the logits, J^T g = p * (g - sum(p * g)), J = diag(p) - p p^T (symmetric).

    Args:
        weights: ``(..., T)`` softmax rows p; upstream: ``(..., T)`` dL/dp.

    Returns:
        ``(..., T)`` dL/dlogits; each row sums to 0 (adding a constant to a row's logits changes nothing).
    """
    return weights * (upstream - (weights * upstream).sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class ScoreGradient:
    """One seed's sampled scores, their softmax weights and the gradient that reaches the logits (autograd)."""

    scores: np.ndarray  # (N, T) q k^T, divided by sqrt(d_k) if scaled (before the temperature)
    weights: np.ndarray  # (N, T) softmax(scores / temperature)
    upstream: np.ndarray  # (N, T) g ~ N(0, 1): dL/dweights
    grad: np.ndarray  # (N, T) d(sum(weights * g)) / d logits

    @property
    def grad_norm(self) -> np.ndarray:
        """(N,) the L2 length of each row's gradient: how much signal the softmax lets back to its scores."""
        return np.linalg.norm(self.grad, axis=-1)


def score_gradient(
    d_k: int, seq_len: int, scaled: bool, temperature: float = 1.0, n_rows: int = 256, seed: int = 0
) -> ScoreGradient:
    """Sample scores, push a random upstream gradient back through the softmax with torch autograd: the
    reference the closed form :func:`softmax_backward` of the sweep is tested against.

    Reference::

        q, k, g = randn(N, d_k), randn(T, d_k), randn(N, T)
        logits = q @ k.T / (sqrt(d_k) if scaled else 1) / temperature
        p = softmax(logits);  grad = p * (g - (p * g).sum(-1, keepdims=True))   # = J^T g, J = diag(p) - p p^T

    A saturated (one-hot) row has J ~ 0, so almost no gradient reaches its scores.

    Args:
        d_k: query/key width; seq_len: T keys; n_rows: N query rows; seed: torch generator seed.
        scaled: divide the scores by sqrt(d_k); temperature: > 0, divides the logits.

    Returns:
        :class:`ScoreGradient` with ``(N, T)`` scores, weights, upstream gradient and gradient (float64 NumPy).
    """
    import torch

    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    n_rows = check_positive_int("n_rows", n_rows, high=100000)
    t = check_temperature(temperature)
    gen = torch.Generator().manual_seed(int(seed))
    q = torch.randn(n_rows, d_k, generator=gen, dtype=torch.float64)  # (N, d_k)
    k = torch.randn(seq_len, d_k, generator=gen, dtype=torch.float64)  # (T, d_k) one key sequence
    g = torch.randn(n_rows, seq_len, generator=gen, dtype=torch.float64)  # (N, T) upstream gradient
    scores = q @ k.T  # (N, T)
    if scaled:
        scores = scores / math.sqrt(d_k)
    logits = (scores / t).requires_grad_(True)  # (N, T)
    weights = torch.softmax(logits, dim=-1)  # (N, T)
    (weights * g).sum().backward()
    return ScoreGradient(scores.numpy(), weights.detach().numpy(), g.numpy(), logits.grad.numpy())


@dataclass(frozen=True)
class ScoreSamples:
    """Raw scores of one (d_k, seq_len) for every seed: what a new scaling or temperature starts from."""

    d_k: int  # query/key width
    centered: np.ndarray  # (S, N, T) raw scores q . k_j minus their row's largest (<= 0), float32 (from float64)
    std_raw: np.ndarray  # (S,) standard deviation of the raw scores per seed (from the float64 scores)
    std_scaled: np.ndarray  # (S,) the same divided by sqrt(d_k)


def score_samples(d_k: int, seq_len: int, n_seeds: int = 4, n_rows: int = 256) -> ScoreSamples:
    """For each seed s, queries (N, d_k) and keys (T, d_k) with N(0, 1) entries from a generator seeded with
    (s, seq_len, d_k), and their raw scores. The scores are kept centered (each row minus its largest score,
    which the softmax ignores; a positive scaling or temperature keeps the largest score the largest, so a point's
    logits are the centered scores times one factor, with no row maximum to find again) and in float32 (half the
    memory: a sweep at T = 512 stores 23 MB); each point computes in float64 from them, so its rounding (a few
    units in the seventh digit of a logit) is the same for every scaling and temperature."""
    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    n_seeds = check_positive_int("n_seeds", n_seeds, high=64)
    n_rows = check_positive_int("n_rows", n_rows, high=100000)
    scores = np.empty((n_seeds, n_rows, seq_len))  # (S, N, T)
    for s in range(n_seeds):
        rng = np.random.default_rng([s, seq_len, d_k, 1])
        q = rng.standard_normal((n_rows, d_k))  # (N, d_k)
        k = rng.standard_normal((seq_len, d_k))  # (T, d_k)
        np.matmul(q, k.T, out=scores[s])  # (N, T)
    std_raw = scores.std(axis=(1, 2))  # (S,)
    std_scaled = (scores / math.sqrt(d_k)).std(axis=(1, 2))  # (S,) as the scaled logits are formed
    scores -= scores.max(axis=-1, keepdims=True)  # (S, N, T) <= 0, 0 at each row's largest score
    return ScoreSamples(d_k, scores.astype(np.float32), std_raw, std_scaled)


def upstream_gradients(seq_len: int, n_seeds: int = 4, n_rows: int = 256) -> np.ndarray:
    """``(S, N, T)`` the upstream gradients g ~ N(0, 1), one per seed from a generator seeded with (s, seq_len),
    the same for every d_k (so a curve over d_k shows what the softmax does, not a new g)."""
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    n_seeds = check_positive_int("n_seeds", n_seeds, high=64)
    n_rows = check_positive_int("n_rows", n_rows, high=100000)
    return np.stack([np.random.default_rng([s, seq_len, 0]).standard_normal((n_rows, seq_len)) for s in range(n_seeds)])


@dataclass(frozen=True)
class Spread:
    """One measure over seeds."""

    mean: float  # mean over seeds
    lo: float  # smallest seed value
    hi: float  # largest seed value


@dataclass(frozen=True)
class SaturationPoint:
    """Saturation measures at one setting, each a :class:`Spread` over seeds (row means per seed)."""

    d_k: int  # query/key width
    seq_len: int  # T keys per row
    scaled: bool  # scores divided by sqrt(d_k)
    temperature: float  # divides the logits
    score_std_theory: float  # sqrt(d_k) unscaled, 1 scaled (before the temperature)
    score_std: Spread  # standard deviation of the scores
    max_weight: Spread  # mean largest weight of a row
    normalized_entropy: Spread  # mean entropy / log T (1 = uniform, 0 = one-hot)
    effective_tokens: Spread  # mean exp(entropy): keys a row really spreads over
    near_one_hot_share: Spread  # share of rows with max weight > NEAR_ONE_HOT
    grad_norm: Spread  # mean L2 length of the gradient reaching a row's logits

    def row(self) -> dict[str, float]:
        """Plain floats for a chart table: d_k, and for each measure ``name``, ``name_lo``, ``name_hi``."""
        out = {"d_k": float(self.d_k)}
        for name in MEASURES:
            s = getattr(self, name)
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = s.mean, s.lo, s.hi
        return out


def _row_measures(z: np.ndarray, upstream: np.ndarray | None) -> dict[str, np.ndarray]:
    """Per-seed row means of each softmax measure of the logits ``z`` (S, N, T), centered (each row's largest is
    0); returns (S,) arrays. Without ``upstream`` only the largest weight is measured (what the third curve of a
    sweep draws)."""
    T = z.shape[-1]
    p = np.exp(z)
    total = p.sum(axis=-1)  # (S, N) >= 1
    max_weight = 1.0 / total  # the largest entry is exp(0) / total
    if upstream is None:
        return {"max_weight": max_weight.mean(axis=-1)}
    p /= total[..., None]  # softmax rows
    pz = np.einsum("snt,snt->sn", p, z)  # (S, N) sum p z, no (S, N, T) temporary
    entropy = np.maximum(np.log(total) - pz, 0.0)  # -sum p log p, log p = z - log total
    grad = softmax_backward(p, upstream)  # (S, N, T)
    return {
        "max_weight": max_weight.mean(axis=-1),
        "normalized_entropy": (entropy / math.log(T) if T > 1 else np.zeros_like(entropy)).mean(axis=-1),
        "effective_tokens": np.exp(entropy).mean(axis=-1),
        "near_one_hot_share": (max_weight > NEAR_ONE_HOT).mean(axis=-1),
        "grad_norm": np.sqrt(np.einsum("snt,snt->sn", grad, grad)).mean(axis=-1),
    }


NOT_MEASURED = Spread(math.nan, math.nan, math.nan)  # a measure a point left out


def point_from_samples(
    samples: ScoreSamples, upstream: np.ndarray | None, scaled: bool, temperature: float
) -> SaturationPoint:
    """The saturation measures of ``samples`` at one scaling and temperature (``upstream`` from
    :func:`upstream_gradients` with the same seeds, rows and keys). With ``upstream=None`` only the spread of
    the scores and the largest weight are measured; the other measures are NaN (:data:`NOT_MEASURED`)."""
    t = check_temperature(temperature)
    if upstream is not None and upstream.shape != samples.centered.shape:
        raise ValueError(f"upstream {upstream.shape} must match the scores {samples.centered.shape} (S, N, T)")
    d_k = samples.d_k
    # (S, N, T) a fresh float64 array, each row's largest 0: centered scores / sqrt(d_k) / t, or / t
    logits = np.multiply(samples.centered, 1.0 / (math.sqrt(d_k) * t) if scaled else 1.0 / t, dtype=np.float64)
    per_seed = _row_measures(logits, upstream)
    per_seed["score_std"] = samples.std_scaled if scaled else samples.std_raw
    spreads = {name: NOT_MEASURED for name in MEASURES}
    spreads |= {name: Spread(float(v.mean()), float(v.min()), float(v.max())) for name, v in per_seed.items()}
    T = samples.centered.shape[-1]
    return SaturationPoint(d_k, T, bool(scaled), t, 1.0 if scaled else math.sqrt(d_k), **spreads)


Sampler = Callable[[int, int, int, int], ScoreSamples]  # (d_k, seq_len, n_seeds, n_rows) -> samples
Upstream = Callable[[int, int, int], np.ndarray]  # (seq_len, n_seeds, n_rows) -> (S, N, T)


def saturation_point(
    d_k: int,
    seq_len: int,
    scaled: bool,
    temperature: float = 1.0,
    n_seeds: int = 4,
    n_rows: int = 256,
    samples: Sampler = score_samples,
    upstream: Upstream = upstream_gradients,
) -> SaturationPoint:
    """Saturation measures at one setting over ``n_seeds`` seeds of ``n_rows`` query rows each (``samples`` and
    ``upstream`` may be cached versions of :func:`score_samples` and :func:`upstream_gradients`)."""
    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    g = upstream(seq_len, n_seeds, n_rows)
    return point_from_samples(samples(d_k, seq_len, n_seeds, n_rows), g, bool(scaled), temperature)


def sweep_d_ks(max_d_k: int = 1024) -> list[int]:
    """The d_k values of a sweep: powers of two from 1 to ``max_d_k``."""
    max_d_k = check_positive_int("max_d_k", max_d_k, high=4096)
    return [2**i for i in range(int(math.log2(max_d_k)) + 1)]


@dataclass(frozen=True)
class SaturationSweep:
    """The three curves over d_k at one (seq_len, temperature)."""

    seq_len: int  # T keys per row
    temperature: float  # tau
    d_ks: tuple[int, ...]  # (P,) 1, 2, 4, ... max_d_k
    scaled: tuple[SaturationPoint, ...]  # (P,) scores / sqrt(d_k), temperature tau
    unscaled: tuple[SaturationPoint, ...]  # (P,) raw scores, temperature tau
    unscaled_sqrt_dk: tuple[SaturationPoint, ...]  # (P,) raw scores at tau * sqrt(d_k): score spread, max weight

    @property
    def temperature_gap(self) -> float:
        """Largest |mean max weight, scaled - unscaled at tau * sqrt(d_k)| over the sweep (0 up to rounding)."""
        return max(abs(a.max_weight.mean - b.max_weight.mean) for a, b in zip(self.scaled, self.unscaled_sqrt_dk))

    def curve(self, setting: str) -> tuple[SaturationPoint, ...]:
        """The points of ``setting``: "scaled", "unscaled" or "unscaled_sqrt_dk"."""
        if setting not in ("scaled", "unscaled", "unscaled_sqrt_dk"):
            raise ValueError(f"setting={setting!r} is not allowed; choose scaled, unscaled or unscaled_sqrt_dk")
        return getattr(self, setting)


def saturation_sweep(
    seq_len: int,
    temperature: float = 1.0,
    max_d_k: int = 1024,
    n_seeds: int = 4,
    n_rows: int = 256,
    samples: Sampler = score_samples,
    upstream: Upstream = upstream_gradients,
) -> SaturationSweep:
    """Measure :func:`saturation_point` for every d_k of :func:`sweep_d_ks`, three ways.

    The third curve runs the unscaled scores at temperature ``temperature * sqrt(d_k)``: dividing
    the scores by sqrt(d_k) *is* a temperature, so it lies on the scaled curve. It measures the largest weight
    only (the one chart that draws it; its other measures are NaN), a third of a new temperature's work saved.
    """
    d_ks = sweep_d_ks(max_d_k)
    t = check_temperature(temperature)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    g = upstream(seq_len, n_seeds, n_rows)  # (S, N, T)
    drawn = [samples(d, seq_len, n_seeds, n_rows) for d in d_ks]

    def curve(scaled: bool, factor, grads) -> tuple[SaturationPoint, ...]:
        return tuple(point_from_samples(s, grads, scaled, t * factor(s.d_k)) for s in drawn)

    return SaturationSweep(
        seq_len,
        t,
        tuple(d_ks),
        curve(True, lambda d: 1.0, g),
        curve(False, lambda d: 1.0, g),
        curve(False, math.sqrt, None),  # drawn in the chart of the largest weight only: measured alone
    )


@dataclass(frozen=True)
class RowUpClose:
    """One query row against T keys, with and without the 1/sqrt(d_k) scaling."""

    d_k: int  # query/key width
    temperature: float  # tau, divides the logits
    scores: np.ndarray  # (T,) raw scores q . k_j
    logits_unscaled: np.ndarray  # (T,) scores / tau
    logits_scaled: np.ndarray  # (T,) scores / (sqrt(d_k) tau)
    weights_unscaled: np.ndarray  # (T,) softmax(logits_unscaled)
    weights_scaled: np.ndarray  # (T,) softmax(logits_scaled)

    def logit_spread(self, scaled: bool) -> float:
        """The standard deviation of the row's logits, scaled or not."""
        return float((self.logits_scaled if scaled else self.logits_unscaled).std())

    def jacobian(self, scaled: bool) -> np.ndarray:
        """(T, T) the softmax's Jacobian diag(p) - p p^T at the row's weights, scaled or not."""
        return softmax_jacobian(self.weights_scaled if scaled else self.weights_unscaled)

    def jacobian_norm(self, scaled: bool) -> float:
        """The Frobenius norm of :meth:`jacobian` (from the weights, O(T), no T x T matrix): 0 for a one-hot row,
        which passes no gradient back."""
        return float(jacobian_frobenius(self.weights_scaled if scaled else self.weights_unscaled))


def row_up_close(d_k: int, seq_len: int, temperature: float = 1.0, seed: int = 0) -> RowUpClose:
    """Draw one query q (d_k,) and keys k (T, d_k) with N(0, 1) entries and softmax their scores both ways."""
    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    t = check_temperature(temperature)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d_k)  # (d_k,)
    k = rng.standard_normal((seq_len, d_k))  # (T, d_k)
    scores = k @ q  # (T,)
    unscaled, scaled = scores / t, scores / (math.sqrt(d_k) * t)
    return RowUpClose(d_k, t, scores, unscaled, scaled, softmax(unscaled), softmax(scaled))
