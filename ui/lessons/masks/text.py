"""The sentences of the Masks page, computed from its mask lab (attention_core/mask_demo.py) for the setting on
screen: each function is named for what it says, so that pages/Masks.py reads as its lesson (the prediction, the
three masks, why padded keys get zero weight, the fully masked row).

Every number comes from the lab, through :func:`ui.text.fmt`; typed tokens are escaped (:func:`ui.text.md_escape`).
"""

from __future__ import annotations

import numpy as np

from attention_core.mask_demo import MaskedRun, MaskLab
from ui.text import fmt, head_name, md_escape

NO_PADDING_NOTICE = (
    "The pad count in the sidebar is 0, so the padding mask blocks nothing yet: raise it to pad the last keys."
)


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an s unless ``n`` is 1."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def token_names(tokens: list[str], idx, limit: int = 6) -> str:
    """The tokens at ``idx`` (escaped), the first ``limit`` of them and how many more."""
    shown = ", ".join(md_escape(tokens[i]) for i in idx[:limit])
    return shown + (f" and {len(idx) - limit} more" if len(idx) > limit else "")


def causal_prediction(last: str, T: int) -> tuple[str, str]:
    """(the question, its reveal) when nothing is padded: which keys may the last query ``last`` see?"""
    return (
        f"Under the causal mask, which keys may the last query, **{md_escape(last)}**, attend to?",
        f"A causal mask blocks the keys after a query; the last query has none after it, so it sees all {T}.",
    )


def padding_prediction(first: str, pad: int, largest: float) -> tuple[str, str]:
    """(the question, its reveal): how much weight does query ``first`` give a padded key? Exactly 0, e^−∞ = 0;
    ``largest`` is the largest weight on a padded key."""
    return (
        f"The padding mask treats the last {plural(pad, 'key')} as padding. How much of its weight will query "
        f"**{md_escape(first)}** give to a padded key?",
        f"Exactly 0: a padded key's score is set to −∞ before the softmax and e^−∞ = 0 (here the largest weight on a "
        f"padded key is {largest:.3g}).",
    )


def pad_count_notice(pad_count: int, T: int) -> str:
    """When the sidebar's pad count is more than the T tokens: T is used, and every key is padding."""
    return f"The pad count {pad_count} is more than the {plural(T, 'token')}; using {T}: every key is padding."


def scores_caption(lim: float) -> str:
    """Under the masks: blank cells are blocked, each map's colours (the scores on ±``lim``), untrained weights."""
    return (
        f"Blank cells are blocked. Each map states its colour range under its key axis: the mask is yellow where a "
        f"query may attend, the scores run from blue (−{fmt(lim)}) through white (0) to red (+{fmt(lim)}), the weights "
        "from purple (low) to yellow (high). The input and W_q, W_k, W_v are seeded random, untrained: the pattern "
        "inside the allowed cells means nothing here; which cells are blank is the lesson."
    )


def live_maps_caption(head: int) -> str:
    """Under the live maps: head ``head``'s weights under the three masks follow the controls; below, each mask."""
    return (
        f"Above, {head_name(head)}'s weights under the three masks, drawn by your browser on one colour scale "
        "(grey hatched cells are blocked); they follow the temperature, the scaling and the pad count while you "
        "drag. Below, each mask and the scores it blocks."
    )


def mask_sentence(r: MaskedRun, lab: MaskLab, tokens: list[str]) -> str:
    """What the mask ``r`` did (blocked cells, rows with no allowed key, row sums), true for every pad count and
    T."""
    T, pad = lab.T, lab.pad
    if r.n_blocked == 0:
        why = "with a pad count of 0" if "padding" in r.name and pad == 0 else "the only query sees its own key"
        return f"No cell is blocked ({why}), so these are the weights of plain attention; every row sums to 1."
    empty = r.empty_rows
    out = f"{r.n_blocked} of {plural(T * T, 'cell')} {'is' if r.n_blocked == 1 else 'are'} blocked, and each of them gets weight exactly {fmt(r.max_blocked_weight)}. "
    if len(empty) == T:
        return out + (
            "No query has an allowed key, so every row's weights and outputs are 0 "
            f"(largest |output| {fmt(r.largest_output)}), not NaN."
        )
    if len(empty):
        out += (
            f"{plural(len(empty), 'row')} ({token_names(tokens, empty)}) {'has' if len(empty) == 1 else 'have'} no "
            f"allowed key: {'its' if len(empty) == 1 else 'their'} weights and outputs are 0. "
        )
    dev = r.row_sum_error
    return out + ("Every row with an allowed key sums to 1" + ("." if dev < 1e-5 else f" (up to {dev:.1e})."))


