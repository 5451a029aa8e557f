"""Softmax, stable for any finite logits, with temperature and an optional mask.

Shapes: any ``(..., n)``; the softmax runs along ``axis``.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_finite_array, check_temperature


def softmax(x, axis: int = -1, temperature: float = 1.0, where=None) -> np.ndarray:
    """Numerically stable softmax: ``exp(x / t - max) / sum(exp(x / t - max))``.

    Reference::

        z = x / temperature
        e = exp(z - z.max(axis))
        return e / e.sum(axis)

    Subtracting the row maximum changes nothing mathematically (it cancels in the ratio) but keeps
    every exponent <= 0, so logits of 1e4 and -1e4 alike give no overflow, NaN or inf.

    Args:
        x: logits, any shape ``(..., n)``; finite numbers.
        axis: the axis that sums to 1.
        temperature: > 0; the logits are divided by it. Small values sharpen towards a one-hot
            argmax, large values flatten towards uniform.
        where: optional bool array broadcastable to ``x``; True = this entry takes part. Entries
            that do not take part get weight 0. A slice where nothing takes part is all zeros
            (not NaN).

    Returns:
        Array of ``x``'s shape (float), non-negative, summing to 1 along ``axis`` (or 0 for a fully
        excluded slice).
    """
    x = check_finite_array("x", x)
    t = check_temperature(temperature)
    if where is not None:
        where = np.asarray(where)
        if where.dtype != bool:
            raise ValueError(f"where must be a boolean array (True = takes part); got dtype {where.dtype}")
    return _softmax(x / t, axis, where)


def _softmax(z: np.ndarray, axis: int = -1, where=None, inplace: bool = False) -> np.ndarray:
    """Softmax of already-checked logits ``z`` (temperature applied); see :func:`softmax`.

    With ``inplace=True`` the result is written into ``z`` (a fresh float array the caller owns):
    one buffer instead of four, which is what keeps (H, T, T) weights fast at T = 512.
    """
    if where is None:
        e = z if inplace else z.copy()
        e -= e.max(axis=axis, keepdims=True)  # every exponent <= 0: no overflow
        np.exp(e, out=e)
        e /= e.sum(axis=axis, keepdims=True)
        return e
    where = np.broadcast_to(where, z.shape)
    z_max = np.max(z, axis=axis, keepdims=True, initial=-np.inf, where=where)
    z_max = np.where(np.isfinite(z_max), z_max, 0.0)  # a fully excluded slice has max -inf
    e = np.where(where, np.exp(np.where(where, z - z_max, 0.0)), 0.0)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
