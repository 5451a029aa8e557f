"""Saturation measured over d_k: the numbers behind the "why 1/sqrt(d_k)" page.

One point = one (d_k, seq_len, scaled, temperature): for each seed, queries q (N, d_k) and one
sequence of keys k (T, d_k) with i.i.d. N(0, 1) entries, scores = q k^T (/ sqrt(d_k) if scaled),
logits = scores / temperature, weights = softmax(logits). The gradient reaching the logits is
measured with torch autograd for a fixed random upstream gradient (:func:`score_gradient`). Each
measure is averaged over rows, then summarised over seeds. A sweep runs the points for d_k = 1, 2,
4, ... scaled, unscaled, and unscaled at temperature * sqrt(d_k) (which must equal scaled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int, check_temperature
from .saturation import jacobian_frobenius, saturation_metrics, softmax_jacobian
from .softmax import softmax

MEASURES = ("score_std", "max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm")


@dataclass(frozen=True)
class ScoreGradient:
    """One seed's sampled scores, their softmax weights and the gradient that reaches the logits."""

    scores: np.ndarray  # (N, T) q k^T, divided by sqrt(d_k) if scaled (before the temperature)
    weights: np.ndarray  # (N, T) softmax(scores / temperature)
    grad: np.ndarray  # (N, T) d(sum(weights * g)) / d logits for the upstream gradient g ~ N(0, 1)

    @property
    def grad_norm(self) -> np.ndarray:
        """(N,) the L2 length of each row's gradient: how much signal the softmax lets back to its scores."""
        return np.linalg.norm(self.grad, axis=-1)


def score_gradient(
    d_k: int, seq_len: int, scaled: bool, temperature: float = 1.0, n_rows: int = 256, seed: int = 0
) -> ScoreGradient:
    """Sample scores, push a random upstream gradient back through the softmax with autograd.

    Reference::

        q, k, g = randn(N, d_k), randn(T, d_k), randn(N, T)
        logits = q @ k.T / (sqrt(d_k) if scaled else 1) / temperature
        p = softmax(logits);  grad = p * (g - (p * g).sum(-1, keepdims=True))   # = J^T g, J = diag(p) - p p^T

    A saturated (one-hot) row has J ~ 0, so almost no gradient reaches its scores.

    Args:
        d_k: query/key width; seq_len: T keys; n_rows: N query rows; seed: torch generator seed.
        scaled: divide the scores by sqrt(d_k); temperature: > 0, divides the logits.

    Returns:
        :class:`ScoreGradient` with ``(N, T)`` scores, weights and gradient (float64 NumPy).
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
    return ScoreGradient(scores.numpy(), weights.detach().numpy(), logits.grad.numpy())


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


def _one_seed(d_k: int, seq_len: int, scaled: bool, temperature: float, n_rows: int, seed: int) -> dict[str, float]:
    sg = score_gradient(d_k, seq_len, scaled, temperature, n_rows, seed=int(seed) * 100003 + d_k * 7 + seq_len)
    m = saturation_metrics(sg.weights).summary()
    return {
        "score_std": float(sg.scores.std()),
        "grad_norm": float(sg.grad_norm.mean()),
        **{name: m[name] for name in MEASURES if name in m},
    }


def saturation_point(
    d_k: int, seq_len: int, scaled: bool, temperature: float = 1.0, n_seeds: int = 4, n_rows: int = 256
) -> SaturationPoint:
    """Saturation measures at one setting over ``n_seeds`` seeds of ``n_rows`` query rows each."""
    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    n_seeds = check_positive_int("n_seeds", n_seeds, high=64)
    n_rows = check_positive_int("n_rows", n_rows, high=100000)
    t = check_temperature(temperature)
    per_seed = [_one_seed(d_k, seq_len, bool(scaled), t, n_rows, s) for s in range(n_seeds)]
    spreads = {}
    for name in MEASURES:
        vals = np.array([p[name] for p in per_seed])  # (n_seeds,)
        spreads[name] = Spread(float(vals.mean()), float(vals.min()), float(vals.max()))
    return SaturationPoint(d_k, seq_len, bool(scaled), t, 1.0 if scaled else math.sqrt(d_k), **spreads)


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
    unscaled_sqrt_dk: tuple[SaturationPoint, ...]  # (P,) raw scores, temperature tau * sqrt(d_k)

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
    seq_len: int, temperature: float = 1.0, max_d_k: int = 1024, n_seeds: int = 4, n_rows: int = 256
) -> SaturationSweep:
    """Measure :func:`saturation_point` for every d_k of :func:`sweep_d_ks`, three ways.

    The third curve runs the unscaled scores at temperature ``temperature * sqrt(d_k)``: dividing
    the scores by sqrt(d_k) *is* a temperature, so it lies on the scaled curve.
    """
    d_ks = sweep_d_ks(max_d_k)
    t = check_temperature(temperature)

    def curve(scaled: bool, factor) -> tuple[SaturationPoint, ...]:
        return tuple(saturation_point(d, seq_len, scaled, t * factor(d), n_seeds, n_rows) for d in d_ks)

    return SaturationSweep(
        int(seq_len), t, tuple(d_ks), curve(True, lambda d: 1.0), curve(False, lambda d: 1.0), curve(False, math.sqrt)
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


def _g(x: float) -> str:
    """3 significant digits; an exact 0 reads as 0."""
    return "0" if x == 0 else f"{x:.3g}"


def setting_sentence(now: SaturationPoint, other: SaturationPoint) -> str:
    """What the current scaling choice ``now`` does at its d_k, against the other choice ``other``.

    Both points must share d_k, seq_len and temperature and differ in ``scaled``.
    """
    if (now.d_k, now.seq_len, now.temperature) != (
        other.d_k,
        other.seq_len,
        other.temperature,
    ) or now.scaled == other.scaled:
        raise ValueError("now and other must share d_k, seq_len and temperature and differ in scaled")
    if now.seq_len == 1:
        return (
            "With a single key every row puts all its weight (1) on it: there is nothing to choose, so scaling "
            "changes nothing and no gradient reaches the score."
        )
    mode = "scaled by 1/√d_k" if now.scaled else "unscaled"
    share, mw = now.near_one_hot_share.mean, now.max_weight.mean
    head = (
        f"Your setting, {mode} at d_k = {now.d_k}: {share:.0%} of rows put over 99% of their weight on one key "
        f"(mean largest weight {_g(mw)})"
    )
    if now.d_k == 1:
        return (
            head
            + ". At d_k = 1, √d_k = 1, so scaling changes nothing; raise d_model or lower the heads to see it matter."
        )
    switch = "Turning scaling off" if now.scaled else "Turning scaling on"
    g_now, g_other = now.grad_norm.mean, other.grad_norm.mean
    if g_now > 0:
        ratio = g_other / g_now
        grad = (
            f"the gradient reaching the scores {_g(ratio)} times larger"
            if ratio >= 1
            else f"the gradient reaching the scores {_g(1 / ratio)} times smaller"
            if ratio > 0
            else "the gradient reaching the scores exactly 0"
        )
    else:
        grad = f"the gradient reaching the scores {_g(g_other)} instead of 0"
    return (
        head + f". {switch} would make that {other.near_one_hot_share.mean:.0%} (mean largest weight "
        f"{_g(other.max_weight.mean)}) and {grad}."
    )
