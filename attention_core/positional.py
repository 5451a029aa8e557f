"""Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5)."""

from __future__ import annotations

import numpy as np

from ._checks import check_positive_int


def sinusoidal_positional_encoding(T: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The ``(T, d_model)`` table PE[pos, 2i] = sin(pos / base^(2i/d_model)), PE[pos, 2i+1] = cos(same).

    Even columns hold sines and odd columns cosines of the same frequency. For an odd ``d_model`` the
    last column is a sine whose cosine partner would fall outside the table.

    Args:
        T: number of positions (>= 1).
        d_model: embedding width (>= 1).
        base: wavelength base, 10000 in the paper.

    Returns:
        float32 array ``(T, d_model)`` with values in [-1, 1].
    """
    T = check_positive_int("T", T)
    d_model = check_positive_int("d_model", d_model)
    if not np.isfinite(base) or base <= 1:
        raise ValueError(f"base={base!r} is not allowed; it must be a finite number > 1")
    pos = np.arange(T, dtype=np.float64)[:, None]  # (T, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d_model/2),)
    angle = pos / base ** (two_i / d_model)  # (T, ceil(d_model/2))
    pe = np.zeros((T, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe.astype(np.float32)


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """The wavelength (in positions) of each sine/cosine pair of the table: 2 pi base^(2i/d_model), i = 0 ..
    ceil(d_model/2) - 1; ``(ceil(d_model/2),)``, from 2 pi (the fastest pair) up."""
    d_model = check_positive_int("d_model", d_model)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d_model/2),) as in the table
    return 2 * np.pi * float(base) ** (two_i / d_model)


def position_similarity(T: int, d_model: int) -> tuple[np.ndarray, np.ndarray]:
    """How alike the encodings of two positions are: ``PE PE^T`` and its mean by distance.

    Returns:
        ``(sim, by_distance)``: sim ``(T, T)`` with sim[p, q] = PE[p] . PE[q] (float64), and by_distance
        ``(T,)`` with the mean of sim over the pairs |p - q| = 0, 1, ..., T - 1. For an even d_model
        sim[p, q] = sum_i cos(w_i (p - q)) depends only on the distance, and sim[p, p] = d_model / 2.
    """
    pe = sinusoidal_positional_encoding(T, d_model).astype(np.float64)  # (T, d_model)
    sim = pe @ pe.T  # (T, T)
    by_distance = np.array([np.diagonal(sim, offset=o).mean() for o in range(T)])  # (T,)
    return sim, by_distance
