"""Run one what-if: build the input from a :class:`WhatIf`, attend, and keep every step.

This is the single core call the pages make (through a cache). Shapes: T tokens, d_model width,
H heads, d_k = d_model / H.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import attention_weights, multi_head_attention
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


def run_whatif(cfg: WhatIf, w: tuple[np.ndarray, ...] | None = None) -> WhatIfRun:
    """Compute multi-head self-attention for the what-if ``cfg`` and keep every intermediate.

    Args:
        cfg: the what-if.
        w: ``random_projection_weights(cfg.d_model, cfg.seed)`` (W_q, W_k, W_v, W_o, each ``(d_model,
            d_model)``) when the caller keeps them already (they depend on d_model and the seed only, and
            drawing them is half of a run at d_model 512); None draws them here.
    """
    tokens, x, notices = build_input(cfg)
    mask, mask_notices = build_mask(cfg, x.shape[0])
    if w is None:
        w = tuple(random_projection_weights(cfg.d_model, cfg.seed))
    elif len(w) != 4 or any(np.shape(m) != (cfg.d_model, cfg.d_model) for m in w):
        raise ValueError(
            f"w must be the four ({cfg.d_model}, {cfg.d_model}) projection matrices of d_model={cfg.d_model}; "
            f"got shapes {[np.shape(m) for m in w]}"
        )
    output, weights, steps = multi_head_attention(
        x, *w, n_heads=cfg.n_heads, mask=mask, scaled=cfg.scaled, temperature=cfg.temperature, return_steps=True
    )
    return WhatIfRun(
        cfg,
        tokens,
        x,
        w,
        steps["q"],
        steps["k"],
        steps["v"],
        steps["heads"],
        steps["concat"],
        output,
        weights,
        mask,
        tuple(notices + mask_notices),
    )


def twin_weights(run: WhatIfRun) -> np.ndarray:
    """``(H, T, T)`` the weights of ``run``'s scaling twin (its what-if with ``scaled`` flipped), without a second run.

    The twin shares the input, the projections, the mask and the temperature; only the score factor differs. So its
    weights are the same attention step on this run's q and k (and v, whose product is dropped), which is the call
    :func:`run_whatif` makes for the twin: the weights agree with the twin's run to the last bit.
    """
    cfg = run.config
    mask = None if run.mask is None else run.mask[None, :, :]  # (1, T, T): every head, as multi_head_attention
    return attention_weights(run.q, run.k, mask=mask, scaled=not cfg.scaled, temperature=cfg.temperature)
