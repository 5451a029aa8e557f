"""Saturation measured over d_k: the numbers behind the "why 1/sqrt(d_k)" page.

One point = one (d_k, seq_len, scaled, temperature): for each seed, queries q (N, d_k) and keys
k (T, d_k) with i.i.d. N(0, 1) entries, logits = q k^T (/ sqrt(d_k) if scaled) / temperature,
weights = softmax(logits). The gradient reaching the logits is measured with torch autograd for a
fixed random upstream gradient. Each measure is averaged over rows, then summarised over seeds.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_positive_int, check_temperature
from .saturation import NEAR_ONE_HOT, saturation_metrics

MEASURES = ("score_std", "max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm")


def _one_seed(d_k: int, seq_len: int, scaled: bool, temperature: float, n_rows: int, seed: int) -> dict[str, float]:
    import torch

    gen = torch.Generator().manual_seed(int(seed) * 100003 + d_k * 7 + seq_len)
    q = torch.randn(n_rows, d_k, generator=gen, dtype=torch.float64)  # (N, d_k)
    k = torch.randn(seq_len, d_k, generator=gen, dtype=torch.float64)  # (T, d_k)
    g = torch.randn(n_rows, seq_len, generator=gen, dtype=torch.float64)  # (N, T) upstream gradient
    scores = q @ k.T  # (N, T)
    if scaled:
        scores = scores / math.sqrt(d_k)
    logits = (scores / temperature).detach().requires_grad_(True)
    weights = torch.softmax(logits, dim=-1)  # (N, T)
    (weights * g).sum().backward()
    m = saturation_metrics(weights.detach().numpy()).summary()
    return {
        "score_std": float(scores.std(unbiased=False)),
        "max_weight": m["max_weight"],
        "normalized_entropy": m["normalized_entropy"],
        "effective_tokens": m["effective_tokens"],
        "near_one_hot_share": m["near_one_hot_share"],
        "grad_norm": float(logits.grad.norm(dim=-1).mean()),
    }


def saturation_point(d_k: int, seq_len: int, scaled: bool, temperature: float = 1.0, n_seeds: int = 4,
                     n_rows: int = 256) -> dict[str, float]:
    """Saturation measures at one setting, averaged over ``n_seeds`` seeds.

    Returns:
        A dict with, for every name in MEASURES, the mean over seeds (``name``) and the smallest and
        largest seed value (``name_lo``, ``name_hi``); plus ``d_k``, ``seq_len``, ``scaled``,
        ``temperature`` and ``score_std_theory`` (sqrt(d_k) unscaled, 1 scaled, before temperature).
    """
    d_k = check_positive_int("d_k", d_k, high=4096)
    seq_len = check_positive_int("seq_len", seq_len, high=4096)
    n_seeds = check_positive_int("n_seeds", n_seeds, high=64)
    n_rows = check_positive_int("n_rows", n_rows, high=100000)
    t = check_temperature(temperature)
    per_seed = [_one_seed(d_k, seq_len, bool(scaled), t, n_rows, s) for s in range(n_seeds)]
    out: dict[str, float] = {"d_k": d_k, "seq_len": seq_len, "scaled": bool(scaled), "temperature": t,
                             "score_std_theory": 1.0 if scaled else math.sqrt(d_k)}
    for name in MEASURES:
        vals = np.array([p[name] for p in per_seed])
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = float(vals.mean()), float(vals.min()), float(vals.max())
    return out


def sweep_d_ks(max_d_k: int = 1024) -> list[int]:
    """The d_k values of a sweep: powers of two from 1 to ``max_d_k``."""
    return [2**i for i in range(int(math.log2(max_d_k)) + 1)]


def whatif_sentence(unscaled: dict[str, float], scaled: dict[str, float]) -> str:
    """One sentence comparing the unscaled and scaled points at the same d_k (numbers from the points)."""
    d_k = unscaled["d_k"]
    share = unscaled["near_one_hot_share"]
    ratio = scaled["grad_norm"] / unscaled["grad_norm"] if unscaled["grad_norm"] > 0 else math.inf
    grad = (f"the gradient reaching the scores is 1/{ratio:.3g} of the scaled case" if ratio >= 1 else
            f"the gradient reaching the scores is {1 / ratio:.3g} times the scaled case")
    return (f"At d_k = {d_k} without scaling, {share:.0%} of rows put over {NEAR_ONE_HOT:.0%} of their weight "
            f"on one token (scaled: {scaled['near_one_hot_share']:.0%}), and {grad}.")
