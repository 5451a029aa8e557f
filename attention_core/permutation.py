"""The shuffle experiment: self-attention without positions cannot tell word order apart.

Without positional encoding, attention is permutation-equivariant: shuffling the input rows
shuffles the output rows the same way and changes nothing else. Adding the (unshuffled) positional
encoding to the shuffled tokens breaks that symmetry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import multi_head_attention
from .positional import sinusoidal_positional_encoding


@dataclass(frozen=True)
class ShuffleResult:
    """Attention over a sequence and over its shuffle, compared token by token."""

    perm: np.ndarray  # (T,) row i of the shuffled input is token perm[i]
    output: np.ndarray  # (T, d_model) attention output for the original order
    shuffled_output: np.ndarray  # (T, d_model) output for the shuffled order, put back in the original order
    max_diff: float  # max |shuffled_output - output|: 0 up to float rounding without positions

    @property
    def moved(self) -> bool:
        """Whether the shuffle moved any token (a permutation can be the identity)."""
        return bool((self.perm != np.arange(len(self.perm))).any())


def shuffle_experiment(
    x, w_q, w_k, w_v, w_o, n_heads: int, perm, positional: bool, scaled: bool = True, temperature: float = 1.0
) -> ShuffleResult:
    """Attend over ``x`` and over ``x[perm]``, un-shuffle the second output, and compare.

    Reference::

        out = MHA(x + pe)                       # (T, d_model)
        out_s = MHA(x[perm] + pe)               # (T, d_model), row i is token perm[i]
        back[perm] = out_s                      # back in token order
        max_diff = max |back - out|             # 0 without pe: attention is permutation-equivariant

    Args:
        x: ``(T, d_model)`` token embeddings (without positions).
        w_q, w_k, w_v, w_o: ``(d_model, d_model)`` each; n_heads: H, divides d_model.
        perm: a permutation of range(T); row i of the shuffled input is token ``perm[i]``.
        positional: add the sinusoidal encoding of the *positions* (0..T-1) to both inputs.
        scaled, temperature: as in :func:`attention_core.multi_head_attention`.

    Returns:
        :class:`ShuffleResult`, computed in float64.
    """
    x = np.asarray(x, dtype=np.float64)
    perm = np.asarray(perm)
    T, d_model = x.shape
    if perm.shape != (T,) or sorted(perm.tolist()) != list(range(T)):
        raise ValueError(f"perm must be a permutation of 0..{T - 1}; got {perm.tolist()[:10]}")
    pe = sinusoidal_positional_encoding(T, d_model).astype(np.float64) if positional else 0.0  # (T, d_model)
    ws = [np.asarray(w, dtype=np.float64) for w in (w_q, w_k, w_v, w_o)]
    out, _ = multi_head_attention(x + pe, *ws, n_heads=n_heads, scaled=scaled, temperature=temperature)
    out_s, _ = multi_head_attention(x[perm] + pe, *ws, n_heads=n_heads, scaled=scaled, temperature=temperature)
    back = np.empty_like(out_s)  # (T, d_model)
    back[perm] = out_s  # row i of out_s belongs to token perm[i]
    return ShuffleResult(perm, out, back, float(np.abs(back - out).max()))
