"""Attention in PyTorch, written from scratch (no ``nn.MultiheadAttention``, no
``F.scaled_dot_product_attention``), step for step the same as the NumPy version.

Shape legend:
    B   batch; T tokens; T_q / T_k query / key tokens
    d_model  embedding width; H heads; d_k = d_model / H; d_v value width
Masks are bool with **True = may attend** (the opposite of ``nn.MultiheadAttention``'s attn_mask).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_positive_int, check_temperature
from .attention import check_heads


def softmax_torch(z: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dim; entries where ``mask`` is False get 0, a fully masked row is all 0."""
    if mask is None:
        return torch.softmax(z, dim=-1)
    z = z.masked_fill(~mask, float("-inf"))
    z_max = z.amax(dim=-1, keepdim=True)
    z_max = torch.where(torch.isfinite(z_max), z_max, torch.zeros_like(z_max))  # fully masked rows
    e = torch.exp(z - z_max)  # exp(-inf) = 0 for blocked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def scaled_dot_product_attention_torch(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scaled: bool = True,
    temperature: float = 1.0,
):
    """Torch twin of :func:`attention_core.scaled_dot_product_attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: bool broadcastable to ``(..., T_q, T_k)``, True = may attend.
        scaled: divide by sqrt(d_k); temperature: > 0, divides the logits.

    Returns:
        ``(output, weights)``: ``(..., T_q, d_v)`` and ``(..., T_q, T_k)``.
    """
    t = check_temperature(temperature)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d_k (last dim); got q {tuple(q.shape)} and k {tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same T_k; got k {tuple(k.shape)} and v {tuple(v.shape)}")
    if mask is not None and mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend); got {mask.dtype}")
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T_k)
    if scaled:
        scores = scores / math.sqrt(q.shape[-1])
    if t != 1.0:
        scores = scores / t
    weights = softmax_torch(scores, mask)  # (..., T_q, T_k)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


class SelfAttention(nn.Module):
    """One attention head with its own projections: Z = softmax(Q K^T / sqrt(d_k)) V, then W_o.

    ``W_q, W_k: d_model -> d_k``, ``W_v: d_model -> d_v``, ``W_o: d_v -> d_model``, all ``nn.Linear``.
    ``forward(x (B, T, d_model), mask) -> (output (B, T, d_model), weights (B, T, T))``.
    """

    def __init__(
        self,
        d_model: int,
        d_k: int | None = None,
        d_v: int | None = None,
        bias: bool = False,
        scaled: bool = True,
        temperature: float = 1.0,
    ):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.d_k = self.d_model if d_k is None else check_positive_int("d_k", d_k)
        self.d_v = self.d_model if d_v is None else check_positive_int("d_v", d_v)
        self.scaled = bool(scaled)
        self.temperature = check_temperature(temperature)
        self.W_q = nn.Linear(self.d_model, self.d_k, bias=bias)
        self.W_k = nn.Linear(self.d_model, self.d_k, bias=bias)
        self.W_v = nn.Linear(self.d_model, self.d_v, bias=bias)
        self.W_o = nn.Linear(self.d_v, self.d_model, bias=bias)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must end in d_model={self.d_model}; got shape {tuple(x.shape)}")
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
        z, weights = scaled_dot_product_attention_torch(q, k, v, mask, self.scaled, self.temperature)
        return self.W_o(z), weights  # (B, T, d_model), (B, T, T)


class MultiHeadAttention(nn.Module):
    """Multi-head attention: queries from one sequence, keys and values from another (or the same).

    H heads of width d_k = d_model / H side by side, concatenated and projected by W_o. Projections
    ``W_q, W_k, W_v, W_o`` are ``nn.Linear(d_model, d_model)``; head h uses the output features
    h*d_k .. (h+1)*d_k - 1 of W_q, W_k, W_v. Cross-attention (a decoder reading the encoder) passes ``kv``;
    :class:`MultiHeadSelfAttention` is the case ``kv = x``.
    ``forward(x (B, T_q, d_model), kv (B, T_k, d_model), mask)``
    ``-> (output (B, T_q, d_model), weights (B, H, T_q, T_k))``.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = False, scaled: bool = True, temperature: float = 1.0):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.n_heads = check_heads(self.d_model, n_heads)
        self.d_k = self.d_model // self.n_heads
        self.scaled = bool(scaled)
        self.temperature = check_temperature(temperature)
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x: torch.Tensor, kv: torch.Tensor | None = None, mask: torch.Tensor | None = None):
        """Queries from ``x`` (B, T_q, d_model); keys and values from ``kv`` (B, T_k, d_model), default ``x``.

        ``mask``: bool broadcastable to (B, T_q, T_k), True = may attend (the same for every head).
        """
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must end in d_model={self.d_model}; got shape {tuple(x.shape)}")
        kv = x if kv is None else kv
        if kv.shape[-1] != self.d_model or kv.shape[:-2] != x.shape[:-2]:
            raise ValueError(
                f"kv must be (..., T_k, d_model={self.d_model}) with the leading dims of x "
                f"{tuple(x.shape[:-2])}; got shape {tuple(kv.shape)}"
            )
        *lead, T_q, _ = x.shape
        T_k = kv.shape[-2]
        H, d_k = self.n_heads, self.d_k
        q = self._rotate(self.W_q(x).reshape(*lead, T_q, H, d_k).transpose(-3, -2))  # (B, H, T_q, d_k)
        k = self._rotate(self.W_k(kv).reshape(*lead, T_k, H, d_k).transpose(-3, -2))  # (B, H, T_k, d_k)
        v = self.W_v(kv).reshape(*lead, T_k, H, d_k).transpose(-3, -2)  # (B, H, T_k, d_k)
        if mask is not None and mask.dim() >= 2:
            mask = mask.unsqueeze(-3)  # (B, 1, T_q, T_k): the same mask for every head
        z, weights = scaled_dot_product_attention_torch(q, k, v, mask, self.scaled, self.temperature)
        z = z.transpose(-3, -2).reshape(*lead, T_q, self.d_model)  # (B, T_q, d_model): heads concatenated
        return self.W_o(z), weights  # (B, T_q, d_model), (B, H, T_q, T_k)

    def _rotate(self, t: torch.Tensor) -> torch.Tensor:
        """Queries and keys (B, H, T, d_k) pass here before the scores: unchanged (RoPE rotates them)."""
        return t

    def load_numpy_weights(self, w_q, w_k, w_v, w_o) -> MultiHeadAttention:
        """Copy ``x @ W`` matrices (d_model, d_model) from the NumPy side into the nn.Linear layers."""
        with torch.no_grad():
            for lin, w in ((self.W_q, w_q), (self.W_k, w_k), (self.W_v, w_v), (self.W_o, w_o)):
                lin.weight.copy_(torch.as_tensor(w, dtype=lin.weight.dtype).T)  # Linear stores W^T
        return self


class MultiHeadSelfAttention(MultiHeadAttention):
    """Multi-head self-attention: :class:`MultiHeadAttention` with queries, keys and values from the same ``x``.

    ``forward(x (B, T, d_model), mask) -> (output (B, T, d_model), weights (B, H, T, T))``. The old ``kv``
    argument still works for backward compatibility; new code uses :class:`MultiHeadAttention` for
    cross-attention.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, kv: torch.Tensor | None = None):
        return super().forward(x, kv=kv, mask=mask)
