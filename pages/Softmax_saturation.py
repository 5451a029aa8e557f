"""Softmax saturation lab: why 1/sqrt(d_k), measured. What needs no calculus comes first (how far the scores
spread, how peaked the rows get); the gradient through the softmax is in a part a reader opens."""

import math

import numpy as np
import streamlit as st

from attention_core.saturation import NEAR_ONE_HOT
from attention_core.sweep import (
    RowUpClose,
    point_from_samples,
    row_up_close,
    saturation_sweep,
    score_samples,
    softmax_backward,
    upstream_gradients,
)
from ui.compute import SWEEP_ROWS, SWEEP_SEEDS, cached_saturation_point, cached_saturation_sweep, cached_sweep_specs
from ui.draw import vega
from ui.draw.charts import Axes, bar_chart, shared_domain, show_heatmap, weight_axis
from ui.glossary import defined
from ui.lessons.softmax_saturation.text import gradient_sentence, setting_sentence, thresholds_sentence, words_sentence
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.text import fmt

page = Page(
    __file__,
    "A score q·k is a sum of d_k products. With entries of spread 1, its spread (standard deviation, std) grows like "
    "√d_k, so for wide heads the scores of one query differ by a lot, and the softmax gives nearly all the weight to "
    "the largest: it **saturates**. Dividing by √d_k keeps the spread at 1 whatever d_k is. Here both are "
    "**measured** on random queries and keys.",
)
DERIVATIVES = "For readers who know derivatives: the gradient through the softmax"
DERIVATIVES_KEY = "sat_derivatives"  # the expander's open state (a full run draws its content when it opens)


def _controls() -> tuple:
    """The full-run part: the sidebar's controls, the place of the lesson, and the part a reader opens. That part
    is drawn only while it is open (its two charts and two maps would be redrawn by the browser at every change)."""
    page.whatif(show=("seq_len", "d_model", "n_heads", "scaled", "temperature", "seed"))
    lesson = st.container()
    calculus = st.expander(DERIVATIVES, key=DERIVATIVES_KEY, on_change="rerun")
    return lesson, calculus


def _chart(box, spec: dict) -> None:
    vega.draw(box, spec, width="stretch", height=330)


def _draw(lesson, calculus) -> list[Question]:
    """The sweep over d_k for the sidebar's T and temperature, the marked setting, one row up close (into
    ``lesson``), and the gradient for those who open ``calculus``."""
    with lesson:
        return _lesson(calculus)


def _lesson(calculus) -> list[Question]:
    """The four sections in order, the gradient for those who open ``calculus``, and the questions."""
    cfg = page.setting()
    T, tau, d_k = cfg.seq_len, cfg.temperature, cfg.d_k
    with st.spinner(f"Measuring over d_k = 1 … 1024 ({SWEEP_SEEDS} seeds x {SWEEP_ROWS} rows a point)…"):
        sweep = cached_saturation_sweep(T, tau)
        now = cached_saturation_point(d_k, T, cfg.scaled, tau)
        other = cached_saturation_point(d_k, T, not cfg.scaled, tau)
        specs = cached_sweep_specs(T, tau, d_k, cfg.scaled)
    scaled_pt, unscaled_pt = (now, other) if cfg.scaled else (other, now)
    _spread_section(d_k, specs, scaled_pt, unscaled_pt)
    half, top = _peaked_section(cfg, sweep, specs, now, other)
    row, sides, labels = _row_up_close(cfg)
    _temperature_section(sweep, tau)
    if calculus.open:
        with calculus:
            _gradient(specs["grad_norm"], now, other, row, sides, labels, cfg.scaled)
    return _questions(cfg, sweep, scaled_pt, unscaled_pt, half, top)


def _spread_section(d_k: int, specs: dict, scaled_pt, unscaled_pt) -> None:
    """1. The spread of the scores over d_k, and why it is √d_k."""
    st.subheader("1. The scores spread out as d_k grows")
    left, right = st.columns(2)
    _chart(left, specs["score_std"])
    right.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k")  # two lines: one
    right.latex(  # is wider than half a 1280 px window
        r"\operatorname{std}(q\cdot k)=\sqrt{d_k},\qquad\operatorname{std}\!\left(\tfrac{q\cdot k}{\sqrt{d_k}}\right)=1"
    )
    right.markdown(
        "The spread (standard deviation) of a query's scores over many random queries and keys: the d_k products "
        "q_i k_i each have variance 1 (Var, the variance, is the spread squared), variances of independent numbers "
        "add up, so the sum's variance is d_k and its spread is √d_k."
    )
    right.caption(
        f"Check of the theory at d_k = {d_k}: the raw scores' measured spread is {fmt(unscaled_pt.score_std.mean)} "
        f"(theory √{d_k} = {fmt(math.sqrt(d_k))}); divided by √d_k it is {fmt(scaled_pt.score_std.mean)} (theory 1)."
    )


