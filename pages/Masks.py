"""Masks: causal, padding and both; masked scores left blank; the fully masked row."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from attention_core.mask_demo import mask_lab, masked_numerators, textbook_softmax
from ui.classroom.mode import Prediction, predict
from ui.compute import cached_mask_lab, cached_run
from ui.draw.charts import Axes, show_heatmap, show_mask, show_weights, stretching, weight_scale
from ui.draw.tables import show_table
from ui.lessons.masks.text import (
    NO_PADDING_NOTICE,
    causal_prediction,
    check_questions,
    fully_masked_row,
    live_maps_caption,
    mask_sentence,
    pad_count_notice,
    padded_keys_caption,
    padding_prediction,
    scores_caption,
)
from ui.live import Panel, live_maps, live_on, live_sync, live_toggle, release_into, setting_of
from ui.session.partial import rerun_body
from ui.skeleton.controls import LEAF_CONTROLS, SHARED
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker, index_picker

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
        question, reveal = causal_prediction(tokens[-1], T)
        choices = ("every key up to itself", "only itself", "only the keys after it")
        return Prediction("masks.causal", question, choices, 0, reveal, signature=(cfg, head, "causal"))
    padded = lab.run("padding")
    question, reveal = padding_prediction(tokens[0], pad, float(padded.weights[:, T - pad :].max()))
    choices = ("exactly 0", "a little, less than a real key", "as much as a real key")
    return Prediction("masks.padding", question, choices, 0, reveal, signature=(cfg, head, "padding"))


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
        later=("positional",),  # taught on a later page: closed, explained in passing
    )
    head = head_picker("head", cfg.n_heads, key="mk_head", on_change=rerun_body)
    run = cached_run(cfg.replace(mask="none"))
    tokens = [str(t) for t in run.tokens]  # no leaf control changes them
    revealed = predict(_padding_question(cfg, head, tokens))
    # before the reveal the masks and their scores are drawn, not the weights (nor the switch of their live maps)
    st.subheader("The weights under each mask" if revealed else "Each mask and its scores")
    if revealed:
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
        _mask_maps(cfg, lab, head, tokens, revealed)
        if not revealed:
            return []  # the weights and the padding table answer the prediction: they wait for the reveal
        st.subheader("Why padded keys get zero weight")
    with lower:
        row = st.session_state["mk_query"]
        _padding_table(lab, tokens, row)
        st.subheader("A fully masked row")
        st.markdown(fully_masked_row(lab, tokens[0]))
        return check_questions(lab, tokens, row)


def _mask_maps(cfg, lab, head: int, tokens: list[str], revealed: bool) -> None:
    """Each mask with its masked scores, and its weights once revealed (drawn by the browser when live maps are on)."""
    T, pad = lab.T, lab.pad
    if cfg.pad_count > T:
        st.info(pad_count_notice(cfg.pad_count, T))
    if pad == 0:
        st.info(NO_PADDING_NOTICE)
    lim = float(np.abs(lab.logits).max()) or 1.0
    st.caption(scores_caption(lim))
    scale = weight_scale(
        *(r.weights for r in lab.runs), allowed=[r.mask for r in lab.runs], group="masks"
    )  # the masks compare
    live = live_on()
    if live and revealed:
        setting = setting_of(cfg, head, st.session_state.get("mk_query", 0), stretching())
        live_sync("mk_live", dict.fromkeys(MASK_TITLES, setting))
        st.caption(live_maps_caption(head))
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
        st.caption(mask_sentence(r, lab, tokens) if revealed else "Its weights appear after your prediction.")


def _padding_table(lab, tokens: list[str], row: int) -> None:
    """One query row under the padding mask: scores, masked scores, numerators and weights."""
    padding = lab.run("padding")
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
    st.caption(padded_keys_caption(lab, tokens, row))


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
