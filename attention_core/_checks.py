"""Argument checks shared by the attention_core modules.

Every public function rejects bad input with a ``ValueError`` whose message names the argument,
the value it got and what is allowed. These helpers keep those messages uniform.
"""

from __future__ import annotations

import math

import numpy as np


def check_finite_array(name: str, x, min_ndim: int = 1) -> np.ndarray:
    """Return ``x`` as a float ndarray, or raise if it is not finite or has too few dims."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a numeric array; got {type(x).__name__} ({exc})") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a numeric array; got dtype {arr.dtype}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s); got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    return arr


def check_positive_int(name: str, value, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int in [low, high], or raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"between {low} and {high}"
        raise ValueError(f"{name}={value} is not allowed; it must be {allowed}")
    return value


def check_finite_above(name: str, value, low: float) -> float:
    """Return ``value`` as a finite float > ``low``, or raise."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > {low}; got {value!r}") from None
    if not math.isfinite(x) or x <= low:
        raise ValueError(f"{name}={value!r} is not allowed; it must be a finite number > {low}")
    return x


def check_temperature(temperature) -> float:
    """Return the temperature as a float > 0, or raise."""
    return check_finite_above("temperature", temperature, 0)


def check_mask(mask, scores_shape: tuple[int, ...]) -> np.ndarray | None:
    """Return ``mask`` as a bool array broadcast to ``scores_shape`` (True = may attend), or None."""
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != bool:
        raise ValueError(f"mask must be a boolean array (True = may attend); got dtype {m.dtype}")
    try:
        return np.broadcast_to(m, scores_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the scores' shape {scores_shape} (..., T_q, T_k)"
        ) from None


def check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries ``(..., T_q, d_k)``, keys ``(..., T_k, d_k)`` and values ``(..., T_k, d_v)`` as float arrays, or raise."""
    q = check_finite_array("q", q, min_ndim=2)
    k = check_finite_array("k", k, min_ndim=2)
    v = check_finite_array("v", v, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d_k (last dim); got q {q.shape} and k {k.shape}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"k and v must have the same number of tokens T_k; got k {k.shape} and v {v.shape}")
    return q, k, v


def check_attention_inputs(q, k, v, mask=None):
    """``check_qkv``, then the leading (batch / head) dims they broadcast to and the mask as a broadcast view of
    ``(*lead, T_q, T_k)``; returns ``(q, k, v, mask, lead)``."""
    q, k, v = check_qkv(q, k, v)
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading dims of q {q.shape[:-2]}, k {k.shape[:-2]} and v {v.shape[:-2]} do not broadcast"
        ) from None
    return q, k, v, check_mask(mask, (*lead, q.shape[-2], k.shape[-2])), lead
