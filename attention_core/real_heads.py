"""What real heads do on one sentence, measured: previous- and next-token heads, heads that park on the
special tokens, the head where a pronoun looks at its referent, and how sharp each head is against random
(untrained) attention of the same shape.

Every figure is a mean over the sentence's word rows (queries that are not special tokens), so a head is
judged by what the words do. Shapes: L layers, H heads, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .saturation import NEAR_ONE_HOT

ROLE_THRESHOLD = 0.5  # a head "is" a previous-token (next-token, parking) head when its mean weight passes this
PRONOUN, REFERENT = "it", "animal"  # the class's coreference question


@dataclass(frozen=True)
class Sharpness:
    """Saturation of each head, as the toy pages measure it (means over word rows)."""

    max_weight: np.ndarray  # (..., H) mean of each row's largest weight
    normalized_entropy: np.ndarray  # (..., H) mean entropy / log T, 0 = one-hot, 1 = uniform
    effective_tokens: np.ndarray  # (..., H) mean exp(entropy): how many keys a row spreads over
    near_one_hot: np.ndarray  # (..., H) share of rows whose largest weight is above NEAR_ONE_HOT (0.99)


def sharpness(weights: np.ndarray, rows: np.ndarray | None = None) -> Sharpness:
    """Per-head saturation of ``weights`` (..., H, T, T), over the query rows where ``rows`` (T,) is True.

    The same measures as :func:`attention_core.saturation_metrics` (entropy in nats over log T, exp(entropy),
    rows above NEAR_ONE_HOT), without its Jacobian: 72 heads at 512 tokens take 0.2 s instead of seconds."""
    T = weights.shape[-1]
    keep = np.ones(weights.shape[-2], dtype=bool) if rows is None else np.asarray(rows, dtype=bool)  # (T,)
    if not keep.any():
        raise ValueError("rows must select at least one query row")
    p = np.asarray(weights)[..., keep, :]  # (..., H, R, T) the chosen rows
    big = p.max(-1)  # (..., H, R)
    logp = np.log(np.maximum(p, np.finfo(p.dtype).tiny))  # log 0 -> a finite number that 0 * it turns to 0
    entropy = np.maximum(-np.einsum("...t,...t->...", p, logp, dtype=np.float64), 0.0)  # (..., H, R) nats
    norm = entropy / np.log(T) if T > 1 else np.zeros_like(entropy)
    return Sharpness(
        big.mean(-1, dtype=np.float64),
        norm.mean(-1),
        np.exp(entropy).mean(-1),
        (big > NEAR_ONE_HOT).mean(-1),
    )


@dataclass(frozen=True)
class HeadRoles:
    """What every head of a model does on one sentence."""

    previous: np.ndarray  # (L, H) mean weight of word i on word i-1 (NaN with fewer than two words)
    next: np.ndarray  # (L, H) mean weight of word i on word i+1
    special: np.ndarray  # (L, H) mean weight the words put on special tokens ([CLS], [SEP], ...)
    first: np.ndarray  # (L, H) mean weight the words put on the first token ([CLS] for BERT)
    last: np.ndarray  # (L, H) mean weight the words put on the last token ([SEP] for BERT)
    pronoun: int | None  # index of the first "it" among the words, or None
    referent: int | None  # index of the first "animal" among the words, or None
    to_referent: np.ndarray | None  # (L, H) weight of "it" on "animal"; None unless both are in the sentence
    referent_is_top: np.ndarray | None  # (L, H) bool: "animal" is the word "it" looks at most (itself excepted)
    sharp: Sharpness  # (L, H) per-head saturation


def _pair_mean(attn: np.ndarray, words: np.ndarray, offset: int) -> np.ndarray:
    """Mean of attn[..., i, i + offset] over words i whose neighbour i + offset is a word too; (L, H)."""
    T = attn.shape[-1]
    i = np.array([i for i in range(T) if 0 <= i + offset < T and words[i] and words[i + offset]], dtype=int)
    if i.size == 0:
        return np.full(attn.shape[:2], np.nan)
    return attn[..., i, i + offset].mean(-1)


def find_word(tokens, words: np.ndarray, word: str) -> int | None:
    """Index of the first word token equal to ``word`` (case-insensitive), or None."""
    return next((i for i, t in enumerate(tokens) if words[i] and t.strip().lower() == word), None)


def head_roles(attn: np.ndarray, tokens, special: np.ndarray) -> HeadRoles:
    """Measure every head of ``attn`` (L, H, T, T) on the sentence's ``tokens`` (T,).

    ``special`` (T,) marks [CLS], [SEP] and the like; the words are the other tokens. Raises ValueError
    when the shapes disagree or the sentence has no word."""
    attn = np.asarray(attn)
    special = np.asarray(special, dtype=bool)
    if attn.ndim != 4 or attn.shape[-1] != attn.shape[-2] or {attn.shape[-1], special.size} != {len(tokens)}:
        raise ValueError(f"attn must be (L, H, T, T) with T = {len(tokens)} tokens; got {attn.shape}")
    words = ~special  # (T,)
    if not words.any():
        raise ValueError("the sentence has no word (every token is a special token)")
    to_special = attn[..., special][..., words, :]  # (L, H, W, S) the words' weights on the special tokens
    first, last = attn[..., words, 0], attn[..., words, -1]  # (L, H, W)
    it, ref = find_word(tokens, words, PRONOUN), find_word(tokens, words, REFERENT)
    to_ref = is_top = None
    if it is not None and ref is not None:
        to_ref = attn[..., it, ref]  # (L, H)
        others = attn[..., it, :].copy()  # (L, H, T) the row of "it" over words other than itself
        others[..., special] = -1.0
        others[..., it] = -1.0
        is_top = others.argmax(-1) == ref
    return HeadRoles(
        _pair_mean(attn, words, -1),
        _pair_mean(attn, words, +1),
        to_special.sum(-1).mean(-1),
        first.mean(-1),
        last.mean(-1),
        it,
        ref,
        to_ref,
        is_top,
        sharpness(attn, words),
    )


def strongest(scores: np.ndarray) -> tuple[int, int, float]:
    """(layer, head, value) of the largest finite entry of an (L, H) score; value NaN when there is none."""
    if not np.isfinite(scores).any():
        return 0, 0, float("nan")
    layer, head = np.unravel_index(np.nanargmax(scores), scores.shape)
    return int(layer), int(head), float(scores[layer, head])


def random_sharpness(T: int, d_model: int, n_heads: int, seed: int = 0) -> Sharpness:
    """Per-head saturation of the toy pages' attention at a model's shape: the what-if with seeded random input
    and random, untrained W_q and W_k, T tokens, d_model wide, n_heads heads, scaled (what a head is before any
    training). Raises ValueError for a shape the toy pages do not allow."""
    from .config import WhatIf
    from .whatif import run_whatif

    run = run_whatif(WhatIf(seq_len=T, d_model=d_model, n_heads=n_heads, seed=seed))
    return sharpness(run.weights)  # (H,) each


PRONOUNS = ("it", "its", "he", "him", "his", "she", "her", "they", "them", "their", "we", "us", "i", "me", "you")
WINOGRAD = (  # the class's coreference experiment: one word changes which noun "it" means
    "The trophy didn't fit in the suitcase because it was too big.",
    "The trophy didn't fit in the suitcase because it was too small.",
)


def first_pronoun(tokens, special: np.ndarray) -> int | None:
    """Index of the sentence's first pronoun (a word of PRONOUNS, case-insensitive), or None."""
    words = ~np.asarray(special, dtype=bool)
    return next((i for i, t in enumerate(tokens) if words[i] and t.strip().lower() in PRONOUNS), None)


