"""Sliding-window attention: each query sees only its last w keys, and layers stack the windows.

Longformer (Beltagy et al., 2020) and Mistral 7B (Jiang et al., 2023; window 4096) use a causal mask
limited to the last w keys. One layer sees w tokens; stacked layers pass information further, one
window at a time, so after L layers a token can be influenced by L(w - 1) + 1 tokens (itself and
L(w - 1) before it), capped by the tokens that exist. Here that number is measured, not assumed: one
token's influence is propagated through L copies of the mask with boolean matrix products.

Shape legend: T tokens, w window (keys per query, itself included), L layers.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_positive_int


def sliding_window_mask(T: int, window: int) -> np.ndarray:
    """``(T, T)`` causal mask limited to the last ``window`` keys: query i may attend to keys i-w+1 .. i.

    ``window >= T`` is the plain causal mask; ``window = 1`` lets each token see only itself.
    """
    T = check_positive_int("T", T)
    window = check_positive_int("window", window)
    offset = np.arange(T)[:, None] - np.arange(T)[None, :]  # (T, T) i - j
    return (offset >= 0) & (offset < window)


def window_score_count(T: int, window: int) -> int:
    """Scores one window layer computes: ``T w - w (w - 1) / 2`` for ``w <= T`` (``T (T + 1) / 2``, the causal
    mask's, for ``w >= T``). Query i sees ``min(i + 1, w)`` keys, so the first ``w - 1`` rows see fewer than w: the
    count is below ``T w``. The page counts the mask's allowed cells; the tests check this formula against them."""
    T = check_positive_int("T", T)
    w = min(check_positive_int("window", window), T)
    return T * w - w * (w - 1) // 2


def receptive_field_formula(window: int, layers: int, T: int | None = None) -> int:
    """``L (w - 1) + 1``: tokens that can reach one query after L stacked window layers (capped at T if given)."""
    n = check_positive_int("layers", layers) * (check_positive_int("window", window) - 1) + 1
    return n if T is None else min(n, check_positive_int("T", T))


def reach_matrix(T: int, window: int, layers: int) -> np.ndarray:
    """``(T, T)`` bool: True where key j can influence query i through ``layers`` stacked window layers.

    The mask to the power L, with boolean products (a path i <- k <- ... <- j of allowed edges).
    """
    mask = sliding_window_mask(T, window).astype(np.float32)  # (T, T)
    reach = np.eye(T, dtype=np.float32)
    for _ in range(check_positive_int("layers", layers)):
        reach = ((reach @ mask) > 0).astype(np.float32)  # (T, T) paths one layer longer
    return reach > 0


def influence_by_layer(T: int, window: int, layers: int, query: int | None = None) -> np.ndarray:
    """``(layers + 1, T)`` bool: which tokens can influence ``query`` (default: the last) after 0..L layers.

    Row 0 is the one-hot start (the query itself); row l is row l-1 pushed through the mask once:
    a vector-matrix boolean product, O(L T^2).
    """
    T = check_positive_int("T", T)
    layers = check_positive_int("layers", layers)
    query = T - 1 if query is None else check_positive_int("query", query, low=0, high=T - 1)
    mask = sliding_window_mask(T, window).astype(np.float32)  # (T, T)
    rows = np.zeros((layers + 1, T), dtype=bool)
    rows[0, query] = True  # one-hot influence
    for layer in range(1, layers + 1):
        rows[layer] = (rows[layer - 1].astype(np.float32) @ mask) > 0  # (T,) keys reached by the reached queries
    return rows


def measured_receptive_field(T: int, window: int, layers: int) -> np.ndarray:
    """``(layers + 1,)`` the number of tokens that can influence the last token after 0..L layers (measured)."""
    return influence_by_layer(T, window, layers).sum(axis=1)
