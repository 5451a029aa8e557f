"""Run one what-if: build the input from a :class:`WhatIf`, attend, and keep every step.

This is the single core call the pages make (through a cache). Shapes: T tokens, d_model width,
H heads, d_k = d_model / H.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int
from .attention import (
    attention_weights,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from .config import WhatIf
from .inputs import one_hot_embeddings, random_embeddings, random_projection_weights, sentence_embeddings
from .mask_demo import clamp_pad
from .masks import causal_mask, combine_masks, padding_mask
from .positional import sinusoidal_positional_encoding


@dataclass(frozen=True)
class WhatIfRun:
    """Everything one what-if computed."""

    config: WhatIf
    tokens: list[str]  # (T,) display labels, exactly as typed for a sentence
    x: np.ndarray  # (T, d_model) input (embeddings, plus positional encoding if enabled)
    w: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # W_q, W_k, W_v, W_o, (d_model, d_model) each
    q: np.ndarray  # (H, T, d_k)
    k: np.ndarray  # (H, T, d_k)
    v: np.ndarray  # (H, T, d_k)
    heads: np.ndarray  # (H, T, d_k) per-head outputs
    concat: np.ndarray  # (T, d_model) heads side by side
    output: np.ndarray  # (T, d_model) concat @ W_o
    weights: np.ndarray  # (H, T, T) attention weights
    mask: np.ndarray | None  # (T, T) True = may attend, or None
    notices: tuple[str, ...]  # what the run had to change (truncation, clamped pad count)

    @property
    def T(self) -> int:
        return self.x.shape[0]


def build_input(cfg: WhatIf) -> tuple[list[str], np.ndarray, list[str]]:
    """Tokens, embeddings ``(T, d_model)`` and notices for the config's input kind."""
    notices: list[str] = []
    if cfg.input_kind == "sentence":
        tokens, x, truncated = sentence_embeddings(cfg.sentence, cfg.d_model, cfg.seed)
        if truncated:
            notices.append(f"The sentence has more than {len(tokens)} tokens; only the first {len(tokens)} are used.")
    elif cfg.input_kind == "one_hot":
        symbols = cfg.pattern.split()
        tiled = [symbols[i % len(symbols)] for i in range(cfg.seq_len)]
        x, vocab = one_hot_embeddings(tiled, vocabulary=sorted(set(symbols)), d_model=cfg.d_model)
        if len(vocab) > cfg.d_model:
            notices.append(f"The pattern has {len(vocab)} symbols but d_model={cfg.d_model}; symbols share columns.")
        tokens = [f"{tok}{i}" for i, tok in enumerate(tiled, start=1)]
    else:
        tokens = [f"t{i}" for i in range(1, cfg.seq_len + 1)]
        x = random_embeddings(cfg.seq_len, cfg.d_model, cfg.seed)
    if cfg.positional:
        x = x + sinusoidal_positional_encoding(x.shape[0], cfg.d_model)
    return tokens, x.astype(np.float32), notices


def build_mask(cfg: WhatIf, T: int) -> tuple[np.ndarray | None, list[str]]:
    """The config's mask for T tokens (True = may attend) and notices."""
    notices: list[str] = []
    pad = clamp_pad(cfg.pad_count, T) if cfg.padded else 0
    if cfg.padded and pad < cfg.pad_count:
        notices.append(f"pad count {cfg.pad_count} is more than the {T} tokens; using {T}.")
    causal = causal_mask(T) if cfg.causal else None
    padding = padding_mask(T - pad, T) if cfg.padded else None
    return combine_masks(causal, padding), notices


SOFTMAX_SETTINGS = ("scaled", "temperature", "mask", "pad_count")  # what a run's projections do not depend on


@dataclass(frozen=True)
class Projected:
    """A what-if's input and its projections into queries, keys and values: what every run of the same input,
    size, heads and seed shares, whatever its scaling, temperature and mask (:data:`SOFTMAX_SETTINGS`)."""

    config: WhatIf
    tokens: list[str]
    x: np.ndarray  # (T, d_model)
    w: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # W_q, W_k, W_v, W_o
    q: np.ndarray  # (H, T, d_k)
    k: np.ndarray  # (H, T, d_k)
    v: np.ndarray  # (H, T, d_k)
    notices: tuple[str, ...]  # what building the input had to change

    def serves(self, cfg: WhatIf) -> bool:
        """Whether ``cfg`` differs from this projection's what-if in :data:`SOFTMAX_SETTINGS` alone."""
        return self.config.replace(**{n: getattr(cfg, n) for n in SOFTMAX_SETTINGS}) == cfg


