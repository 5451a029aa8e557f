"""Softmax saturation lab: why 1/sqrt(d_k), measured."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import score_std, softmax, softmax_jacobian
from attention_core.sweep import saturation_point, sweep_d_ks, whatif_sentence
from ui.charts import bar_chart, show_heatmap, sweep_chart
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code

page_setup("Softmax saturation", "🌡️",
           "A score q·k is a sum of d_k products. With unit-variance entries its spread grows like √d_k, "
           "so for wide heads the softmax sees huge logits, puts all weight on one key and passes almost no "
           "gradient back. Dividing by √d_k keeps the spread at 1. Here both are **measured**.")
cfg = sidebar_controls(show=("seq_len", "d_model", "n_heads", "scaled", "temperature", "seed"))
T, tau, d_k_now = cfg.seq_len, cfg.temperature, cfg.d_k
N_SEEDS, N_ROWS = 4, 256

st.latex(r"\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k"
         r"\;\Rightarrow\;\operatorname{std}(q\cdot k)=\sqrt{d_k},\qquad "
         r"\operatorname{std}\!\left(\tfrac{q\cdot k}{\sqrt{d_k}}\right)=1")


@st.cache_data(max_entries=1024, show_spinner=False)
def point(d_k: int, seq_len: int, scaled: bool, temperature: float) -> dict:
    return saturation_point(d_k, seq_len, scaled, temperature, n_seeds=N_SEEDS, n_rows=N_ROWS)


# ---- the sweep (cached point by point, with a progress count)
d_ks = sweep_d_ks(1024)
JOBS = ([(d, True, 1.0, "scaled") for d in d_ks] + [(d, False, 1.0, "unscaled") for d in d_ks]
        + [(d, False, math.sqrt(d), "unscaled, τ·√d_k") for d in d_ks])  # (d_k, scaled, temperature factor, label)


def sweep_frame(seq_len: int, temperature: float, progress=None) -> pd.DataFrame:
    rows = []
    for i, (d, s, factor, setting) in enumerate(JOBS):
        rows.append({**point(d, seq_len, s, temperature * factor), "setting": setting})
        if progress is not None:
            progress.progress((i + 1) / len(JOBS), text=f"Measuring the sweep: {i + 1} / {len(JOBS)} points")
    return pd.DataFrame(rows)


@st.cache_data(max_entries=256, show_spinner=False)
def sweep_specs(seq_len: int, temperature: float, d_k: int) -> list[dict]:
    """The six sweep charts as Vega-Lite specs (built once per setting: Altair's validation is slow)."""
    df = sweep_frame(seq_len, temperature)
    main = df[df.setting != "unscaled, τ·√d_k"]
    now = {s: point(d_k, seq_len, s, temperature) for s in (True, False)}
    marker = pd.DataFrame([{**now[True], "setting": "scaled"}, {**now[False], "setting": "unscaled"}])
    theory = pd.DataFrame([{"d_k": d, "value": math.sqrt(d), "setting": "unscaled: √d_k"} for d in d_ks]
                          + [{"d_k": d, "value": 1.0, "setting": "scaled: 1"} for d in d_ks])
    charts = [
        sweep_chart(main, "score_std", "standard deviation of the scores (dashed: theory)", d_k, marker, log_y=True,
                    theory=theory, y_title="std of q·k"),
        sweep_chart(main, "grad_norm", "gradient norm reaching the scores (autograd)", d_k, marker, log_y=True,
                    y_title="‖∂L/∂logits‖"),
        sweep_chart(df, "max_weight", "mean max weight (dashed green: unscaled at τ·√d_k)", d_k, marker,
                    y_title="max weight"),
        sweep_chart(main, "normalized_entropy", "mean entropy / log T", d_k, marker, y_title="entropy / log T"),
        sweep_chart(main, "effective_tokens", "effective tokens exp(entropy)", d_k, marker, y_title="effective tokens"),
        sweep_chart(main, "near_one_hot_share", "share of rows with max weight > 0.99", d_k, marker,
                    y_title="near-one-hot share"),
    ]
    return [c.to_dict() for c in charts]


progress = st.progress(0.0, text="Measuring the sweep…")
df = sweep_frame(T, tau, progress)
progress.empty()
now = {s: point(d_k_now, T, s, tau) for s in (True, False)}

st.subheader(f"Sweep over d_k, T = {T} keys, temperature {tau:g}")
st.caption(f"Each point: mean over {N_SEEDS} seeds of {N_ROWS} query rows; the band spans the seeds. "
           f"The diamonds and the dashed rule mark the current setting, d_k = {cfg.d_model} / {cfg.n_heads} = {d_k_now}.")
specs = sweep_specs(T, tau, d_k_now)
for i in range(0, len(specs), 2):
    cols = st.columns(2)
    for col, spec in zip(cols, specs[i:i + 2]):
        col.vega_lite_chart(spec, height=330)

sentence = whatif_sentence(now[False], now[True])
st.info(sentence, icon="💡")
measured, predicted = score_std(d_k_now, scaled=False, n_samples=20000, seed=cfg.seed)
st.caption(f"Check of the theory at d_k = {d_k_now}: measured std of q·k = {fmt(measured)}, predicted √d_k = "
           f"{fmt(predicted)}; after scaling {fmt(now[True]['score_std'])} (predicted 1).")

# ---- one row up close
st.subheader(f"One row up close: d_k = {d_k_now}, T = {T}, temperature {tau:g}")
rng = np.random.default_rng(cfg.seed)
q = rng.standard_normal(d_k_now)
k = rng.standard_normal((T, d_k_now))
raw = k @ q  # (T,)
p_unscaled = softmax(raw, temperature=tau)
p_scaled = softmax(raw / math.sqrt(d_k_now), temperature=tau)
labels = [f"k{j + 1}" for j in range(T)]
c1, c2 = st.columns(2)
c1.altair_chart(bar_chart(raw / tau, labels, title="unscaled logits q·k / τ", value_name="logit"))
c2.altair_chart(bar_chart(raw / math.sqrt(d_k_now) / tau, labels, title="scaled logits q·k / (√d_k τ)", value_name="logit"))
c1.altair_chart(bar_chart(p_unscaled, labels, title="softmax, unscaled", domain=(0, 1)))
c2.altair_chart(bar_chart(p_scaled, labels, title="softmax, scaled", domain=(0, 1)))
st.caption(f"Unscaled, the largest weight is {fmt(p_unscaled.max())} on {labels[int(np.argmax(p_unscaled))]}; scaled, "
           f"{fmt(p_scaled.max())}. The logits' spread is {fmt(float(raw.std() / tau))} vs {fmt(float(raw.std() / math.sqrt(d_k_now) / tau))}.")
if T <= 32:
    J_u, J_s = softmax_jacobian(p_unscaled), softmax_jacobian(p_scaled)
    lim = float(max(np.abs(J_u).max(), np.abs(J_s).max(), 1e-12))
    c1, c2 = st.columns(2)
    show_heatmap(J_u, labels, labels, title="Jacobian diag(p) − ppᵀ, unscaled", row_title="∂p_i",
                                  col_title="∂logit_j", value_name="dp/dz", scheme="diverging", domain=(-lim, lim), container=c1)
    show_heatmap(J_s, labels, labels, title="Jacobian diag(p) − ppᵀ, scaled", row_title="∂p_i",
                                  col_title="∂logit_j", value_name="dp/dz", scheme="diverging", domain=(-lim, lim), container=c2)
    st.caption(f"The Jacobian multiplies every gradient that flows back into the scores. Its norm is "
               f"{fmt(float(np.linalg.norm(J_u)))} unscaled and {fmt(float(np.linalg.norm(J_s)))} scaled: a one-hot row has "
               "a zero Jacobian, so nothing flows back.")
else:
    st.caption("The Jacobian heatmap is drawn for rows of up to 32 keys; lower seq_len to see it.")

# ---- temperature beside scaling
st.subheader("Scaling is a temperature")
gap = float(np.max(np.abs(df[df.setting == "unscaled, τ·√d_k"]["max_weight"].to_numpy()
                          - df[df.setting == "scaled"]["max_weight"].to_numpy())))
st.markdown(
    f"Dividing the scores by √d_k is the same as a softmax temperature of √d_k. The dashed green curve above is the "
    f"**unscaled** attention run at temperature τ·√d_k; it lies on the scaled curve at temperature τ = {tau:g}: the "
    f"largest gap between them over the whole sweep is {gap:.2e}. A temperature below 1 sharpens every row (towards "
    "argmax), above 1 flattens it (towards uniform).")
show_code(saturation_point, whatif_sentence)
