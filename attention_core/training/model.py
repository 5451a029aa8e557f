"""A tiny transformer built from attention_core's own :class:`MultiHeadSelfAttention`.

    tokens (B, T) -> token embedding (+ positions) -> n_layers x [x + attention(LN(x)) (+ x + MLP(LN(x)))]
    -> LN -> unembedding -> logits (B, T, V_out)

Positions: learned or sinusoidal are added to the token embedding; rope adds nothing and rotates every
head's queries and keys instead (:mod:`.rotary`).

Attention-only by default (no MLP, no LayerNorm): the residual stream is the sum of the embeddings
and every head's output, the setting in which Olsson et al. (2022) found induction heads.
Reference: C. Olsson et al., "In-context Learning and Induction Heads", Transformer Circuits, 2022.

Shape legend: B batch, T tokens, d_model width, H heads, d_k = d_model / H, V_in / V_out vocabularies.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..positional import sinusoidal_positional_encoding
from ..torch_attention import MultiHeadSelfAttention
from .config import TrainConfig
from .rotary import RotarySelfAttention
from .standalone_train import init_weights
from .tasks import is_causal, vocab_sizes


class Block(nn.Module):
    """One layer: pre-norm (optional) multi-head self-attention, then an optional ReLU MLP, both residual."""

    def __init__(self, cfg: TrainConfig):
        super().__init__()
        d = cfg.d_model
        self.ln_attn = nn.LayerNorm(d) if cfg.layernorm else nn.Identity()
        # rope: q and k rotated by position inside attention (same parameters, nothing added to the input)
        self.attn = RotarySelfAttention(d, cfg.n_heads) if cfg.pos == "rope" else MultiHeadSelfAttention(d, cfg.n_heads)
        self.ln_mlp = nn.LayerNorm(d) if (cfg.layernorm and cfg.mlp) else nn.Identity()
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d)) if cfg.mlp else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None):
        h = self.ln_attn(x)  # (B, T, d_model): the attention layer's input
        out, weights = self.attn(h, mask)  # (B, T, d_model), (B, H, T, T)
        x = x + out
        if self.mlp is not None:
            x = x + self.mlp(self.ln_mlp(x))  # (B, T, d_model)
        return x, weights, h


class TinyTransformer(nn.Module):
    """The model of the Train page; ``forward(tokens) -> (logits, [weights per layer])``.

    Args:
        cfg: the run's :class:`TrainConfig` (layers, heads, width, positions, MLP, LayerNorm, vocab, context).

    ``forward(tokens (B, T), return_inputs=False)`` returns logits ``(B, T, V_out)`` and a list of
    ``n_layers`` attention weights ``(B, H, T, T)``; with ``return_inputs`` also the list of each
    attention layer's input ``(B, T, d_model)`` (after its LayerNorm), for the parity check.
    """

    def __init__(self, cfg: TrainConfig):
        super().__init__()
        self.cfg = cfg
        v_in, v_out = vocab_sizes(cfg)
        self.tok_emb = nn.Embedding(v_in, cfg.d_model)
        if cfg.pos == "learned":
            self.pos_emb = nn.Parameter(torch.zeros(cfg.context, cfg.d_model))  # (T, d_model), drawn in init_weights
        elif cfg.pos == "sinusoidal":
            table = torch.from_numpy(sinusoidal_positional_encoding(cfg.context, cfg.d_model))  # (T, d_model)
            self.register_buffer("pos_emb", table, persistent=False)
        else:
            self.pos_emb = None  # rope: positions enter as rotations of q and k in every attention layer
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model) if cfg.layernorm else nn.Identity()
        self.unembed = nn.Linear(cfg.d_model, v_out, bias=False)
        causal = torch.tril(torch.ones(cfg.context, cfg.context, dtype=torch.bool)) if is_causal(cfg.task) else None
        self.register_buffer("mask", causal, persistent=False)  # (T, T) True = may attend, or None

    def forward(self, tokens: torch.Tensor, return_inputs: bool = False):
        if tokens.dim() != 2 or tokens.shape[1] > self.cfg.context:
            raise ValueError(f"tokens must be (B, T) with T <= context={self.cfg.context}; got {tuple(tokens.shape)}")
        T = tokens.shape[1]
        x = self.tok_emb(tokens)  # (B, T, d_model)
        if self.pos_emb is not None:
            x = x + self.pos_emb[:T]  # (B, T, d_model)
        mask = None if self.mask is None else self.mask[:T, :T]  # (T, T)
        weights, inputs = [], []
        for block in self.blocks:
            x, w, h = block(x, mask)
            weights.append(w)  # (B, H, T, T)
            inputs.append(h)  # (B, T, d_model)
        logits = self.unembed(self.ln_f(x))  # (B, T, V_out)
        return (logits, weights, inputs) if return_inputs else (logits, weights)


def build_model(cfg: TrainConfig) -> TinyTransformer:
    """The model with its initial weights drawn from a generator seeded with ``cfg.seed``."""
    return init_weights(TinyTransformer(cfg), cfg.seed)


def flat_parameters(model: nn.Module) -> torch.Tensor:
    """Every parameter, in ``named_parameters`` order, as one float32 vector (P,)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).float()


def load_flat_parameters(model: nn.Module, flat) -> nn.Module:
    """Copy a vector from :func:`flat_parameters` (any float dtype, NumPy or torch) back into ``model``."""
    flat = torch.as_tensor(np.array(flat, dtype=np.float32)).reshape(-1)  # a private float32 copy
    total = sum(p.numel() for p in model.parameters())
    if flat.numel() != total:
        raise ValueError(f"the vector has {flat.numel()} numbers but the model has {total} parameters")
    with torch.no_grad():
        start = 0
        for p in model.parameters():
            p.copy_(flat[start : start + p.numel()].reshape(p.shape))
            start += p.numel()
    return model


def count_parameters(model: nn.Module) -> int:
    """Number of trainable numbers in the model."""
    return sum(p.numel() for p in model.parameters())
