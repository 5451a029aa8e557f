"""Run the Transformer block page's experiment: an encoder block on a sentence, a decoder block reading it.

One call builds the input (the "it" sentence or the what-if's own input), seeded block weights, the
encoder block and a decoder block over the encoder's output, and keeps every intermediate tensor.
Also the encoder block's data flow, edge by edge (its diagram: ui/draw/diagrams.py). Shapes: T encoder
tokens, T_dec decoder tokens, d_model width, H heads, d_ff = 4 d_model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int
from .config import DEFAULT_SENTENCE, WhatIf
from .inputs import random_embeddings, sentence_embeddings
from .positional import sinusoidal_positional_encoding
from .transformer import DecoderSteps, EncoderSteps, block_params, decoder_block, encoder_block
from .whatif import build_input

MAX_DECODER_TOKENS = 64


@dataclass(frozen=True)
class BlockRun:
    """Everything the Transformer block experiment computed."""

    config: WhatIf  # d_model, n_heads, scaled, temperature, seed, positional (and the input when not the sentence)
    tokens: list[str]  # (T,) the encoder's tokens
    decoder_tokens: list[str]  # (T_dec,) y1 .. y_T_dec
    encoder: EncoderSteps  # x (T, d_model) ... weights (H, T, T) ... out (T, d_model)
    decoder: DecoderSteps  # y (T_dec, d_model) ... cross_weights (H, T_dec, T) ... out (T_dec, d_model)

    @property
    def T(self) -> int:
        return len(self.tokens)


def run_block(
    cfg: WhatIf, sentence: str | None = DEFAULT_SENTENCE, norm_first: bool = False, decoder_tokens: int = 5
) -> BlockRun:
    """An encoder block on ``sentence`` (or on cfg's input when None) and a decoder block over its output.

    Args:
        cfg: the what-if; its d_model, n_heads, scaled, temperature, seed and positional are used.
        sentence: text whose whitespace tokens are embedded (seeded, as on the other pages); None uses
            ``build_input(cfg)``. Sinusoidal positions are added when ``cfg.positional``.
        norm_first: pre-norm (True) or post-norm (False) blocks.
        decoder_tokens: T_dec, 1 to MAX_DECODER_TOKENS seeded random decoder inputs.

    Returns:
        :class:`BlockRun`; block weights are seeded random (untrained), from ``block_params(d_model, seed)``.
    """
    T_dec = check_positive_int("decoder_tokens", decoder_tokens, high=MAX_DECODER_TOKENS)
    if sentence is None:
        tokens, x, _ = build_input(cfg)  # positions already added when cfg.positional
    else:
        if not isinstance(sentence, str) or not sentence.split():
            raise ValueError(f"sentence must be text with at least one token; got {sentence!r}")
        tokens, x, _ = sentence_embeddings(sentence, cfg.d_model, cfg.seed)
        if cfg.positional:
            x = x + sinusoidal_positional_encoding(len(tokens), cfg.d_model)  # (T, d_model)
    kw = dict(norm_first=bool(norm_first), scaled=cfg.scaled, temperature=cfg.temperature)
    enc = encoder_block(x, block_params(cfg.d_model, seed=cfg.seed), cfg.n_heads, **kw)
    y = random_embeddings(T_dec, cfg.d_model, cfg.seed + 11)  # (T_dec, d_model)
    dec = decoder_block(y, enc.out, block_params(cfg.d_model, seed=cfg.seed, decoder=True), cfg.n_heads, **kw)
    return BlockRun(cfg, list(tokens), [f"y{i + 1}" for i in range(T_dec)], enc, dec)


def find_token(tokens: list[str], word: str) -> int | None:
    """Index of the first token equal to ``word`` ignoring case and trailing punctuation, or None."""
    word = word.lower()
    return next((i for i, t in enumerate(tokens) if t.lower().strip(".,;:!?\"'") == word), None)


ATTN, FFN = "multi-head\\nself-attention", "feed-forward\\nReLU(xW₁+b₁)W₂+b₂"


def encoder_flow(norm_first: bool) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """The encoder block's edges in the order the data meets them, and which of them are residual."""
    if norm_first:  # h = x + MHA(LN1(x)); out = h + FFN(LN2(h))
        flow = [
            ("x", "LN₁"),
            ("LN₁", ATTN),
            (ATTN, "add₁"),
            ("x", "add₁"),
            ("add₁", "LN₂"),
            ("LN₂", FFN),
            (FFN, "add₂"),
            ("add₁", "add₂"),
            ("add₂", "out"),
        ]
        return flow, {("x", "add₁"), ("add₁", "add₂")}
    # post-norm: h = LN1(x + MHA(x)); out = LN2(h + FFN(h))
    flow = [
        ("x", ATTN),
        (ATTN, "add₁"),
        ("x", "add₁"),
        ("add₁", "LN₁"),
        ("LN₁", FFN),
        (FFN, "add₂"),
        ("LN₁", "add₂"),
        ("add₂", "LN₂"),
        ("LN₂", "out"),
    ]
    return flow, {("x", "add₁"), ("LN₁", "add₂")}


def encoder_graph_alt(norm_first: bool) -> str:
    """The encoder block's diagram (:func:`encoder_flow`, drawn by ui/draw/diagrams.py) in words, its text alternative:
    each edge, residual ones named."""
    flow, residual = encoder_flow(norm_first)
    steps = [f"{a} to {b}".replace("\\n", " ") + (" (residual)" if (a, b) in residual else "") for a, b in flow]
    kind = "pre-norm" if norm_first else "post-norm"
    return f"Encoder block ({kind}) data flow: " + "; ".join(steps) + "."


def layer_norm_stats(a: np.ndarray) -> tuple[float, float]:
    """(largest |row mean|, mean row standard deviation) of a (T, d_model) tensor."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.abs(a.mean(axis=1)).max()), float(a.std(axis=1).mean())
