"""The sentences of the Softmax saturation page, computed from the measured points (attention_core/sweep.py) and
from the thresholds behind the app's words (attention_core/readout.py, attention_core/saturation.py).

The page teaches without calculus first: :func:`words_sentence` and :func:`thresholds_sentence` define the words
where they first appear, :func:`setting_sentence` says how peaked the rows are at the user's setting and at the
other scaling. The gradient has its own sentence (:func:`gradient_sentence`) for the part a reader opens.
"""

from __future__ import annotations

import math

from attention_core.readout import sharpness, sharpness_bands
from attention_core.saturation import NEAR_ONE_HOT
from attention_core.sweep import SaturationPoint
from ui.glossary import defined, position
from ui.text import fmt


def _g(x: float) -> str:
    """3 significant digits; an exact 0 reads as 0."""
    return "0" if x == 0 else f"{x:.3g}"


def words_sentence(T: int) -> str:
    """The measures the charts plot, defined (ui.glossary), with the numbers they take for T keys."""
    line = defined("max_weight", "entropy", "effective_tokens", "near_one_hot_share")
    if T == 1:
        return line + " With a single key every one of them is fixed: weight 1, entropy 0, 1 effective token."
    return (
        line + f" Here, with T = {T} keys: a uniform row has largest weight 1/{T} = {fmt(1 / T)}, entropy "
        f"ln {T} = {fmt(math.log(T))} nats and {T} effective tokens; a one-hot row has 1, 0 nats and 1."
    )


def thresholds_sentence(T: int) -> str:
    """The sharpness words with their thresholds in r and in the mean largest weight for T keys."""
    if T == 1:
        return (
            "With a single key every row gives it weight 1, whatever the scores: there is nothing to sharpen, so the "
            "words nearly uniform, soft, peaked and sharp do not apply (the app says **single key**)."
        )
    u = 1.0 / T
    bands = sharpness_bands(u)
    parts = [
        f"**{word}** from r = {r_lo:g} (m from {fmt(m_lo)})" if word == "sharp" else
        f"**{word}** below r = {r_hi:g} (m below {fmt(m_hi)})"
        for word, r_lo, r_hi, m_lo, m_hi in bands
    ]  # fmt: skip
    return (
        f"**How peaked, in words.** With T = {T} keys a uniform row gives every key {fmt(u)} and a one-hot row gives "
        f"one key 1. Where the mean largest weight m sits between the two is r = (m − {fmt(u)}) / (1 − {fmt(u)}): 0 "
        "for uniform rows, 1 for one-hot rows. The app calls rows " + ", ".join(parts[:-1]) + " and " + parts[-1] + "."
    )


def _describe(p: SaturationPoint) -> tuple[str, str]:
    """(the sharpness word, its numbers) of a point."""
    u = 1.0 / p.seq_len
    word = sharpness(p.max_weight.mean, u)
    r = position(p.max_weight.mean, u)
    return word, (
        f"mean largest weight {_g(p.max_weight.mean)} (r = {_g(r)}), {_g(p.effective_tokens.mean)} effective tokens "
        f"of {p.seq_len}, and {p.near_one_hot_share.mean:.0%} of rows put over {NEAR_ONE_HOT:.0%} of their weight on "
        "one key"
    )


def _check_twins(now: SaturationPoint, other: SaturationPoint) -> None:
    if (now.d_k, now.seq_len, now.temperature) != (other.d_k, other.seq_len, other.temperature) or (
        now.scaled == other.scaled
    ):
        raise ValueError("now and other must share d_k, seq_len and temperature and differ in scaled")


def setting_sentence(now: SaturationPoint, other: SaturationPoint) -> str:
    """How peaked the rows are with the current scaling choice ``now`` at its d_k, against the other choice
    ``other`` (same d_k, seq_len and temperature)."""
    _check_twins(now, other)
    if now.seq_len == 1:
        return (
            "With a single key every row puts all its weight (1) on it: there is nothing to choose, so scaling "
            "changes nothing."
        )
    mode = "scaled by 1/√d_k" if now.scaled else "unscaled"
    word, numbers = _describe(now)
    head = f"Your setting, {mode} at d_k = {now.d_k}: rows are **{word}**, with {numbers}."
    if now.d_k == 1:
        return (
            head
            + " At d_k = 1, √d_k = 1, so scaling changes nothing; raise d_model or lower the heads to see it matter."
        )
    switch = "Turning scaling off" if now.scaled else "Turning scaling on"
    word2, numbers2 = _describe(other)
    return head + f" {switch} would make them **{word2}**: {numbers2}."


def gradient_sentence(now: SaturationPoint, other: SaturationPoint) -> str:
    """How long the gradient reaching the scores is with ``now``, and how the other scaling would change it."""
    _check_twins(now, other)
    if now.seq_len == 1:
        return "With a single key the weight is 1 whatever the score, so no gradient reaches it: ‖∂L/∂logits‖ = 0."
    g_now, g_other = now.grad_norm.mean, other.grad_norm.mean
    mode = "scaled by 1/√d_k" if now.scaled else "unscaled"
    head = f"Your setting, {mode} at d_k = {now.d_k}: the gradient reaching a row's scores has mean length {_g(g_now)}."
    if now.d_k == 1:
        return head + " At d_k = 1 scaling changes nothing, so the other choice gives the same."
    switch = "Turning scaling off" if now.scaled else "Turning scaling on"
    if g_now > 0 and g_other > 0:
        ratio = g_other / g_now
        change = f"{_g(ratio)} times larger" if ratio >= 1 else f"{_g(1 / ratio)} times smaller"
        return head + f" {switch} would make it {change} ({_g(g_other)})."
    return head + f" {switch} would make it {_g(g_other)}."
