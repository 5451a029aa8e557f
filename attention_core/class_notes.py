"""The class-notes example A A B A: one purposeful head against two random (untrained) heads.

Tokens A = [1, 0] and B = [0, 1] (d_model = 2). The purposeful head uses the class-notes matrices
(:func:`attention_core.inputs.class_notes_weights`: every query "looks for B", keys boosted by 10);
the two random heads split d_model = 2 into d_k = 1 each with seeded random W_q, W_k, W_v, W_o.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int, check_temperature
from .attention import multi_head_attention, scaled_dot_product_attention
from .inputs import class_notes_weights, one_hot_embeddings, position_labels, random_projection_weights

CLASS_NOTES_TOKENS = ("A", "A", "B", "A")


@dataclass(frozen=True)
class HeadsDemo:
    """One purposeful head and two random heads on A A B A."""

    labels: list[str]  # (T,) = A1 A2 B3 A4
    E: np.ndarray  # (T, 2) one-hot embeddings
    purposeful_weights: np.ndarray  # (T, T) the head looking for B
    purposeful_output: np.ndarray  # (T, 2) its output (values = embeddings, no W_o)
    random_weights: np.ndarray  # (2, T, T) the two random heads, d_k = 1 each
    random_output: np.ndarray  # (T, 2) concat of the random heads @ a random W_o

    @property
    def focus_on_b(self) -> float:
        """Mean weight the purposeful head puts on B3 (the token every query looks for)."""
        return float(self.purposeful_weights[:, CLASS_NOTES_TOKENS.index("B")].mean())


def purposeful_vs_random_heads(scaled: bool = True, temperature: float = 1.0, seed: int = 0) -> HeadsDemo:
    """Attend over A A B A with the class-notes head and with two seeded random heads.

    Reference::

        E = one_hot("A A B A")                                       # (4, 2)
        Z1, A1 = attention(E @ W_q, E @ W_k, E @ W_v)               # (4, 2), (4, 4)
        Z2, A2 = multi_head_attention(E, *random W (2 x 2), H=2)     # (4, 2), (2, 4, 4)

    Args:
        scaled, temperature: as in :func:`attention_core.scaled_dot_product_attention`.
        seed: seeds the random heads' W_q, W_k, W_v, W_o (>= 0).
    """
    t = check_temperature(temperature)
    seed = check_positive_int("seed", seed, low=0)
    E, _ = one_hot_embeddings(list(CLASS_NOTES_TOKENS))  # (4, 2)
    w_q, w_k, w_v = class_notes_weights()
    z1, a1 = scaled_dot_product_attention(E @ w_q, E @ w_k, E @ w_v, scaled=scaled, temperature=t)  # (4, 2), (4, 4)
    rand = random_projection_weights(2, seed=seed)
    z2, a2 = multi_head_attention(E, *rand, n_heads=2, scaled=scaled, temperature=t)  # (4, 2), (2, 4, 4)
    return HeadsDemo(position_labels(list(CLASS_NOTES_TOKENS)), E, a1, z1, a2, z2)
