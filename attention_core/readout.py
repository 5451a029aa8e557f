"""Measured read-outs the pages turn into sentences: how sharp attention is, how far two arrays are apart,
how spread the logits are, and which settings two what-ifs differ in.

Shapes: H heads, T_q / T_k query / key tokens, d_k per-head width.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_temperature
from .attention import score_factor
from .config import WhatIf

SHARPNESS_LEVELS = ("single key", "nearly uniform", "soft", "peaked", "sharp")
# Where a mean max weight m falls between uniform u and one-hot 1, as r = (m - u) / (1 - u):
NEARLY_UNIFORM_BELOW = 0.1  # r < 0.1: the largest weight is barely above uniform
PEAKED_FROM = 0.4  # r >= 0.4: one key takes clearly more than its share
SHARP_FROM = 0.8  # r >= 0.8: rows are close to one-hot


def relative_difference(new, ref) -> float:
    """||new - ref||_F / ||ref||_F: how far ``new`` is from ``ref``, as a share of ``ref``'s size.

    Args:
        new, ref: arrays of the same shape.

    Returns:
        A float >= 0; 0 when both are zero, ``inf`` when only ``ref`` is zero.
    """
    new = check_finite_array("new", new)
    ref = check_finite_array("ref", ref)
    if new.shape != ref.shape:
        raise ValueError(f"new and ref must have the same shape; got {new.shape} and {ref.shape}")
    diff = float(np.linalg.norm((new - ref).ravel()))
    size = float(np.linalg.norm(ref.ravel()))
    if size == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / size


def uniform_max_weight(mask, T_q: int, T_k: int) -> float:
    """The mean max weight uniform attention would have: the mean over rows of 1 / (allowed keys).

    Args:
        mask: None or bool ``(T_q, T_k)``, True = may attend; rows with no allowed key are left out.

    Returns:
        1 / T_k without a mask; 0.0 when every row is fully masked.
    """
    if mask is None:
        return 1.0 / T_k
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (T_q, T_k):
        raise ValueError(f"mask must be bool of shape {(T_q, T_k)} (True = may attend); got {m.dtype} {m.shape}")
    allowed = m.sum(axis=-1)  # (T_q,)
    allowed = allowed[allowed > 0]
    return float((1.0 / allowed).mean()) if allowed.size else 0.0


def sharpness(max_weight: float, uniform: float) -> str:
    """Name how sharp attention is from its measured mean max weight, against the uniform one.

    With r = (max_weight - uniform) / (1 - uniform): "nearly uniform" below ``NEARLY_UNIFORM_BELOW``,
    "soft" below ``PEAKED_FROM``, "peaked" below ``SHARP_FROM``, else "sharp"; "single key" when each
    row has one allowed key (uniform = 1), so every weight is 1 whatever the scores are.

    Args:
        max_weight: mean over rows of each row's largest weight, in [0, 1].
        uniform: the same mean for uniform rows (:func:`uniform_max_weight`), in [0, 1].
    """
    if not (0.0 <= max_weight <= 1.0 + 1e-6) or not (0.0 <= uniform <= 1.0 + 1e-6):
        raise ValueError(f"max_weight={max_weight!r} and uniform={uniform!r} must lie in [0, 1]")
    if uniform >= 1.0 - 1e-9:
        return "single key"
    r = (max_weight - uniform) / (1.0 - uniform)
    if r >= SHARP_FROM:
        return "sharp"
    if r >= PEAKED_FROM:
        return "peaked"
    return "nearly uniform" if r < NEARLY_UNIFORM_BELOW else "soft"


def sharpness_bands(uniform: float) -> tuple[tuple[str, float, float, float, float], ...]:
    """The sharpness words as bands of r and of the mean max weight m = uniform + r (1 - uniform), from the
    thresholds above: ``(word, r from, r below, m from, m below)`` for "nearly uniform", "soft", "peaked" and
    "sharp" (the last band ends at r = m = 1 inclusive). :func:`sharpness` names a value by these bands.

    Args:
        uniform: the mean max weight of uniform rows, in [0, 1) (1 / T for T keys without a mask).
    """
    if not 0.0 <= uniform < 1.0:
        raise ValueError(f"uniform={uniform!r} must lie in [0, 1): with one key per row there is no scale")
    edges = (0.0, NEARLY_UNIFORM_BELOW, PEAKED_FROM, SHARP_FROM, 1.0)  # r
    words = SHARPNESS_LEVELS[1:]
    m = [uniform + r * (1.0 - uniform) for r in edges]
    return tuple((w, edges[i], edges[i + 1], m[i], m[i + 1]) for i, w in enumerate(words))


def logit_std(q, k, scaled: bool = True, temperature: float = 1.0, mask=None) -> np.ndarray:
    """Standard deviation of the logits the softmax sees, per head: q . k (/ sqrt(d_k)) / temperature.

    Args:
        q: ``(H, T_q, d_k)``; k: ``(H, T_k, d_k)``.
        mask: None or bool broadcastable to ``(T_q, T_k)``; only allowed cells count.

    Returns:
        ``(H,)`` float64; 0 for a head with fewer than two allowed cells.
    """
    t = check_temperature(temperature)
    q = check_finite_array("q", q, min_ndim=3)
    k = check_finite_array("k", k, min_ndim=3)
    if q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q (H, T_q, d_k) and k (H, T_k, d_k) must share H and d_k; got {q.shape} and {k.shape}")
    logits = (q @ np.swapaxes(k, -1, -2)).astype(np.float64)  # (H, T_q, T_k)
    logits *= score_factor(q.shape[-1], scaled, t)
    keep = (
        np.ones(logits.shape[1:], dtype=bool)
        if mask is None
        else np.broadcast_to(np.asarray(mask, bool), logits.shape[1:])
    )
    if keep.sum() < 2:
        return np.zeros(q.shape[0])
    return logits[:, keep].std(axis=-1)  # (H,)


def differing_settings(a: WhatIf, b: WhatIf) -> tuple[tuple[str, object, object], ...]:
    """The settings in which two what-ifs really differ, as ``(field, value in a, value in b)``.

    A field counts only where both sides use it (where one side alone does, the input kind or the mask already
    differs, and the other side's value means nothing): the sentence when both read a sentence, the pattern when
    both use one-hot symbols, seq_len unless a side reads a sentence (its words set its length), pad_count when both
    pad.
    """
    if not isinstance(a, WhatIf) or not isinstance(b, WhatIf):
        raise ValueError(f"a and b must be WhatIf; got {type(a).__name__} and {type(b).__name__}")
    kinds = {a.input_kind, b.input_kind}
    unused = set()
    if kinds != {"sentence"}:
        unused.add("sentence")
    if kinds != {"one_hot"}:
        unused.add("pattern")
    if "sentence" in kinds:
        unused.add("seq_len")
    if not (a.padded and b.padded):
        unused.add("pad_count")
    out = []
    for f in dataclasses.fields(WhatIf):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if f.name not in unused and va != vb:
            out.append((f.name, va, vb))
    return tuple(out)


@dataclass(frozen=True)
class Comparison:
    """What differs between two runs (Compare page): settings, one head's weights, the outputs."""

    differing: tuple[tuple[str, object, object], ...]  # (field, A's value, B's value) for each setting that differs
    weight_diff: np.ndarray | None  # (T, T) B's head minus A's head, None when the token counts differ
    output_diff: np.ndarray | None  # (T, d_model) B's output minus A's, None when the shapes differ
    output_change: float | None  # ||Z_B - Z_A||_F / ||Z_A||_F, None when the shapes differ


def compare_runs(run_a, run_b, head_a: int, head_b: int) -> Comparison:
    """Differences between two :class:`~attention_core.whatif.WhatIfRun` (A and B) for one head of each.

    Args:
        run_a, run_b: the two runs; head_a, head_b: 0-based heads of A and of B to compare.
    """
    for name, run, h in (("head_a", run_a, head_a), ("head_b", run_b, head_b)):
        if not 0 <= h < run.weights.shape[0]:
            raise ValueError(f"{name}={h} is outside 0..{run.weights.shape[0] - 1}")
    same_t = run_a.weights.shape[1:] == run_b.weights.shape[1:]
    weight_diff = run_b.weights[head_b] - run_a.weights[head_a] if same_t else None  # (T, T)
    same_z = run_a.output.shape == run_b.output.shape
    output_diff = run_b.output - run_a.output if same_z else None  # (T, d_model)
    change = relative_difference(run_b.output, run_a.output) if same_z else None
    return Comparison(differing_settings(run_a.config, run_b.config), weight_diff, output_diff, change)
