"""From-scratch PyTorch encoder and decoder blocks (MultiHeadSelfAttention; MultiHeadAttention for the decoder's
cross-attention), with loaders from the NumPy parameters and into ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``.

Shapes: (B, T, d_model) batch-first; weights in nn.Linear store W^T of the NumPy ``x @ W`` matrices.
"""

from __future__ import annotations

import torch
from torch import nn

from .masks import causal_mask
from .torch_attention import MultiHeadAttention, MultiHeadSelfAttention


class FeedForward(nn.Module):
    """ReLU(x W1 + b1) W2 + b2 with width d_ff."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))  # (B, T, d_model)


class EncoderBlock(nn.Module):
    """Self-attention -> add & norm -> feed-forward -> add & norm (``norm_first`` moves the norms first)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadSelfAttention(d_model, n_heads, bias=True)
        self.ffn = FeedForward(d_model, d_ff or 4 * d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask)[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, mask)[0])
        return self.norm2(x + self.ffn(x))


class DecoderBlock(nn.Module):
    """Causal self-attention, cross-attention over ``memory``, feed-forward; each with add & norm."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadSelfAttention(d_model, n_heads, bias=True)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, bias=True)
        self.ffn = FeedForward(d_model, d_ff or 4 * d_model)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, y, memory):
        mask = torch.from_numpy(causal_mask(y.shape[-2]))  # (T_q, T_q), True = may attend
        if self.norm_first:
            y = y + self.self_attn(self.norm1(y), mask)[0]
            y = y + self.cross_attn(self.norm2(y), kv=memory)[0]
            return y + self.ffn(self.norm3(y))
        y = self.norm1(y + self.self_attn(y, mask)[0])
        y = self.norm2(y + self.cross_attn(y, kv=memory)[0])
        return self.norm3(y + self.ffn(y))


def _t(a):
    return torch.as_tensor(a, dtype=torch.float32)


def load_block(block: nn.Module, params: dict) -> nn.Module:
    """Copy NumPy block parameters (see attention_core.transformer.block_params) into a block.

    Attention biases are zero (the NumPy attention has none)."""
    with torch.no_grad():
        for name in ("self", "cross"):
            if name in params:
                mha = block.self_attn if name == "self" else block.cross_attn
                w = params[name]
                mha.load_numpy_weights(w["w_q"], w["w_k"], w["w_v"], w["w_o"])
                for lin in (mha.W_q, mha.W_k, mha.W_v, mha.W_o):
                    lin.bias.zero_()
        block.ffn.linear1.weight.copy_(_t(params["w1"]).T)
        block.ffn.linear1.bias.copy_(_t(params["b1"]))
        block.ffn.linear2.weight.copy_(_t(params["w2"]).T)
        block.ffn.linear2.bias.copy_(_t(params["b2"]))
        for i, norm in enumerate((block.norm1, block.norm2, getattr(block, "norm3", None)), start=1):
            if norm is not None:
                norm.weight.copy_(_t(params[f"ln{i}"][0]))
                norm.bias.copy_(_t(params[f"ln{i}"][1]))
    return block


def _copy_mha(ref: nn.MultiheadAttention, w: dict) -> None:
    ref.in_proj_weight.copy_(torch.cat([_t(w[k]).T for k in ("w_q", "w_k", "w_v")], 0))
    ref.in_proj_bias.zero_()
    ref.out_proj.weight.copy_(_t(w["w_o"]).T)
    ref.out_proj.bias.zero_()


def to_torch_reference(params: dict, n_heads: int, norm_first: bool = False) -> nn.Module:
    """The same block as PyTorch's own nn.TransformerEncoderLayer / nn.TransformerDecoderLayer (eval, no dropout)."""
    d_model, d_ff = params["w1"].shape
    cls = nn.TransformerDecoderLayer if "cross" in params else nn.TransformerEncoderLayer
    ref = cls(
        d_model, n_heads, dim_feedforward=d_ff, dropout=0.0, activation="relu", batch_first=True, norm_first=norm_first
    ).eval()
    with torch.no_grad():
        _copy_mha(ref.self_attn, params["self"])
        if "cross" in params:
            _copy_mha(ref.multihead_attn, params["cross"])
        ref.linear1.weight.copy_(_t(params["w1"]).T)
        ref.linear1.bias.copy_(_t(params["b1"]))
        ref.linear2.weight.copy_(_t(params["w2"]).T)
        ref.linear2.bias.copy_(_t(params["b2"]))
        for i in (1, 2, 3):
            norm = getattr(ref, f"norm{i}", None)
            if norm is not None and f"ln{i}" in params:
                norm.weight.copy_(_t(params[f"ln{i}"][0]))
                norm.bias.copy_(_t(params[f"ln{i}"][1]))
    return ref
