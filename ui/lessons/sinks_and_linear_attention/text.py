"""The sentences of the Sinks and linear attention page, computed for the setting on screen: how a sum of weights
near 1 is written, and the page's check questions, so that pages/Sinks_and_linear_attention.py reads as its lesson.
"""

from __future__ import annotations

import numpy as np

from attention_core.sinks_linear_views import LinearView
from ui.skeleton.lesson import Question
from ui.text import head_name


def share(v: float) -> str:
    """A sum of weights near 1 as "1 − 2.3e-09", so that it does not round to 1.0000 on screen."""
    return f"{v:.4f}" if 1 - v >= 5e-5 else f"1 − {1 - v:.1e}" if v < 1 else "1 (to float rounding)"


def check_questions(
    hungriest: int,
    sinks: tuple[float, ...],
    no_sink: bool,
    mean_sum: np.ndarray,
    n_sink: int,
    window: int,
    kept: list[int],
    lin: LinearView,
    T: int,
) -> list[Question]:
    """What to predict: the hungriest head's weight on real tokens, the window's keys, linear attention's state."""
    return [
        Question(
            f"How much of its weight does {head_name(hungriest)} leave on the real tokens, on average over its rows?",
            (
                f"{share(mean_sum[hungriest])}: its sink logit s = {sinks[hungriest]:g} is the highest, so its sink "
                "takes the most."
                if not no_sink
                else f"All of it ({mean_sum[hungriest]:.4f} with fully masked rows counted as 0): with no sink the "
                "softmax spends the whole weight on the real tokens."
            ),
        ),
        Question(
            f"With n_sink = {n_sink} and w = {window}, how many keys can any query keep, and how many does the last "
            f"query keep of {T}?",
            f"At most n_sink + w = {n_sink + window}; the last query keeps {len(kept)} of {T}, so the key/value cache "
            f"stays at {min(T, n_sink + window)} entries.",
        ),
        Question(
            f"How many numbers does linear attention keep per head at T = {T}, and softmax attention's weights?",
            f"{lin.state_numbers:,} (S of {lin.d_k} × {lin.d_v} plus z of {lin.d_k}), whatever T is; the weights "
            f"hold T² = {T * T:,}.",
        ),
    ]
