"""The words the pages use for how attention looks, each defined once, with the thresholds attention_core uses.

A page defines a word where it first uses it: as the tooltip of a metric (``help=TERMS[...]``), or in a line of
:func:`defined` under the sentence that uses it. The sharpness words are a scale with thresholds
(attention_core/readout.py); :func:`scale_sentence` states them with the numbers of the constants, so a changed
threshold changes what the page says.
"""

from __future__ import annotations

from attention_core.readout import NEARLY_UNIFORM_BELOW, PEAKED_FROM, SHARP_FROM
from attention_core.saturation import NEAR_ONE_HOT

TERMS = {
    "max_weight": "A row's largest weight: 1 when one key takes all of it, 1/T when all T keys share it equally. "
    "The mean max weight averages it over the rows.",
    "entropy": "How spread a row is, in nats (the unit of the natural logarithm ln): 0 when one key takes all the "
    "weight, ln T when T keys share it equally.",
    "normalized_entropy": "The entropy divided by its largest possible value ln T: 0 one-hot, 1 uniform.",
    "effective_tokens": "e^entropy: how many keys a row really spreads its weight over, from 1 (one key) to T (all).",
    "near_one_hot_share": f"The share of rows whose largest weight is above {NEAR_ONE_HOT}: rows that have in effect "
    "picked a single key.",
    "jacobian_norm": "How much a row's weights move when its scores move (the size of the softmax's derivative). "
    "A one-hot row has 0: no learning signal flows back to its scores.",
    "twin": "The same setting with the scaling flipped (on ↔ off): everything else, the input and the weights, is equal.",
    "logits": "The numbers the softmax receives: the scores q·k divided by s·τ (s = √d_k when scaling is on, τ the "
    "temperature).",
    "relative_change": "‖Z − X‖ / ‖X‖: the size of the change from X to Z, measured against the size of X "
    "(Frobenius norm: the square root of the sum of the squared entries). 0% means Z = X; 100% means the change "
    "is as large as X itself.",
    "W_o": "The output projection (d_model x d_model): it mixes the heads' outputs, side by side, into one vector of "
    "d_model numbers per token.",
    "d_k": "The length of each query and key vector of a head: d_model / heads.",
    "js_divergence": "The Jensen-Shannon divergence (JS) of two heads: how differently they spread a query's weight "
    "over the keys, averaged over the queries; 0 bits when they attend identically, 1 bit when they never look at the "
    "same keys.",
}

MEANINGS = {  # what each sharpness word says about the rows
    "single key": "every row has a single key it may attend to, so its weight is 1 whatever the scores",
    "nearly uniform": "every row spreads its weight almost evenly over its keys",
    "soft": "rows spread their weight over several keys, a little unevenly",
    "peaked": "one key clearly takes more than its share",
    "sharp": "rows are close to one-hot: nearly all the weight on one key",
}


def scale_sentence() -> str:
    """The sharpness words with their thresholds (from attention_core.readout)."""
    return (
        "How sharp rows are, in words: with r = (mean max weight − uniform) / (1 − uniform), which is 0 for uniform "
        f"rows and 1 for one-hot rows, they are **nearly uniform** below r = {NEARLY_UNIFORM_BELOW:g}, **soft** below "
        f"{PEAKED_FROM:g}, **peaked** below {SHARP_FROM:g} and **sharp** from {SHARP_FROM:g} on."
    )


def position(max_weight: float, uniform: float) -> float:
    """r: where a mean max weight lies between uniform rows (0) and one-hot rows (1)."""
    return 0.0 if uniform >= 1 else (max_weight - uniform) / (1 - uniform)


def defined(*keys: str) -> str:
    """A line that defines the terms ``keys`` (keys of TERMS), for under the sentence that first uses them."""
    names = {
        "max_weight": "max weight",
        "entropy": "entropy",
        "normalized_entropy": "entropy / log T",
        "effective_tokens": "effective tokens",
        "near_one_hot_share": "near-one-hot rows",
        "jacobian_norm": "‖softmax Jacobian‖",
        "twin": "twin",
        "logits": "logits",
        "relative_change": "relative change",
        "W_o": "W_o",
        "d_k": "d_k",
        "js_divergence": "Jensen-Shannon divergence",
    }
    return " ".join(f"**{names[k]}**: {TERMS[k]}" for k in keys)
