"""The sentences of the Real model page, computed for the sentence and model on screen: each function is named for
what it says, so that pages/Real_model.py reads as its lesson (the sentence, the views, the parity).

Every number comes through :func:`ui.text.fmt`; tokens are escaped (:func:`ui.text.md_escape`).
"""

from __future__ import annotations

import numpy as np

from attention_core.model_views import TOKEN_LIMITS, NeuronView
from ui.text import fmt, head_name, md_escape


def truncation_note(sentence_tokens: int, max_tokens: int) -> str:
    """When the sentence has more tokens than the model read: how many it has, how many were read, and how to read
    more (up to the largest of ``TOKEN_LIMITS``)."""
    return (
        f"The sentence has {sentence_tokens} tokens; the model reads the first {max_tokens} "
        "(special tokens included) and the rest is cut. "
        + (
            f"Raise 'Read at most' to read more (up to {TOKEN_LIMITS[-1]})."
            if max_tokens < TOKEN_LIMITS[-1]
            else f"{TOKEN_LIMITS[-1]} is the most the page reads (the embedded model's longest input)."
        )
    )


def check_questions(
    tokens: list[str],
    W: np.ndarray,
    picked: tuple[int, int],
    looked: tuple[int, int],
    neuron: tuple[NeuronView | None, int, int],
    scale: float,
    L: int,
    H: int,
) -> list[tuple[str, str]]:
    """The page's check questions: where the head view's query looks most, how the neuron view's weight is made from
    q and k (when it was drawn), and how many maps the model view draws.

    Args:
        tokens: the tokens as the page shows them; W: the picked head's weights, (T, T).
        picked: ``(layer, head)``, 0-based; looked: ``(query row, its strongest key)`` as the head view names them.
        neuron: ``(view or None, query, key)`` as the neuron view returned them; scale: the model's 1/√d_k.
        L, H: the model's layers and heads.
    """
    (layer, head), (row, top), (nv, qi, kj) = picked, looked, neuron
    T = len(tokens)
    questions = [
        (
            f"In layer {layer + 1}, {head_name(head)}, which key does query {md_escape(tokens[row])} (#{row + 1}) "
            "look at most, and with what weight?",
            f"**{md_escape(tokens[top])}** (#{top + 1}), weight {fmt(float(W[row, top]))}.",
        )
    ]
    if nv is not None:
        questions.append(
            (
                f"How is the weight from query “{md_escape(tokens[qi])}” to key “{md_escape(tokens[kj])}” made "
                "from q and k?",
                f"q · k = {fmt(nv.dot)}; times the scale {fmt(scale)} gives the logit {fmt(nv.logit)}; the "
                f"softmax over the row's {nv.visible} visible keys turns it into {fmt(nv.weight)}.",
            )
        )
    questions.append(
        (
            "How many attention maps does the model view draw?",
            f"{L} layer{'s' if L != 1 else ''} x {H} head{'s' if H != 1 else ''} = {L * H} maps, each {T} x {T}.",
        )
    )
    return questions
