"""Softmax saturation lab: why 1/sqrt(d_k), measured."""

import math

import numpy as np
import streamlit as st

from attention_core.sweep import (
    RowUpClose,
    row_up_close,
    saturation_point,
    saturation_sweep,
    score_gradient,
    setting_sentence,
)
from ui.charts import Axes, bar_chart, shared_domain, show_heatmap, weight_axis
from ui.compute import SWEEP_ROWS, SWEEP_SEEDS, cached_saturation_point, cached_saturation_sweep, cached_sweep_specs
from ui.lesson import Question
from ui.page import Page
from ui.text import fmt
from ui.vega import draw, spec_from_json

page = Page(
    __file__,
    "A score q·k is a sum of d_k products. With unit-variance entries its spread grows like √d_k, "
    "so for wide heads the softmax sees huge logits, puts all weight on one key and passes almost no "
    "gradient back. Dividing by √d_k keeps the spread at 1. Here both are **measured**.",
)


def _controls() -> tuple:
    """The full-run part: the sidebar's controls, and the place for their notices and share link."""
    page.whatif(show=("seq_len", "d_model", "n_heads", "scaled", "temperature", "seed"))
    return ()


def _draw() -> list[Question]:
    """The sweep over d_k for the sidebar's T and temperature, the marked setting, one row up close."""
    cfg = page.setting()
    T, tau, d_k = cfg.seq_len, cfg.temperature, cfg.d_k
    mode = "scaled by 1/√d_k" if cfg.scaled else "unscaled"

    st.latex(
        r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k"
        r"\;\Rightarrow\;\operatorname{std}(q\cdot k)=\sqrt{d_k},\qquad "
        r"\operatorname{std}\!\left(\tfrac{q\cdot k}{\sqrt{d_k}}\right)=1"
    )

    with st.spinner(f"Measuring the sweep over d_k (33 points of {SWEEP_SEEDS} x {SWEEP_ROWS} rows)…"):
        sweep = cached_saturation_sweep(T, tau)
        now = cached_saturation_point(d_k, T, cfg.scaled, tau)
        other = cached_saturation_point(d_k, T, not cfg.scaled, tau)
        specs = cached_sweep_specs(T, tau, d_k, cfg.scaled)
    scaled_pt, unscaled_pt = (now, other) if cfg.scaled else (other, now)

    keys = "1 key" if T == 1 else f"{T} keys"
    st.subheader(f"Sweep over d_k, T = {keys}, temperature {tau:g}")
    st.caption(
        f"Each point: the mean over {SWEEP_SEEDS} seeds of {SWEEP_ROWS} query rows with N(0, 1) entries; the band "
        f"spans the seeds. Your setting ({mode}) is the thick line; the dashed rule and the filled diamond mark "
        f"d_k = {cfg.d_model} / {cfg.n_heads} = {d_k}, the hollow diamond the other choice at the same d_k."
    )
    st.info(setting_sentence(now, other), icon="💡")
    for i in range(0, len(specs), 2):
        cols = st.columns(2)
        for col, spec in zip(cols, specs[i : i + 2]):
            draw(col, spec_from_json(spec), width="stretch", height=330)
    st.caption(
        "**Gradient reaching the scores**: a random gradient is put on the attention weights and pushed back "
        "through the softmax with autograd; the chart shows the length (L2 norm) of what arrives at a row's scores "
        "(‖∂L/∂logits‖), averaged over rows. A one-hot row passes almost none back, so its scores stop learning."
    )
    st.caption(
        f"Check of the theory at d_k = {d_k}: the raw scores' measured spread is {fmt(unscaled_pt.score_std.mean)} "
        f"(theory √{d_k} = {fmt(math.sqrt(d_k))}); divided by √d_k it is {fmt(scaled_pt.score_std.mean)} (theory 1)."
    )

    # ---- one row up close
    row = row_up_close(d_k, T, tau, seed=cfg.seed)
    st.subheader(f"One row up close: d_k = {d_k}, T = {T}, temperature {tau:g}")
    labels = [f"k{j + 1}" for j in range(T)]
    sides = [
        ("scaled", row.logits_scaled, row.weights_scaled, "q·k / (√d_k τ)"),
        ("unscaled", row.logits_unscaled, row.weights_unscaled, "q·k / τ"),
    ]
    if not cfg.scaled:
        sides.reverse()  # your setting on the left
    cols = st.columns(2)
    # the twins compare: one axis for both logit charts, one for both weight charts
    logit_axis = shared_domain(row.logits_scaled, row.logits_unscaled)
    w_axis = weight_axis(row.weights_scaled, row.weights_unscaled)
    w_note = w_axis.note("axis") if w_axis.stretched else ""
    for col, (name, logits, weights, formula) in zip(cols, sides):
        tag = " (yours)" if (name == "scaled") == cfg.scaled else ""  # short: a stretched axis appends its note
        col.vega_lite_chart(
            bar_chart(
                logits,
                labels,
                title=f"{name} logits {formula}{tag}",
                value_name="logit",
                domain=logit_axis,
                group="logits",
            ),
            width="stretch",
        )
        col.vega_lite_chart(
            bar_chart(
                weights, labels, title=f"softmax, {name}{tag}", domain=w_axis.domain, note=w_note, group="softmax"
            ),
            width="stretch",
        )
    w_now = row.weights_scaled if cfg.scaled else row.weights_unscaled
    w_other = row.weights_unscaled if cfg.scaled else row.weights_scaled
    other_mode = "unscaled" if cfg.scaled else "scaled"
    if T == 1:
        st.caption("With a single key the softmax returns weight 1 whatever its logit: scaling cannot change it.")
    else:
        st.caption(
            f"With your setting ({mode}) the largest weight is {fmt(float(w_now.max()))} on "
            f"{labels[int(np.argmax(w_now))]}; {other_mode} it would be {fmt(float(w_other.max()))}. The logits' "
            f"spread is {fmt(row.logit_spread(False))} unscaled and {fmt(row.logit_spread(True))} "
            "scaled."
        )
    if T <= 32:
        cols = st.columns(2)
        norms = {}
        for col, (name, *_) in zip(cols, sides):
            J = row.jacobian(name == "scaled")  # (T, T)
            norms[name] = row.jacobian_norm(name == "scaled")
            lim = 0.25  # |diag(p) - p p^T| <= 1/4 entrywise
            tag = " (your setting)" if (name == "scaled") == cfg.scaled else ""
            show_heatmap(
                J,
                labels,
                labels,
                title=f"Jacobian diag(p) − ppᵀ, {name}{tag}",
                axes=Axes("∂p_i", "∂logit_j", "∂p_i/∂logit_j"),
                scheme="diverging",
                domain=(-lim, lim),
                container=col,
            )
        st.caption(
            f"Colour range −0.25 to 0.25 (no entry of diag(p) − ppᵀ can be larger). The Jacobian multiplies every "
            f"gradient that flows back into the scores. Its norm is {fmt(norms['scaled'])} scaled and "
            f"{fmt(norms['unscaled'])} unscaled; a one-hot row has a zero Jacobian, so nothing flows back."
        )
    else:
        st.caption("The Jacobian heatmap is drawn for rows of up to 32 keys; lower seq_len to see it.")

    # ---- temperature beside scaling
    st.subheader("Scaling is a temperature")
    gap = sweep.temperature_gap
    gap_text = "exactly 0" if gap == 0 else f"{gap:.1e} (floating-point rounding)"
    st.markdown(
        f"Dividing the scores by √d_k is the same as a softmax temperature of √d_k. In the chart of the largest weight, "
        f"the dashed green curve is the **unscaled** attention run at temperature τ·√d_k; it lies on the scaled curve at "
        f"temperature τ = {tau:g}: the largest gap between them over the whole sweep is {gap_text}. A temperature below 1 "
        "sharpens every row (towards argmax), above 1 flattens it (towards uniform)."
    )

    half = next((p for p in sweep.unscaled if p.near_one_hot_share.mean >= 0.5), None)
    top = max(sweep.unscaled, key=lambda p: p.near_one_hot_share.mean)
    return [
        (
            f"At your d_k = {d_k}, how large is the spread (std) of the raw scores q·k, and what does dividing by "
            "√d_k make it?",
            f"Measured {fmt(unscaled_pt.score_std.mean)} (theory √{d_k} = {fmt(math.sqrt(d_k))}); divided by √d_k it "
            "is "
            f"{fmt(scaled_pt.score_std.mean)} (theory 1).",
        ),
        (
            f"In this sweep (T = {T}, τ = {tau:g}), from which d_k on does the unscaled softmax put over 99% of its "
            "weight on "
            "one key in at least half of the rows?",
            f"From d_k = {half.d_k} ({half.near_one_hot_share.mean:.0%} of rows); scaled, that share is "
            f"{sweep.scaled[sweep.d_ks.index(half.d_k)].near_one_hot_share.mean:.0%} there."
            if half
            else f"At no d_k up to {sweep.d_ks[-1]}: the largest share is {top.near_one_hot_share.mean:.0%} (at d_k "
            f"= {top.d_k}).",
        ),
        (
            f"Which temperature makes the unscaled softmax at d_k = {d_k} give exactly the weights of the scaled one "
            "at "
            f"τ = {tau:g}?",
            f"τ·√d_k = {tau:g} × {fmt(math.sqrt(d_k))} = {fmt(tau * math.sqrt(d_k))}: dividing by √d_k is a "
            "temperature.",
        ),
    ]


page.run(
    _draw,
    _controls,
    code=(saturation_sweep, saturation_point, score_gradient, row_up_close, RowUpClose, setting_sentence),
)
