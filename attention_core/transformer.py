"""The transformer blocks around attention, in NumPy (for the page) and from-scratch PyTorch
(checked against ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``).

Shapes: T tokens (T_q decoder / T_k encoder tokens in cross-attention), d_model width, H heads,
d_ff = 4 d_model feed-forward width. Weights use the ``x @ W`` convention.

Encoder block, post-norm (the original paper) / pre-norm::

    post: h = LN1(x + MHA(x));            out = LN2(h + FFN(h))
    pre:  h = x + MHA(LN1(x));            out = h + FFN(LN2(h))

Decoder block (self-attention is causal; cross-attention reads the encoder output ``memory``)::

    post: h1 = LN1(y + MHA(y));  h2 = LN2(h1 + MHA(h1, memory));  out = LN3(h2 + FFN(h2))
    pre:  h1 = y + MHA(LN1(y));  h2 = h1 + MHA(LN2(h1), memory);  out = h2 + FFN(LN3(h2))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int
from .attention import check_heads, multi_head_attention
from .masks import causal_mask

LN_EPS = 1e-5


def layer_norm(x, gamma, beta, eps: float = LN_EPS) -> np.ndarray:
    """Normalise each row of ``x`` (..., d_model) to mean 0 and variance 1, then scale and shift."""
    x = np.asarray(x)
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def feed_forward(x, w1, b1, w2, b2) -> tuple[np.ndarray, np.ndarray]:
    """ReLU(x W1 + b1) W2 + b2; returns (output (T, d_model), hidden (T, d_ff))."""
    hidden = np.maximum(x @ w1 + b1, 0.0)  # (T, d_ff)
    return hidden @ w2 + b2, hidden  # (T, d_model), (T, d_ff)


def _attn_params(rng, d_model: int) -> dict[str, np.ndarray]:
    s = 1.0 / math.sqrt(d_model)
    return {
        name: (rng.standard_normal((d_model, d_model)) * s).astype(np.float32) for name in ("w_q", "w_k", "w_v", "w_o")
    }


def block_params(d_model: int, seed: int = 0, decoder: bool = False, d_ff: int | None = None) -> dict:
    """Seeded weights for an encoder (or decoder) block: attention(s), feed-forward and LayerNorms.

    Keys: ``self`` (and ``cross`` for a decoder) -> dict of w_q, w_k, w_v, w_o; ``w1`` (d_model, d_ff),
    ``b1`` (d_ff,), ``w2`` (d_ff, d_model), ``b2`` (d_model,); ``ln1``, ``ln2`` (``ln3``) -> (gamma, beta).
    """
    d_model = check_positive_int("d_model", d_model)
    d_ff = 4 * d_model if d_ff is None else check_positive_int("d_ff", d_ff)
    rng = np.random.default_rng([int(seed), 104729, int(decoder)])
    p = {"self": _attn_params(rng, d_model)}
    if decoder:
        p["cross"] = _attn_params(rng, d_model)
    p["w1"] = (rng.standard_normal((d_model, d_ff)) / math.sqrt(d_model)).astype(np.float32)
    p["b1"] = (0.1 * rng.standard_normal(d_ff)).astype(np.float32)
    p["w2"] = (rng.standard_normal((d_ff, d_model)) / math.sqrt(d_ff)).astype(np.float32)
    p["b2"] = (0.1 * rng.standard_normal(d_model)).astype(np.float32)
    for name in ("ln1", "ln2", "ln3") if decoder else ("ln1", "ln2"):
        p[name] = (
            (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32),
            (0.1 * rng.standard_normal(d_model)).astype(np.float32),
        )
    return p


def _mha(x, w, n_heads, mask=None, kv=None, scaled=True, temperature=1.0):
    return multi_head_attention(
        x,
        w["w_q"],
        w["w_k"],
        w["w_v"],
        w["w_o"],
        n_heads=n_heads,
        mask=mask,
        scaled=scaled,
        temperature=temperature,
        kv=kv,
    )  # (T_q, d_model), (H, T_q, T_k)


@dataclass(frozen=True)
class SubLayer:
    """One sub-layer f with its residual connection and LayerNorm.

    post-norm: out = LN(x + f(x));  pre-norm: out = x + f(LN(x)).
    """

    norm: np.ndarray  # (T, d_model) the LayerNorm's output: LN(x) in pre-norm, LN(x + f(x)) in post-norm
    sub: np.ndarray  # (T, d_model) f's output (attention or feed-forward)
    add: np.ndarray  # (T, d_model) the residual sum x + f(.)
    out: np.ndarray  # (T, d_model) what the next sub-layer reads: add (pre-norm) or norm (post-norm)


def _residual(x, sublayer, ln, norm_first: bool):
    """Run ``sublayer`` (returning (output, extra)) with its residual and LayerNorm; returns (SubLayer, extra)."""
    if norm_first:
        normed = layer_norm(x, *ln)  # (T, d_model)
        y, extra = sublayer(normed)  # (T, d_model)
        total = x + y  # (T, d_model)
        return SubLayer(normed, y, total, total), extra
    y, extra = sublayer(x)  # (T, d_model)
    normed = layer_norm(x + y, *ln)  # (T, d_model)
    return SubLayer(normed, y, x + y, normed), extra


def _ffn(params):
    return lambda z: feed_forward(z, params["w1"], params["b1"], params["w2"], params["b2"])  # (T, d), (T, d_ff)


@dataclass(frozen=True)
class EncoderSteps:
    """Every intermediate tensor of one encoder block."""

    x: np.ndarray  # (T, d_model) the block's input
    norm_first: bool  # True: pre-norm, False: post-norm
    attn: SubLayer  # multi-head self-attention with add & norm (tensors (T, d_model))
    weights: np.ndarray  # (H, T, T) the self-attention weights
    ffn: SubLayer  # feed-forward with add & norm (tensors (T, d_model))
    ffn_hidden: np.ndarray  # (T, d_ff) ReLU(x W1 + b1), d_ff = 4 d_model
    out: np.ndarray  # (T, d_model) the block's output, ffn.out

    @property
    def mean_row_norms(self) -> tuple[float, float]:
        """The mean L2 norm of a token's row: (input, output)."""
        return float(np.linalg.norm(self.x, axis=1).mean()), float(np.linalg.norm(self.out, axis=1).mean())


