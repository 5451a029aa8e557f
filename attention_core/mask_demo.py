"""Masks explained: one head under the causal, padding and combined masks, and a fully masked row.

Shapes: T tokens, d_k query/key width, d_v value width. Masks are bool, True = may attend.
:func:`textbook_softmax` is the naive masked softmax of many tutorials, kept as a teaching device:
it returns NaN for a row where every key is blocked, which is what attention_core avoids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int, check_temperature
from .attention import attention_scores, scaled_dot_product_attention
from .masks import causal_mask, combine_masks, padding_mask


def clamp_pad(pad_count: int, T: int) -> int:
    """The number of padded keys actually used: ``pad_count`` clamped to 0 .. T."""
    T = check_positive_int("T", T)
    if isinstance(pad_count, bool) or not isinstance(pad_count, (int, np.integer)) or pad_count < 0:
        raise ValueError(f"pad_count={pad_count!r} is not allowed; it must be an integer >= 0")
    return int(min(pad_count, T))


def textbook_softmax(logits, mask) -> np.ndarray:
    """The naive masked softmax: fill blocked logits with -inf, subtract the row max, exponentiate, divide.

    Reference::

        z = where(mask, logits, -inf)
        e = exp(z - z.max(-1))      # a fully blocked row: -inf - (-inf) = NaN
        return e / e.sum(-1)

    It is right for every row with at least one allowed key and returns NaN for a row with none
    (the teaching point); :func:`attention_core.softmax` with ``where=`` returns zeros there.

    Args:
        logits: ``(..., T_k)`` finite numbers.
        mask: bool, broadcastable to ``logits``, True = may attend.

    Returns:
        ``(..., T_k)`` weights; NaN in every fully masked row.
    """
    logits = check_finite_array("logits", logits)
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(f"mask must be a boolean array (True = may attend); got dtype {mask.dtype}")
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(mask, logits, -np.inf)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def masked_numerators(logits, mask) -> np.ndarray:
    """The softmax's numerators ``e^(z - max over allowed z)``, exactly 0 on blocked keys.

    Dividing a row by its sum gives the weights; a row with no allowed key is all 0 (its sum is 0).

    Args:
        logits: ``(..., T_k)``; mask: bool broadcastable to it, True = may attend.
    """
    logits = check_finite_array("logits", logits)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), logits.shape)
    z_max = np.max(logits, axis=-1, keepdims=True, initial=-np.inf, where=mask)
    z_max = np.where(np.isfinite(z_max), z_max, 0.0)  # a fully blocked row has no max
    return np.where(mask, np.exp(np.where(mask, logits - z_max, 0.0)), 0.0)


@dataclass(frozen=True)
class MaskedRun:
    """One head's attention under one mask."""

    name: str  # "causal", "padding" or "causal + padding"
    mask: np.ndarray  # (T, T) bool, True = may attend
    weights: np.ndarray  # (T, T) exactly 0 on blocked cells
    output: np.ndarray  # (T, d_v)

    @property
    def n_blocked(self) -> int:
        """How many of the T * T cells the mask blocks."""
        return int((~self.mask).sum())

    @property
    def empty_rows(self) -> np.ndarray:
        """(E,) indices of the queries that may attend to nothing."""
        return np.flatnonzero(~self.mask.any(axis=-1))

    @property
    def max_blocked_weight(self) -> float:
        """The largest weight on a blocked cell (0 when nothing is blocked)."""
        blocked = self.weights[~self.mask]
        return float(blocked.max()) if blocked.size else 0.0

    @property
    def row_sum_error(self) -> float:
        """The largest |row sum - 1| over the queries that may attend to something (0 when none may)."""
        live = self.mask.any(axis=-1)  # (T,)
        sums = self.weights[live].sum(axis=-1)  # (L,)
        return float(np.abs(sums - 1).max()) if sums.size else 0.0

    @property
    def largest_output(self) -> float:
        """max |output|: 0 for a row with no allowed key, never NaN."""
        return float(np.abs(self.output).max()) if self.output.size else 0.0


@dataclass(frozen=True)
class MaskLab:
    """Everything the Masks page shows for one head."""

    pad: int  # padded keys used (pad_count clamped to T)
    logits: np.ndarray  # (T, T) scores (/ sqrt(d_k) if scaled) / temperature, before any mask
    runs: tuple[MaskedRun, ...]  # causal, padding, causal + padding
    full_mask: np.ndarray  # (T, T) causal with row 0 fully blocked
    textbook: np.ndarray  # (T, T) textbook_softmax under full_mask: NaN in row 0
    full_weights: np.ndarray  # (T, T) attention_core's weights under full_mask: row 0 all 0
    full_output: np.ndarray  # (T, d_v) row 0 all 0

    @property
    def T(self) -> int:
        return self.logits.shape[-1]

    def run(self, name: str) -> MaskedRun:
        """The run of mask ``name``."""
        for r in self.runs:
            if r.name == name:
                return r
        raise ValueError(f"name={name!r} is not allowed; choose one of {[r.name for r in self.runs]}")


def mask_lab(q, k, v, pad_count: int, scaled: bool = True, temperature: float = 1.0) -> MaskLab:
    """Attend one head under the causal, padding and combined masks, and with a fully masked first row.

    Args:
        q, k: ``(T, d_k)``; v: ``(T, d_v)``; pad_count: trailing padded keys (clamped to T);
        scaled, temperature: as in :func:`scaled_dot_product_attention`.
    """
    q, k, v = (check_finite_array(n, a, min_ndim=2) for n, a in (("q", q), ("k", k), ("v", v)))
    if q.ndim != 2 or q.shape != k.shape or v.ndim != 2 or v.shape[0] != k.shape[0]:
        raise ValueError(f"q, k must be (T, d_k) and v (T, d_v); got {q.shape}, {k.shape}, {v.shape}")
    T, t = q.shape[0], check_temperature(temperature)
    pad = clamp_pad(pad_count, T)
    logits = attention_scores(q, k, scaled=scaled) / t  # (T, T)
    masks = {"causal": causal_mask(T), "padding": padding_mask(T - pad, T)}
    masks["causal + padding"] = combine_masks(masks["causal"], masks["padding"])
    runs = []
    for name, mask in masks.items():
        out, w = scaled_dot_product_attention(q, k, v, mask=mask, scaled=scaled, temperature=temperature)
        runs.append(MaskedRun(name, mask, w, out))  # (T, T), (T, T), (T, d_v)
    full = causal_mask(T)
    full[0, :] = False  # query 1 may attend to nothing
    z, wf = scaled_dot_product_attention(q, k, v, mask=full, scaled=scaled, temperature=temperature)
    return MaskLab(pad, logits, tuple(runs), full, textbook_softmax(logits, full), wf, z)
