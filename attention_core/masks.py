"""Boolean attention masks. Convention everywhere: **True = may attend**, False = blocked.

Shapes: T = tokens, T_q / T_k = query / key tokens, B = batch.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_positive_int


def causal_mask(T: int) -> np.ndarray:
    """Lower-triangular ``(T, T)`` mask: query i may attend to keys 0..i (no peeking ahead)."""
    T = check_positive_int("T", T)
    return np.tril(np.ones((T, T), dtype=bool))


def padding_mask(lengths, T_k: int, T_q: int | None = None) -> np.ndarray:
    """Mask that blocks padded keys.

    Args:
        lengths: the number of real (non-pad) tokens, an int or a sequence of B ints; the first
            ``length`` keys are real and the rest are padding.
        T_k: number of key positions (real + padding).
        T_q: number of query rows; defaults to ``T_k``.

    Returns:
        ``(T_q, T_k)`` for an int, ``(B, T_q, T_k)`` for a sequence; True where the key is real.
    """
    T_k = check_positive_int("T_k", T_k)
    T_q = T_k if T_q is None else check_positive_int("T_q", T_q)
    lens = np.atleast_1d(np.asarray(lengths))
    if not np.issubdtype(lens.dtype, np.integer):
        raise ValueError(f"lengths must be integers; got {lengths!r}")
    if lens.size == 0 or np.any(lens < 0) or np.any(lens > T_k):
        raise ValueError(f"lengths={lengths!r} not allowed; each must be between 0 and T_k={T_k}")
    keys_real = np.arange(T_k)[None, :] < lens[:, None]  # (B, T_k)
    mask = np.broadcast_to(keys_real[:, None, :], (lens.size, T_q, T_k)).copy()  # (B, T_q, T_k)
    return mask[0] if np.ndim(lengths) == 0 else mask


def combine_masks(*masks) -> np.ndarray | None:
    """Logical AND of masks (None entries are skipped): a key is allowed only if every mask allows it.

    Returns None when every argument is None (no masking).
    """
    present = [np.asarray(m) for m in masks if m is not None]
    for m in present:
        if m.dtype != bool:
            raise ValueError(f"masks must be boolean arrays (True = may attend); got dtype {m.dtype}")
    if not present:
        return None
    out = present[0]
    for m in present[1:]:
        try:
            out = np.logical_and(out, m)
        except ValueError:
            raise ValueError(f"masks of shapes {out.shape} and {m.shape} do not broadcast together") from None
    return out