def encoder_block(
    x, params: dict, n_heads: int, norm_first: bool = False, mask=None, scaled: bool = True, temperature: float = 1.0
) -> EncoderSteps:
    """One encoder block on ``x`` (T, d_model), keeping every intermediate tensor.

    Reference (post-norm; pre-norm moves each LN in front of its sub-layer)::

        h = LN1(x + MHA(x))           # (T, d_model)
        out = LN2(h + FFN(h))         # (T, d_model)

    Args:
        x: ``(T, d_model)`` input; params: :func:`block_params` (encoder); n_heads: H, divides d_model.
        norm_first: pre-norm instead of post-norm; mask: bool (T, T), True = may attend.
        scaled, temperature: as in :func:`attention_core.scaled_dot_product_attention`.

    Returns:
        :class:`EncoderSteps`.
    """
    x = check_finite_array("x", x, min_ndim=2)
    check_heads(x.shape[-1], n_heads)

    def attend(z):
        return _mha(z, params["self"], n_heads, mask, scaled=scaled, temperature=temperature)

    attn, weights = _residual(x, attend, params["ln1"], norm_first)
    ffn, hidden = _residual(attn.out, _ffn(params), params["ln2"], norm_first)
    return EncoderSteps(x, bool(norm_first), attn, weights, ffn, hidden, ffn.out)


@dataclass(frozen=True)
class DecoderSteps:
    """Every intermediate tensor of one decoder block."""

    y: np.ndarray  # (T_q, d_model) the decoder's input
    memory: np.ndarray  # (T_k, d_model) the encoder's output
    self_mask: np.ndarray  # (T_q, T_q) causal mask, True = may attend
    self_attn: SubLayer  # masked self-attention with add & norm (tensors (T_q, d_model))
    self_weights: np.ndarray  # (H, T_q, T_q) zero above the diagonal
    cross_attn: SubLayer  # cross-attention over memory with add & norm (tensors (T_q, d_model))
    cross_weights: np.ndarray  # (H, T_q, T_k)
    ffn: SubLayer  # feed-forward with add & norm (tensors (T_q, d_model))
    out: np.ndarray  # (T_q, d_model) the block's output, ffn.out


def decoder_block(
    y, memory, params: dict, n_heads: int, norm_first: bool = False, scaled: bool = True, temperature: float = 1.0
) -> DecoderSteps:
    """One decoder block on ``y`` (T_q, d_model) reading the encoder output ``memory`` (T_k, d_model).

    Reference (post-norm)::

        h1 = LN1(y + MHA(y, causal))          # (T_q, d_model)
        h2 = LN2(h1 + MHA(h1, memory))        # (T_q, d_model), weights (H, T_q, T_k)
        out = LN3(h2 + FFN(h2))               # (T_q, d_model)

    Returns:
        :class:`DecoderSteps`.
    """
    y = check_finite_array("y", y, min_ndim=2)
    memory = check_finite_array("memory", memory, min_ndim=2)
    check_heads(y.shape[-1], n_heads)
    mask = causal_mask(y.shape[0])  # (T_q, T_q)

    def attend(w: dict, **extra):
        return lambda z: _mha(z, w, n_heads, scaled=scaled, temperature=temperature, **extra)

    self_attn, self_w = _residual(y, attend(params["self"], mask=mask), params["ln1"], norm_first)
    cross, cross_w = _residual(self_attn.out, attend(params["cross"], kv=memory), params["ln2"], norm_first)
    ffn, _ = _residual(cross.out, _ffn(params), params["ln3"], norm_first)
    return DecoderSteps(y, memory, mask, self_attn, self_w, cross, cross_w, ffn, ffn.out)