def _real_share(lab: MaskLab, row: int) -> float:
    """The weight query ``row`` puts on the real (unpadded) keys under the padding mask."""
    return float(lab.run("padding").weights[row, : lab.T - lab.pad].sum())


def padded_keys_caption(lab: MaskLab, tokens: list[str], row: int) -> str:
    """Under the padding table: the padded keys get e^−∞ = 0 and the real keys share the whole weight of query
    ``row`` (or that no key, or every key, is padded)."""
    T, pad = lab.T, lab.pad
    if pad == 0:
        return (
            "No key is padded (pad count 0), so every key keeps its share of the weight; raise the pad count in "
            "the sidebar to see padded keys drop to exactly 0."
        )
    if pad == T:
        return (
            "Every key is padded: every numerator is e^−∞ = 0, so this query has nothing to attend to and "
            "attention_core gives it weights of 0 and a zero output (not NaN)."
        )
    return (
        f"The padded {'key' if pad == 1 else 'keys'} ({'the last one' if pad == 1 else f'the last {pad}'}: "
        f"{token_names(tokens, np.arange(T - pad, T))}) {'has' if pad == 1 else 'have'} e^−∞ = 0 in the numerator, so "
        f"{'its' if pad == 1 else 'their'} weight is 0 whatever the score; the {plural(T - pad, 'real key')} "
        f"share the whole weight: {fmt(_real_share(lab, row))}."
    )


def _textbook_nans(lab: MaskLab) -> int:
    """How many NaN the textbook softmax returns in the fully masked row."""
    return int(np.isnan(lab.textbook[0]).sum())


def fully_masked_row(lab: MaskLab, first: str) -> str:
    """Query ``first``'s row with every key blocked: the textbook softmax's NaN against attention_core's zeros,
    and whether the other rows are the causal weights."""
    nan_count = _textbook_nans(lab)
    bad = int(np.isnan(lab.full_weights).sum() + np.isnan(lab.full_output).sum())
    same = bool(np.array_equal(lab.full_weights[1:], lab.run("causal").weights[1:]))
    return (
        f"Block every key for query **{md_escape(first)}** (row 1). A textbook softmax computes "
        f"−∞ − (−∞) = NaN (not a number) in that row and returns **{nan_count} NaN** "
        f"{'weight' if nan_count == 1 else 'weights'}, which would then poison everything computed from them. "
        f"attention_core (this app's own attention code) gives that row weights of exactly 0 (sum "
        f"{fmt(float(lab.full_weights[0].sum()))}) and a zero output (largest |z| = "
        f"{fmt(float(np.abs(lab.full_output[0]).max()))}), with {bad} NaN anywhere"
        + ("; the other rows are the causal weights, unchanged." if lab.T > 1 and same else ".")
    )


def check_questions(lab: MaskLab, tokens: list[str], row: int) -> list[tuple[str, str]]:
    """The page's check questions: the causal mask's blocked cells, query ``row``'s weight on the padded and the
    real keys, and the fully masked row."""
    T, pad = lab.T, lab.pad
    causal, padding = lab.run("causal"), lab.run("padding")
    real = _real_share(lab, row)
    return [
        (
            f"Under the causal mask with T = {T}, how many of the {plural(T * T, 'cell')} are blocked, and what weight do they "
            "get?",
            f"{causal.n_blocked} = T(T − 1)/2 cells (query i may see keys 1 .. i only); each gets weight exactly "
            f"{fmt(causal.max_blocked_weight)}.",
        ),
        (
            f"With {plural(pad, 'padded key')}, how much of query {md_escape(tokens[row])}'s weight lands on the "
            "padded keys, and how much "
            "on the real ones?",
            (
                f"None is padded (pad count 0): all of it, {fmt(real)}, stays on the {plural(T, 'real key')}."
                if pad == 0
                else f"{fmt(float(padding.weights[row, T - pad :].sum()))} on padded keys and {fmt(real)} on the "
                f"{plural(T - pad, 'real key')}"
                + (": every key is padded, so the whole row is 0." if pad == T else ".")
            ),
        ),
        (
            "What does a textbook softmax return for a row whose keys are all blocked, and what does attention_core "
            "return?",
            f"The textbook softmax returns {_textbook_nans(lab)} NaN; attention_core returns {plural(T, 'weight')} of "
            f"0 (sum {fmt(float(lab.full_weights[0].sum()))}) and a zero output.",
        ),
    ]