def _peaked_section(cfg, sweep, specs: dict, now, other):
    """2. How peaked the rows get over d_k, scaled and unscaled: returns ``(the first unscaled point with half of its
    rows near one-hot or None, the unscaled point with the most such rows)``."""
    T, tau, d_k = cfg.seq_len, cfg.temperature, cfg.d_k
    mode = "scaled by 1/√d_k" if cfg.scaled else "unscaled"
    keys = "1 key" if T == 1 else f"{T} keys"
    st.subheader(f"2. How peaked the rows get: T = {keys}, temperature τ = {tau:g}")
    st.markdown(
        "Each query's row of weights is the softmax of its scores. The **temperature** τ divides the scores first "
        "(τ = 1 leaves them as they are). What the charts measure: " + words_sentence(T)
    )
    st.markdown(thresholds_sentence(T))
    st.caption(
        f"Each point: the mean over {SWEEP_SEEDS} seeds of {SWEEP_ROWS} query rows with N(0, 1) entries (random numbers "
        "drawn from a normal distribution of mean 0 and spread 1); the band "
        f"spans the seeds. Your setting ({mode}) is the thick line; the dashed rule and the filled diamond mark "
        f"d_k = {cfg.d_model} / {cfg.n_heads} = {d_k}, the hollow diamond the other choice at the same d_k."
    )
    st.info(setting_sentence(now, other), icon=":material/lightbulb:")
    a, b = st.columns(2)
    _chart(a, specs["max_weight"])
    _chart(b, specs["effective_tokens"])
    a, b = st.columns(2)
    _chart(a, specs["near_one_hot_share"])
    half = next((p for p in sweep.unscaled if p.near_one_hot_share.mean >= 0.5), None)
    top = max(sweep.unscaled, key=lambda p: p.near_one_hot_share.mean)
    b.markdown(
        (
            f"Unscaled, at least half of the rows are near one-hot from d_k = {half.d_k} on "
            f"({half.near_one_hot_share.mean:.0%} there); scaled, that share is "
            f"{sweep.scaled[sweep.d_ks.index(half.d_k)].near_one_hot_share.mean:.0%} at the same d_k."
            if half
            else f"Unscaled, no d_k up to {sweep.d_ks[-1]} makes half of the rows near one-hot here: the largest share "
            f"is {top.near_one_hot_share.mean:.0%} (at d_k = {top.d_k})."
        )
        + " Scaled, the curves stay flat: the spread of the scores the softmax receives no longer depends on d_k."
    )
    return half, top


def _row_up_close(cfg) -> tuple[RowUpClose, list[tuple], list[str]]:
    """3. One row's logits and weights, scaled and unscaled (the setting's on the left): ``(row, sides, labels)``."""
    T, tau, d_k = cfg.seq_len, cfg.temperature, cfg.d_k
    mode = "scaled by 1/√d_k" if cfg.scaled else "unscaled"
    row = row_up_close(d_k, T, tau, seed=cfg.seed)
    st.subheader(f"3. One row up close: d_k = {d_k}, T = {T}, temperature {tau:g}")
    st.caption(defined("logits"))
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
        vega.draw(
            col,
            bar_chart(
                logits,
                labels,
                title=f"{name} logits {formula}{tag}",
                value_name="logit",
                domain=logit_axis,
                group="logits",
            ),  # fmt: skip
            width="stretch",
        )
        vega.draw(
            col,
            bar_chart(
                weights, labels, title=f"softmax, {name}{tag}", domain=w_axis.domain, note=w_note, group="softmax"
            ),  # fmt: skip
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
            f"spread is {fmt(row.logit_spread(False))} unscaled and {fmt(row.logit_spread(True))} scaled."
        )
    return row, sides, labels


def _temperature_section(sweep, tau: float) -> None:
    """4. Scaling is a temperature: the unscaled curve at τ·√d_k lies on the scaled one."""
    st.subheader("4. Scaling is a temperature")
    gap = sweep.temperature_gap
    gap_text = "exactly 0" if gap == 0 else f"{gap:.1e} (floating-point rounding)"
    st.markdown(
        f"Dividing the scores by √d_k is the same as a softmax temperature of √d_k. In the chart of the largest weight, "
        f"the dashed green curve is the **unscaled** attention run at temperature τ·√d_k; it lies on the scaled curve at "
        f"temperature τ = {tau:g}: the largest gap between them over the whole sweep is {gap_text}. A temperature below 1 "
        "sharpens every row (towards one key), above 1 flattens it (towards uniform)."
    )


