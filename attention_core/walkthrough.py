"""The class-notes walkthrough: one-hot tokens through Q, K, V, scores, scaling, softmax and Z, every step kept.

Shapes: T tokens, V = vocabulary size (embedding width, 2 for A and B), d_k = columns of W_q and W_k,
d_v = columns of W_v.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_temperature
from .inputs import one_hot_embeddings, position_labels
from .matrices import check_matrix
from .softmax import softmax

VOCAB = ("A", "B")  # the class-notes alphabet: A = [1, 0], B = [0, 1]


@dataclass(frozen=True)
class Walkthrough:
    """Every intermediate of single-head attention on one-hot tokens."""

    symbols: tuple[str, ...]  # (T,) the tokens, e.g. A A B A
    labels: tuple[str, ...]  # (T,) token and position, e.g. A1 A2 B3 A4
    E: np.ndarray  # (T, V) one-hot embeddings
    W_q: np.ndarray  # (V, d_k)
    W_k: np.ndarray  # (V, d_k)
    W_v: np.ndarray  # (V, d_v)
    Q: np.ndarray  # (T, d_k) = E W_q, what each token looks for
    K: np.ndarray  # (T, d_k) = E W_k, how each token advertises itself
    V: np.ndarray  # (T, d_v) = E W_v, what each token hands over
    S: np.ndarray  # (T, T) = Q K^T, raw scores
    S_scaled: np.ndarray  # (T, T) = S / sqrt(d_k) if scaled, else S
    A: np.ndarray  # (T, T) = softmax(S_scaled / temperature) row by row
    Z: np.ndarray  # (T, d_v) = A V
    scaled: bool  # whether S was divided by sqrt(d_k)
    temperature: float  # tau

    @property
    def d_k(self) -> int:
        return self.Q.shape[1]

    def rows_of(self, symbol: str) -> np.ndarray:
        """(n,) positions of the tokens equal to ``symbol``."""
        return np.flatnonzero(np.array(self.symbols) == symbol)

    def shift(self, symbol: str, column: int) -> float | None:
        """Mean of Z[i, column] - E[i, column] over the rows i of ``symbol`` (None when there is none)."""
        rows = self.rows_of(symbol)
        if not 0 <= column < min(self.E.shape[1], self.Z.shape[1]):
            raise ValueError(
                f"column={column} is not allowed; E and Z share columns 0 to "
                f"{min(self.E.shape[1], self.Z.shape[1]) - 1}"
            )
        return float(np.mean(self.Z[rows, column] - self.E[rows, column])) if rows.size else None


def walkthrough(
    symbols, w_q, w_k, w_v, scaled: bool = True, temperature: float = 1.0, vocabulary: tuple[str, ...] = VOCAB
) -> Walkthrough:
    """Single-head self-attention on one-hot tokens, step by step.

    Reference::

        E = one_hot(symbols)                  # (T, V)
        Q, K, V = E @ W_q, E @ W_k, E @ W_v   # (T, d_k), (T, d_k), (T, d_v)
        S = Q @ K.T                           # (T, T)
        A = softmax(S / sqrt(d_k) / tau)      # (T, T), rows sum to 1 (no sqrt(d_k) if not scaled)
        Z = A @ V                             # (T, d_v)

    Args:
        symbols: T tokens, each in ``vocabulary``.
        w_q, w_k: ``(V, d_k)``; w_v: ``(V, d_v)`` with V = len(vocabulary); finite numbers.
        scaled: divide the scores by sqrt(d_k); temperature: > 0, divides the logits.

    Returns:
        :class:`Walkthrough` with every step.
    """
    symbols = tuple(str(s) for s in symbols)
    if not symbols or any(s not in vocabulary for s in symbols):
        raise ValueError(
            f"symbols={list(symbols)!r} is not allowed; give at least one token, each one of {list(vocabulary)}"
        )
    n = len(vocabulary)
    w_q, w_k, w_v = (check_matrix(name, w) for name, w in (("W_q", w_q), ("W_k", w_k), ("W_v", w_v)))
    for name, w in (("W_q", w_q), ("W_k", w_k), ("W_v", w_v)):
        if w.shape[0] != n:
            raise ValueError(f"{name} must have {n} rows (one per symbol of {list(vocabulary)}); got {w.shape[0]}")
    if w_k.shape[1] != w_q.shape[1]:
        raise ValueError(
            f"W_q and W_k must have the same number of columns (d_k); got {w_q.shape[1]} and {w_k.shape[1]}"
        )
    t = check_temperature(temperature)
    E, _ = one_hot_embeddings(list(symbols), vocabulary=list(vocabulary))
    E = E.astype(np.float64)  # (T, V)
    Q, K, V = E @ w_q, E @ w_k, E @ w_v  # (T, d_k), (T, d_k), (T, d_v)
    S = Q @ K.T  # (T, T)
    S_scaled = S / math.sqrt(Q.shape[1]) if scaled else S  # (T, T)
    A = softmax(S_scaled, temperature=t)  # (T, T)
    Z = A @ V  # (T, d_v)
    return Walkthrough(
        symbols, tuple(position_labels(list(symbols))), E, w_q, w_k, w_v, Q, K, V, S, S_scaled, A, Z, bool(scaled), t
    )
