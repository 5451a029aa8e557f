"""The shuffle experiment: self-attention without positions cannot tell word order apart.

Without positional encoding, attention is permutation-equivariant: shuffling the input rows
shuffles the output rows the same way and changes nothing else. Adding the (unshuffled) positional
encoding to the shuffled tokens breaks that symmetry.
"""

from __future__ import annotations

import numpy as np

from .attention import multi_head_attention
from .positional import sinusoidal_positional_encoding


def shuffle_experiment(x, w_q, w_k, w_v, w_o, n_heads: int, perm, positional: bool, scaled: bool = True,
                       temperature: float = 1.0) -> dict:
    """Attend over ``x`` and over ``x[perm]``, un-shuffle the second output, and compare.

    Args:
        x: ``(T, d_model)`` token embeddings (without positions).
        perm: a permutation of range(T); row i of the shuffled input is token ``perm[i]``.
        positional: add the sinusoidal encoding of the *positions* (0..T-1) to both inputs.

    Returns:
        dict with ``output`` (T, d_model), ``shuffled_output`` un-shuffled back to token order, and
        ``max_diff``, the largest absolute difference between the two (0 up to float rounding
        without positions). Computed in float64.
    """
    x = np.asarray(x, dtype=np.float64)
    perm = np.asarray(perm)
    T, d_model = x.shape
    if sorted(perm.tolist()) != list(range(T)):
        raise ValueError(f"perm must be a permutation of 0..{T - 1}; got {perm.tolist()[:10]}")
    pe = sinusoidal_positional_encoding(T, d_model).astype(np.float64) if positional else 0.0
    ws = [np.asarray(w, dtype=np.float64) for w in (w_q, w_k, w_v, w_o)]
    out, _ = multi_head_attention(x + pe, *ws, n_heads=n_heads, scaled=scaled, temperature=temperature)
    out_s, _ = multi_head_attention(x[perm] + pe, *ws, n_heads=n_heads, scaled=scaled, temperature=temperature)
    back = np.empty_like(out_s)
    back[perm] = out_s  # row i of out_s belongs to token perm[i]
    return {"output": out, "shuffled_output": back, "max_diff": float(np.abs(back - out).max())}
