"""Masks: causal, padding and both; masked scores left blank; the fully masked row."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from attention_core.mask_demo import mask_lab, masked_numerators, textbook_softmax
from ui.charts import Axes, show_heatmap, show_mask, show_weights, stretching, weight_scale
from ui.classroom import Prediction, predict
from ui.compute import cached_mask_lab, cached_run
from ui.controls import LEAF_CONTROLS, SHARED
from ui.lesson import Question
from ui.live import Panel, live_maps, live_on, live_sync, live_toggle, release_into, setting_of
from ui.page import Page
from ui.partial import rerun_body
from ui.tables import show_table
from ui.text import fmt, md_escape
from ui.widgets import index_picker

page = Page(
    __file__,
    "A mask decides which keys a query may see. Blocked scores are set to −∞ before the softmax, so "
    "e^−∞ = 0 and they get exactly zero weight while the allowed keys share all of it. "
    "**Causal** masks hide the future (a decoder must not peek at the next word); **padding** masks hide "
    "the filler tokens that make the sequences of a batch (sequences processed together) equally long.",
)
st.latex(
    r"\alpha = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big),\qquad "
    r"M_{ij} = \begin{cases} 0 & \text{key } j \text{ allowed for query } i \\ -\infty & \text{blocked}\end{cases}"
)


MASK_TITLES = {"causal": "causal", "padding": "padding", "causal+padding": "causal + padding"}  # the live panels


def _padding_question(cfg, head: int, tokens: list[str]) -> Prediction:
    """How much weight does a padded key get? Reasoned from the formula: its score is set to −∞, and e^−∞ = 0."""
    lab = cached_mask_lab(cfg, head)
    pad, T = lab.pad, lab.T
    if pad == 0:
        return Prediction(
            "masks.causal",
            f"Under the causal mask, which keys may the last query, **{md_escape(tokens[-1])}**, attend to?",
            ("every key up to itself", "only itself", "only the keys after it"),
            0,
            f"A causal mask blocks the keys after a query; the last query has none after it, so it sees all {T}.",
            signature=(cfg, head, "causal"),
        )
    padded = lab.run("padding")
    return Prediction(
        "masks.padding",
        f"The padding mask treats the last {plural(pad, 'key')} as padding. How much of its weight will query "
        f"**{md_escape(tokens[0])}** give to a padded key?",
        ("exactly 0", "a little, less than a real key", "as much as a real key"),
        0,
        f"Exactly 0: a padded key's score is set to −∞ before the softmax and e^−∞ = 0 (here the largest weight on a "
        f"padded key is {float(padded.weights[:, T - pad :].max()):.3g}).",
        signature=(cfg, head, "padding"),
    )


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _controls() -> tuple:
    """The full-run part: the sidebar's controls, the head and query pickers, and the places between them."""
    live = live_on()
    cfg = page.whatif(
        show=(
            "input_kind",
            "seq_len",
            "d_model",
            "n_heads",
            "scaled",
            "temperature",
            "pad_count",
            "seed",
            "positional",
        ),
        leaf=LEAF_CONTROLS - {"seed", "positional"} if live else LEAF_CONTROLS,
    )
    head = index_picker("head", [f"head {h + 1}" for h in range(cfg.n_heads)], key="mk_head", on_change=rerun_body)
    run = cached_run(cfg.replace(mask="none"))
    tokens = [str(t) for t in run.tokens]  # no leaf control changes them
    revealed = predict(_padding_question(cfg, head, tokens))
    st.subheader("The weights under each mask")
    live_toggle()
    if live and revealed:
        setting = setting_of(cfg, head, st.session_state.get("mk_query", 0), stretching())
        release = release_into(SHARED, {"head": "mk_head", "query": "mk_query"})
        live_maps(
            "mk_live",
            [Panel(m, run, setting, release, title=MASK_TITLES[m], heads="picked", mask=m) for m in MASK_TITLES],
            shared=("temperature", "scaled", "pad"),
            size=150,
        )
    upper = st.container()
    index_picker("query", tokens, key="mk_query", on_change=rerun_body)
    return upper, st.container(), tokens, revealed