def project_whatif(cfg: WhatIf, w: tuple[np.ndarray, ...] | None = None) -> Projected:
    """The input of ``cfg`` and its projections (``w`` as in :func:`run_whatif`)::

    x = embeddings (+ positional encoding)         # (T, d_model)
    q, k, v = x @ W_q, x @ W_k, x @ W_v             # (T, d_model) each
    q, k, v = split into H heads                     # (H, T, d_k) each
    """
    tokens, x, notices = build_input(cfg)
    if w is None:
        w = tuple(random_projection_weights(cfg.d_model, cfg.seed))
    elif len(w) != 4 or any(np.shape(m) != (cfg.d_model, cfg.d_model) for m in w):
        raise ValueError(
            f"w must be the four ({cfg.d_model}, {cfg.d_model}) projection matrices of d_model={cfg.d_model}; "
            f"got shapes {[np.shape(m) for m in w]}"
        )
    q, k, v = (split_heads(x @ m, cfg.n_heads) for m in w[:3])
    return Projected(cfg, tokens, x, w, q, k, v, tuple(notices))


def run_whatif(cfg: WhatIf, w: tuple[np.ndarray, ...] | None = None, projected: Projected | None = None) -> WhatIfRun:
    """Compute multi-head self-attention for the what-if ``cfg`` and keep every intermediate: the same steps as
    :func:`multi_head_attention`::

        q, k, v = project_whatif(cfg)                    # (H, T, d_k) each
        heads, weights = scaled_dot_product_attention(q, k, v, mask)   # (H, T, d_k), (H, T, T)
        output = concat(heads) @ W_o                     # (T, d_model)

    Args:
        cfg: the what-if.
        w: ``random_projection_weights(cfg.d_model, cfg.seed)`` (W_q, W_k, W_v, W_o, each ``(d_model,
            d_model)``) when the caller keeps them already (they depend on d_model and the seed only, and
            drawing them is half of a run at d_model 512); None draws them here.
        projected: :func:`project_whatif` of a what-if that differs from ``cfg`` in its scaling, temperature or
            mask alone, when the caller keeps it (a new temperature then costs the softmax and the output only).
    """
    if projected is None:
        projected = project_whatif(cfg, w)
    elif not projected.serves(cfg):
        raise ValueError(f"projected is of another input or size ({projected.config}); it cannot serve {cfg}")
    p = projected
    mask, mask_notices = build_mask(cfg, p.x.shape[0])
    heads, weights = scaled_dot_product_attention(
        p.q,
        p.k,
        p.v,
        mask=None if mask is None else mask[None, :, :],  # the same mask for every head
        scaled=cfg.scaled,
        temperature=cfg.temperature,
    )
    concat = merge_heads(heads)  # (T, d_model)
    output = concat @ p.w[3]
    return WhatIfRun(
        cfg, p.tokens, p.x, p.w, p.q, p.k, p.v, heads, concat, output, weights, mask, p.notices + tuple(mask_notices)
    )


def twin_weights(run: WhatIfRun, head: int | None = None) -> np.ndarray:
    """``(H, T, T)`` the weights of ``run``'s scaling twin (its what-if with ``scaled`` flipped), without a second run;
    ``(T, T)`` those of one ``head`` only (what a page that states one head's twin figures needs: 1/H of the work).

    The twin shares the input, the projections, the mask and the temperature; only the score factor differs. So its
    weights are the same attention step on this run's q and k (and v, whose product is dropped), which is the call
    :func:`run_whatif` makes for the twin: the weights agree with the twin's run to the last bit.
    """
    cfg = run.config
    mask = None if run.mask is None else run.mask[None, :, :]  # (1, T, T): every head, as multi_head_attention
    if head is not None:
        h = check_positive_int("head", head, low=0, high=cfg.n_heads - 1)
        q, k = run.q[h : h + 1], run.k[h : h + 1]  # (1, T, d_k): the same batched step on one head
        return attention_weights(q, k, mask=mask, scaled=not cfg.scaled, temperature=cfg.temperature)[0]
    return attention_weights(run.q, run.k, mask=mask, scaled=not cfg.scaled, temperature=cfg.temperature)
