"""Inputs for the pages: token embeddings and projection weights.

Shapes: T tokens, d_model embedding width. Every generator here is deterministic for a seed.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from ._checks import check_positive_int

MAX_TOKENS = 512  # the longest sequence the app handles


def tokenize(sentence: str, max_tokens: int = MAX_TOKENS) -> tuple[list[str], bool]:
    """Split on whitespace; return ``(tokens, truncated)`` with at most ``max_tokens`` tokens."""
    if not isinstance(sentence, str):
        raise ValueError(f"sentence must be a string; got {type(sentence).__name__}")
    max_tokens = check_positive_int("max_tokens", max_tokens)
    tokens = sentence.split()
    return tokens[:max_tokens], len(tokens) > max_tokens


def position_labels(tokens: list[str]) -> list[str]:
    """Unique axis labels: the token followed by its 1-based position, e.g. A1 A2 B3 A4."""
    return [f"{tok}{i}" for i, tok in enumerate(tokens, start=1)]


def one_hot_embeddings(tokens, vocabulary=None, d_model: int | None = None) -> tuple[np.ndarray, list[str]]:
    """One-hot rows for tokens: ``"A A B A"`` -> ``[[1,0],[1,0],[0,1],[1,0]]`` with vocabulary A, B.

    Args:
        tokens: a whitespace-separated string or a list of tokens.
        vocabulary: the ordered symbols (default: sorted unique tokens). Symbol j is the unit vector e_j.
        d_model: width of the rows (default: vocabulary size); symbol j sets column j mod d_model.

    Returns:
        ``(E, vocabulary)`` with E float32 ``(T, d_model)``.
    """
    toks = tokens.split() if isinstance(tokens, str) else list(tokens)
    if not toks:
        raise ValueError("tokens must contain at least one token; got an empty sequence")
    vocab = sorted(set(toks)) if vocabulary is None else list(vocabulary)
    missing = [t for t in toks if t not in vocab]
    if missing:
        raise ValueError(f"tokens {missing[:5]} are not in the vocabulary {vocab}")
    width = len(vocab) if d_model is None else check_positive_int("d_model", d_model)
    E = np.zeros((len(toks), width), dtype=np.float32)  # (T, d_model)
    for i, tok in enumerate(toks):
        E[i, vocab.index(tok) % width] = 1.0
    return E, vocab


def random_embeddings(T: int, d_model: int, seed: int = 0) -> np.ndarray:
    """Seeded standard-normal embeddings, float32 ``(T, d_model)``: every entry has variance 1."""
    T = check_positive_int("T", T)
    d_model = check_positive_int("d_model", d_model)
    return np.random.default_rng(seed).standard_normal((T, d_model), dtype=np.float32)


def token_vector(token: str, d_model: int, seed: int = 0) -> np.ndarray:
    """A standard-normal vector fixed by (token, seed): the same word always gets the same row."""
    digest = hashlib.blake2b(f"{seed}\x00{token}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(d_model, dtype=np.float32)


def sentence_embeddings(
    sentence: str, d_model: int, seed: int = 0, max_tokens: int = MAX_TOKENS
) -> tuple[list[str], np.ndarray, bool]:
    """Embeddings of a typed sentence: whitespace tokens, one deterministic vector per distinct token.

    Returns:
        ``(tokens, E, truncated)`` with E float32 ``(T, d_model)``; ``truncated`` is True when the
        sentence had more than ``max_tokens`` tokens and was cut.
    """
    d_model = check_positive_int("d_model", d_model)
    tokens, truncated = tokenize(sentence, max_tokens)
    if not tokens:
        raise ValueError("sentence must contain at least one non-space token")
    E = np.stack([token_vector(tok, d_model, seed) for tok in tokens])  # (T, d_model)
    return tokens, E, truncated


def class_notes_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The class-notes matrices for tokens A=[1,0], B=[0,1]:

    ``W_q = [[0,1],[0,1]]`` (every token's query is [0,1]: "looking for B"),
    ``W_k = 10 I`` (the key "booster"), ``W_v = I`` (values are the embeddings).
    """
    w_q = np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    w_k = 10.0 * np.eye(2, dtype=np.float32)
    w_v = np.eye(2, dtype=np.float32)
    return w_q, w_k, w_v


def random_projection_weights(d_model: int, seed: int = 0, n: int = 4) -> list[np.ndarray]:
    """``n`` seeded ``(d_model, d_model)`` matrices with N(0, 1/d_model) entries (W_q, W_k, W_v, W_o).

    With unit-variance inputs x, each entry of x @ W again has variance 1, so the scores q . k have
    variance d_k: the setting in which the 1/sqrt(d_k) argument is made.
    """
    d_model = check_positive_int("d_model", d_model)
    rng = np.random.default_rng([int(seed), 7919])
    scale = 1.0 / math.sqrt(d_model)
    return [rng.standard_normal((d_model, d_model), dtype=np.float32) * np.float32(scale) for _ in range(n)]
