"""RoPE in PyTorch for the Train page's model: the torch twin of :func:`attention_core.rope.apply_rope`.

With ``pos="rope"`` nothing is added to the token embedding; instead every head's queries and keys are
rotated by their position before the scores, pair (2i, 2i+1) by ``t x theta_i``, ``theta_i = 10000^(-2i/d_k)``
(the paper's interleaved pairing), so a score depends on the positions only through their offset.
Reference: J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", arXiv:2104.09864, 2021.

Shape legend: B batch, H heads, T tokens, d_k = d_model / H (even), d_model width.
"""

from __future__ import annotations

import torch

from ..torch_attention import MultiHeadSelfAttention

ROPE_BASE = 10000.0  # base of the frequencies, as in the paper


def rope_torch(x: torch.Tensor, base: float = ROPE_BASE) -> torch.Tensor:
    """Rotate each pair (2i, 2i+1) of ``x``'s last dim by ``t x base^(-2i/d)``, t = 0 .. T-1 the token index.

    Reference (the same as :func:`attention_core.rope.apply_rope` with ``pairing="interleaved"``)::

        x1, x2 = x[..., 0::2], x[..., 1::2]               # (..., T, d/2) each
        out[..., 0::2] = x1 * cos(angle) - x2 * sin(angle)
        out[..., 1::2] = x1 * sin(angle) + x2 * cos(angle)

    Args:
        x: ``(..., T, d)`` float tensor, d even (queries or keys of every head).
        base: > 1.

    Returns:
        ``(..., T, d)`` tensor of ``x``'s dtype (angles computed in float64, differentiable in ``x``).
    """
    if not torch.is_tensor(x) or not x.is_floating_point() or x.dim() < 2:
        raise ValueError(f"x must be a float tensor (..., T, d); got {type(x).__name__} {getattr(x, 'shape', '')}")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x's last dim d={d} is odd; RoPE rotates pairs of dimensions, so d must be even")
    if not base > 1:
        raise ValueError(f"base={base!r} is not allowed; it must be a number > 1")
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]  # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2) each
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rotated = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)  # (..., T, d/2, 2)
    return rotated.flatten(-2)  # (..., T, d): pairs back in place, interleaved


class RotarySelfAttention(MultiHeadSelfAttention):
    """:class:`MultiHeadSelfAttention` whose queries and keys are rotated by :func:`rope_torch` per head.

    The same parameters (W_q, W_k, W_v, W_o) in the same order; values are not rotated.
    ``forward(x (B, T, d_model), mask) -> (output (B, T, d_model), weights (B, H, T, T))``.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__(d_model, n_heads)
        if self.d_k % 2:
            raise ValueError(f"RoPE needs an even head width; d_model={d_model} / n_heads={n_heads} = {self.d_k}")

    def _rotate(self, t: torch.Tensor) -> torch.Tensor:
        return rope_torch(t)  # (B, H, T, d_k), rotated by each token's position