@dataclass(frozen=True)
class WordFocus:
    """Where every head looks from one query word: the word it gives most weight, itself and special tokens
    excepted (they are where a head parks, not a word it reads)."""

    word: int  # the query word's token index
    top: np.ndarray  # (L, H) token index of each head's favourite word; -1 when the sentence has no other word
    weight: np.ndarray  # (L, H) the weight the word gives it (NaN without another word)


def word_focus(attn: np.ndarray, special: np.ndarray, word: int) -> WordFocus:
    """Each head's favourite word from query ``word`` in ``attn`` (L, H, T, T)."""
    special = np.asarray(special, dtype=bool)
    if not 0 <= word < attn.shape[-1] or special[word]:
        raise ValueError(f"word={word} must be the index of a word token (not a special token) below {attn.shape[-1]}")
    row = np.array(attn[..., word, :], dtype=np.float64)  # (L, H, T) the word's weights
    row[..., special] = -1.0
    row[..., word] = -1.0
    top = row.argmax(-1)  # (L, H)
    weight = np.take_along_axis(row, top[..., None], -1)[..., 0]
    none = weight < 0  # no other word: every entry was excluded
    return WordFocus(word, np.where(none, -1, top), np.where(none, np.nan, weight))


def agreement(focus: WordFocus) -> list[tuple[int, list[tuple[int, int]]]]:
    """The heads grouped by the word they look at most: [(token index, [(layer, head), ...]), ...], the largest
    group first (then the earlier word); heads without a favourite are left out."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for (layer, head), top in np.ndenumerate(focus.top):
        if top >= 0:
            groups.setdefault(int(top), []).append((int(layer), int(head)))
    return sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))