def _questions(cfg, sweep, scaled_pt, unscaled_pt, half, top) -> list[Question]:
    """The spread at the setting's d_k, where half the rows turn near one-hot, the temperature that is scaling."""
    T, tau, d_k = cfg.seq_len, cfg.temperature, cfg.d_k
    return [
        (
            f"At your d_k = {d_k}, how large is the spread (std) of the raw scores q·k, and what does dividing by "
            "√d_k make it?",
            f"Measured {fmt(unscaled_pt.score_std.mean)} (theory √{d_k} = {fmt(math.sqrt(d_k))}); divided by √d_k it "
            f"is {fmt(scaled_pt.score_std.mean)} (theory 1).",
        ),
        (
            f"In this sweep (T = {T}, τ = {tau:g}), from which d_k on does the unscaled softmax put over "
            f"{NEAR_ONE_HOT:.0%} of its weight on one key in at least half of the rows?",
            f"From d_k = {half.d_k} ({half.near_one_hot_share.mean:.0%} of rows); scaled, that share is "
            f"{sweep.scaled[sweep.d_ks.index(half.d_k)].near_one_hot_share.mean:.0%} there."
            if half
            else f"At no d_k up to {sweep.d_ks[-1]}: the largest share is {top.near_one_hot_share.mean:.0%} (at d_k "
            f"= {top.d_k}).",
        ),
        (
            f"Which temperature makes the unscaled softmax at d_k = {d_k} give exactly the weights of the scaled one "
            f"at τ = {tau:g}?",
            f"τ·√d_k = {tau:g} × {fmt(math.sqrt(d_k))} = {fmt(tau * math.sqrt(d_k))}: dividing by √d_k is a "
            "temperature.",
        ),
    ]


def _gradient(spec: dict, now, other, row: RowUpClose, sides, labels: list[str], scaled: bool) -> None:
    """The calculus part: the gradient that reaches the scores over d_k, and the Jacobian of one row."""
    st.markdown(
        "Training changes the scores through the gradient of the loss L (the number training makes smaller). The "
        "softmax passes the gradient on the weights, ∂L/∂p, back to the logits z through its Jacobian J = ∂p/∂z:"
    )
    st.latex(
        r"\frac{\partial L}{\partial z} = J^\top \frac{\partial L}{\partial p},\qquad "
        r"J = \operatorname{diag}(p) - p\,p^\top,\qquad \text{so}\quad "
        r"\frac{\partial L}{\partial z_j} = p_j\Big(g_j - \sum_i p_i g_i\Big),\; g = \frac{\partial L}{\partial p}"
    )
    left, right = st.columns(2)
    _chart(left, spec)
    right.caption(
        "**Gradient reaching the scores**: a random upstream gradient g ~ N(0, 1) (the same for every d_k) is put on "
        "each row's weights and pushed back through the softmax with the formula above (the tests check it against "
        "torch autograd); the chart shows the length (L2 norm) of what arrives at a row's scores, ‖∂L/∂logits‖, "
        "averaged over rows. A one-hot row passes almost none back, so its scores stop learning."
    )
    right.info(gradient_sentence(now, other), icon=":material/lightbulb:")
    T = len(labels)
    if T > 32:
        st.caption("The Jacobian heatmap is drawn for rows of up to 32 keys; lower seq_len to see it.")
        return
    cols = st.columns(2)
    norms = {}
    for col, (name, *_) in zip(cols, sides):
        J = row.jacobian(name == "scaled")  # (T, T)
        norms[name] = row.jacobian_norm(name == "scaled")
        tag = " (your setting)" if (name == "scaled") == scaled else ""
        show_heatmap(J, labels, labels, title=f"Jacobian diag(p) − ppᵀ, {name}{tag}",
                     axes=Axes("∂p_i", "∂logit_j", "∂p_i/∂logit_j"), scheme="diverging", domain=(-0.25, 0.25),
                     container=col)  # fmt: skip  # |diag(p) - p p^T| <= 1/4 entrywise
    st.caption(
        f"The row of section 3. Colour range −0.25 to 0.25 (no entry of diag(p) − ppᵀ can be larger). The Jacobian "
        f"multiplies every gradient that flows back into the scores. Its norm (Frobenius: the square root of the sum "
        f"of its squared entries) is {fmt(norms['scaled'])} scaled and {fmt(norms['unscaled'])} unscaled; a one-hot "
        "row has a zero Jacobian, so nothing flows back."
    )


page.run(
    _draw,
    _controls,
    code=(
        saturation_sweep,
        score_samples,
        upstream_gradients,
        point_from_samples,
        softmax_backward,
        row_up_close,
        RowUpClose,
    ),  # fmt: skip
)