def _draw(upper, lower, tokens: list[str], revealed: bool) -> list[Question]:
    """The mask lab for the sidebar's setting: the mask, the masked scores and weights, the padding check."""
    cfg = page.setting()
    head = st.session_state["mk_head"]
    with upper:
        lab = cached_mask_lab(cfg, head)
        T, pad = lab.T, lab.pad

        def names(idx, limit: int = 6) -> str:
            shown = ", ".join(md_escape(tokens[i]) for i in idx[:limit])
            return shown + (f" and {len(idx) - limit} more" if len(idx) > limit else "")

        if cfg.pad_count > T:
            st.info(
                f"The pad count {cfg.pad_count} is more than the {plural(T, 'token')}; using {T}: every key is padding."
            )
        if pad == 0:
            st.info(
                "The pad count in the sidebar is 0, so the padding mask blocks nothing yet: raise it to pad the last keys."
            )
        lim = float(np.abs(lab.logits).max()) or 1.0
        st.caption(
            f"Blank cells are blocked. Each map states its colour range under its key axis: the mask is yellow where a "
            f"query may attend, the scores run from blue (−{fmt(lim)}) through white (0) to red (+{fmt(lim)}), the weights "
            "from purple (low) to yellow (high). The input and W_q, W_k, W_v are seeded random, untrained: the pattern "
            "inside the allowed cells means nothing here; which cells are blank is the lesson."
        )

        def mask_sentence(r) -> str:
            """What the mask ``r`` did, true for every pad count and T."""
            if r.n_blocked == 0:
                why = "with a pad count of 0" if "padding" in r.name and pad == 0 else "the only query sees its own key"
                return f"No cell is blocked ({why}), so these are the weights of plain attention; every row sums to 1."
            empty = r.empty_rows
            out = (
                f"{r.n_blocked} of {T * T} cells are blocked, and each of them gets weight exactly "
                f"{fmt(r.max_blocked_weight)}. "
            )
            if len(empty) == T:
                return out + (
                    "No query has an allowed key, so every row's weights and outputs are 0 "
                    f"(largest |output| {fmt(r.largest_output)}), not NaN."
                )
            if len(empty):
                out += (
                    f"{plural(len(empty), 'row')} ({names(empty)}) {'has' if len(empty) == 1 else 'have'} no allowed key: "
                    f"{'its' if len(empty) == 1 else 'their'} weights and outputs are 0. "
                )
            dev = r.row_sum_error
            return out + ("Every row with an allowed key sums to 1" + ("." if dev < 1e-5 else f" (up to {dev:.1e})."))

        scale = weight_scale(
            *(r.weights for r in lab.runs), allowed=[r.mask for r in lab.runs], group="masks"
        )  # the masks compare
        live = live_on()
        if live and revealed:
            setting = setting_of(cfg, head, st.session_state.get("mk_query", 0), stretching())
            live_sync("mk_live", dict.fromkeys(MASK_TITLES, setting))
            st.caption(
                f"Above, head {head + 1}'s weights under the three masks, drawn by your browser on one colour scale "
                "(grey hatched cells are blocked); they follow the temperature, the scaling and the pad count while you "
                "drag. Below, each mask and the scores it blocks."
            )
        for r in lab.runs:
            st.subheader(r.name)
            c1, c2, c3 = st.columns(3) if revealed and not live else (*st.columns(2), None)
            show_mask(r.mask, tokens, title="mask (1 = may attend)", container=c1, size=220)
            show_heatmap(
                lab.logits,
                tokens,
                tokens,
                title="masked scores (blank = blocked)",
                axes=Axes(value="score"),
                scheme="diverging",
                domain=(-lim, lim),
                blank=~r.mask,
                container=c2,
                size=220,
                legend=False,
            )
            if c3 is not None:
                show_weights(
                    r.weights,
                    tokens,
                    title="weights",
                    allowed=r.mask,
                    scale=scale,
                    container=c3,
                    size=220,
                    legend=False,
                )
            st.caption(mask_sentence(r) if revealed else "Its weights appear after your prediction.")
        if not revealed:
            return []  # the weights and the padding table answer the prediction: they wait for the reveal
        st.subheader("Why padded keys get zero weight")
    with lower:
        padding = lab.run("padding")
        row = st.session_state["mk_query"]
        num = masked_numerators(lab.logits[row], padding.mask[row])  # (T,)
        show_table(
            st,
            pd.DataFrame(
                {
                    "key": tokens,
                    "score": np.round(lab.logits[row], 4),
                    "masked score": [f"{s:.4f}" if a else "−∞" for a, s in zip(padding.mask[row], lab.logits[row])],
                    "e^(masked score − max)": np.round(num, 6),
                    "weight": np.round(padding.weights[row], 6),
                }
            ),
            hide_index=True,
            column_config={
                "e^(masked score − max)": st.column_config.NumberColumn(
                    help="The softmax's numerator. Subtracting the row's largest score (max) first changes no "
                    "weight (it cancels in the division) and keeps e^x from overflowing."
                )
            },
        )
        real = float(padding.weights[row, : T - pad].sum())
        if pad == 0:
            st.caption(
                "No key is padded (pad count 0), so every key keeps its share of the weight; raise the pad count in "
                "the sidebar to see padded keys drop to exactly 0."
            )
        elif pad == T:
            st.caption(
                "Every key is padded: every numerator is e^−∞ = 0, so this query has nothing to attend to and "
                "attention_core gives it weights of 0 and a zero output (not NaN)."
            )
        else:
            padded_idx = np.arange(T - pad, T)
            st.caption(
                f"The padded {'key' if pad == 1 else 'keys'} ({'the last one' if pad == 1 else f'the last {pad}'}: "
                f"{names(padded_idx)}) {'has' if pad == 1 else 'have'} e^−∞ = 0 in the numerator, so "
                f"{'its' if pad == 1 else 'their'} weight is 0 whatever the score; the {plural(T - pad, 'real key')} "
                f"share the whole weight: {fmt(real)}."
            )

        st.subheader("A fully masked row")
        nan_count = int(np.isnan(lab.textbook[0]).sum())
        bad = int(np.isnan(lab.full_weights).sum() + np.isnan(lab.full_output).sum())
        same = bool(np.array_equal(lab.full_weights[1:], lab.run("causal").weights[1:]))
        st.markdown(
            f"Block every key for query **{md_escape(tokens[0])}** (row 1). A textbook softmax computes "
            f"−∞ − (−∞) = NaN (not a number) in that row and returns **{nan_count} NaN** "
            f"{'weight' if nan_count == 1 else 'weights'}, which would then poison everything computed from them. "
            f"attention_core (this app's own attention code) gives that row weights of exactly 0 (sum "
            f"{fmt(float(lab.full_weights[0].sum()))}) and a zero output (largest |z| = "
            f"{fmt(float(np.abs(lab.full_output[0]).max()))}), with {bad} NaN anywhere"
            + ("; the other rows are the causal weights, unchanged." if T > 1 and same else ".")
        )

        causal = lab.run("causal")
        return [
            (
                f"Under the causal mask with T = {T}, how many of the {T * T} cells are blocked, and what weight do they "
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
                f"The textbook softmax returns {nan_count} NaN; attention_core returns {plural(T, 'weight')} of 0 (sum "
                f"{fmt(float(lab.full_weights[0].sum()))}) and a zero output.",
            ),
        ]


page.run(
    _draw,
    _controls,
    code=(
        mask_lab,
        textbook_softmax,
        masked_numerators,
        scaled_dot_product_attention,
        causal_mask,
        padding_mask,
        combine_masks,
    ),
)
