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
    return {name: (rng.standard_normal((d_model, d_model)) * s).astype(np.float32) for name in ("w_q", "w_k", "w_v", "w_o")}


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
        p[name] = ((1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32),
                   (0.1 * rng.standard_normal(d_model)).astype(np.float32))
    return p


def _mha(x, w, n_heads, mask=None, kv=None, scaled=True, temperature=1.0):
    out, weights = multi_head_attention(x, w["w_q"], w["w_k"], w["w_v"], w["w_o"], n_heads=n_heads, mask=mask,
                                        scaled=scaled, temperature=temperature, kv=kv)
    return out, weights


def encoder_block(x, params: dict, n_heads: int, norm_first: bool = False, mask=None, scaled: bool = True,
                  temperature: float = 1.0) -> dict[str, np.ndarray]:
    """One encoder block on ``x`` (T, d_model); returns every intermediate tensor by name.

    Keys: attn (T, d_model), weights (H, T, T), add1, norm1 (post-norm: the LN outputs; pre-norm: the
    LN inputs to each sub-layer), ffn_hidden (T, d_ff), ffn (T, d_model), add2, out.
    """
    x = check_finite_array("x", x, min_ndim=2)
    check_heads(x.shape[-1], n_heads)
    s: dict[str, np.ndarray] = {"x": x}
    if norm_first:
        s["norm1"] = layer_norm(x, *params["ln1"])
        s["attn"], s["weights"] = _mha(s["norm1"], params["self"], n_heads, mask, scaled=scaled, temperature=temperature)
        s["add1"] = x + s["attn"]
        s["norm2"] = layer_norm(s["add1"], *params["ln2"])
        s["ffn"], s["ffn_hidden"] = feed_forward(s["norm2"], params["w1"], params["b1"], params["w2"], params["b2"])
        s["out"] = s["add2"] = s["add1"] + s["ffn"]
    else:
        s["attn"], s["weights"] = _mha(x, params["self"], n_heads, mask, scaled=scaled, temperature=temperature)
        s["add1"] = x + s["attn"]
        s["norm1"] = layer_norm(s["add1"], *params["ln1"])
        s["ffn"], s["ffn_hidden"] = feed_forward(s["norm1"], params["w1"], params["b1"], params["w2"], params["b2"])
        s["add2"] = s["norm1"] + s["ffn"]
        s["out"] = s["norm2"] = layer_norm(s["add2"], *params["ln2"])
    return s


def _residual(x, sublayer, ln, norm_first: bool):
    """One sub-layer with its residual connection and LayerNorm; returns (block output, sub-layer output).

    post-norm: LN(x + f(x));  pre-norm: x + f(LN(x))."""
    if norm_first:
        y = sublayer(layer_norm(x, *ln))
        return x + y, y
    y = sublayer(x)
    return layer_norm(x + y, *ln), y


def decoder_block(y, memory, params: dict, n_heads: int, norm_first: bool = False, scaled: bool = True,
                  temperature: float = 1.0) -> dict[str, np.ndarray]:
    """One decoder block on ``y`` (T_q, d_model) reading ``memory`` (T_k, d_model).

    Keys: self_mask (T_q, T_q), self_attn, self_weights (H, T_q, T_q) with the causal mask, cross_attn,
    cross_weights (H, T_q, T_k), ffn (T_q, d_model) and out (T_q, d_model).
    """
    y = check_finite_array("y", y, min_ndim=2)
    memory = check_finite_array("memory", memory, min_ndim=2)
    check_heads(y.shape[-1], n_heads)
    mask = causal_mask(y.shape[0])
    s: dict[str, np.ndarray] = {"y": y, "memory": memory, "self_mask": mask}

    def attend(weights_key: str, w: dict, **extra):
        def sublayer(z):
            out, s[weights_key] = _mha(z, w, n_heads, scaled=scaled, temperature=temperature, **extra)
            return out
        return sublayer

    def ffn(z):
        return feed_forward(z, params["w1"], params["b1"], params["w2"], params["b2"])[0]

    h1, s["self_attn"] = _residual(y, attend("self_weights", params["self"], mask=mask), params["ln1"], norm_first)
    h2, s["cross_attn"] = _residual(h1, attend("cross_weights", params["cross"], kv=memory), params["ln2"], norm_first)
    s["out"], s["ffn"] = _residual(h2, ffn, params["ln3"], norm_first)
    return s
