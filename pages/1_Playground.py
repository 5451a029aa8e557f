"""Playground: every head's weights, the outputs and the saturation for the current what-if."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import multi_head_attention, saturation_metrics, scaled_dot_product_attention
from ui.charts import bar_chart, show_heatmap
from ui.compute import cached_run, cached_saturation
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape
from ui.widgets import index_picker
from ui.classroom import classroom_toggle, prediction_gate
from ui.export import output_csv, qkv_csv, snippet_core, snippet_torch, weights_csv

page_setup("Playground", "🎛️",
           "Each token's query is compared with every key; the softmax turns those scores into weights; "
           "the output of a token is the weighted mix of the values. Move the sliders in the sidebar.")

cfg = sidebar_controls()
run = cached_run(cfg)
twin_cfg = cfg.replace(scaled=not cfg.scaled)
sat, twin_sat = cached_saturation(cfg), cached_saturation(twin_cfg)
for note in run.notices:
    st.info(note)
T, H, d_k = run.T, cfg.n_heads, cfg.d_k
tokens = run.tokens

scale_tex = rf"\sqrt{{d_k}} = \sqrt{{{d_k}}} = {math.sqrt(d_k):.3g}" if cfg.scaled else r"1 \;(\text{scaling off})"
st.latex(rf"A = \mathrm{{softmax}}\!\left(\frac{{Q K^\top}}{{s \cdot \tau}}\right),\quad s = {scale_tex},"
         rf"\quad \tau = {cfg.temperature:g},\quad T = {T},\; d_{{model}} = {cfg.d_model},\; H = {H},\; d_k = {d_k}")

classroom = classroom_toggle()
c1, c2 = st.columns(2)
head = index_picker("head", [f"head {h + 1}" for h in range(H)], key="pg_head", container=c1)
query = index_picker("query token", tokens, key="pg_query", container=c2)
row = run.weights[head, query]
revealed = prediction_gate("playground", (cfg, head, query), row, tokens[query], tokens)

if revealed:
    st.subheader(f"Attention weights, one map per head ({H})")
    blank = None if run.mask is None else ~run.mask
    per_row = min(H, 4)
    kinds = []
    for start in range(0, H, per_row):
        cols = st.columns(per_row)
        for h in range(start, min(start + per_row, H)):
            kinds.append(show_heatmap(run.weights[h], tokens, tokens, title=f"head {h + 1}", domain=(0, 1), blank=blank,
                                      container=cols[h - start], size=170, legend=False,
                                      max_px=128 if H > 4 else 256))
    sharpest = int(np.argmax([s["max_weight"] for s in sat]))
    st.caption(
        f"Rows are queries, columns keys; each row sums to 1. Head {sharpest + 1} is the sharpest: its rows put on "
        f"average {fmt(sat[sharpest]['max_weight'])} of their weight on a single key "
        f"(uniform would be {fmt(1 / T)}). Colour runs from 0 (dark purple) to 1 (yellow)."
        + (" Large maps are drawn as images; hover tooltips are off there." if "image" in kinds else "")
    )

    st.subheader("One query up close")
    top = int(np.argmax(row))
    st.altair_chart(bar_chart(row, tokens, title=f"weights of query {tokens[query]!s} in head {head + 1}", domain=(0, 1)))
    if row.sum() == 0:
        st.caption(f"Query {md_escape(tokens[query])} may attend to no key under this mask: its weights are all 0 and its output is 0.")
    else:
        st.caption(f"Query **{md_escape(tokens[query])}** attends most to **{md_escape(tokens[top])}** (#{top + 1}) with weight {fmt(row[top])}; "
                   f"it spreads over about {fmt(float(saturation_metrics(row[None]).effective_tokens[0]))} effective tokens of {T}.")

twin_name = "unscaled" if cfg.scaled else "scaled"
st.subheader(f"Softmax saturation of head {head + 1} (change against the {twin_name} twin)")
m, t = sat[head], twin_sat[head]
cols = st.columns(4)
cols[0].metric("entropy (nats)", fmt(m["entropy"]), delta=f"{m['entropy'] - t['entropy']:+.3g}",
               help=f"0 = one-hot, log T = {fmt(math.log(T)) if T > 1 else 0} = uniform")
cols[1].metric("mean max weight", fmt(m["max_weight"]), delta=f"{m['max_weight'] - t['max_weight']:+.3g}")
cols[2].metric("effective tokens", fmt(m["effective_tokens"]), delta=f"{m['effective_tokens'] - t['effective_tokens']:+.3g}")
cols[3].metric("near-one-hot rows", f"{m['near_one_hot_share']:.0%}",
               delta=f"{100 * (m['near_one_hot_share'] - t['near_one_hot_share']):+.0f} pts")
st.caption(f"Deltas are this setting minus the same setting {twin_name}. "
           + ("Scaling keeps the scores' spread near 1, so the softmax stays soft." if cfg.scaled else
              f"Without scaling the scores spread like √d_k = {fmt(math.sqrt(d_k))}, which pushes rows towards one-hot."))
table = pd.DataFrame(sat).rename(columns={"normalized_entropy": "entropy / log T", "jacobian_norm": "‖softmax Jacobian‖"})
table.insert(0, "head", [f"head {h + 1}" for h in range(H)])
st.dataframe(table, hide_index=True)

st.subheader("Inputs and outputs")
show_qkv = st.toggle("show Q, K, V of the picked head", key="pg_qkv")
dims = [str(j) for j in range(cfg.d_model)]
c1, c2 = st.columns(2)
lim = float(max(np.abs(run.x).max(), np.abs(run.output).max(), 1e-9))
show_heatmap(run.x, tokens, dims, title=f"X input ({T} x {cfg.d_model})", row_title="token", col_title="dim",
             value_name="x", scheme="diverging", container=c1)
show_heatmap(run.output, tokens, dims, title=f"Z output ({T} x {cfg.d_model})", row_title="token", col_title="dim",
             value_name="z", scheme="diverging", container=c2)
change = float(np.linalg.norm(run.output - run.x) / max(np.linalg.norm(run.x), 1e-12))
st.caption(f"Each row of Z is a mix of the value rows, projected by W_o; Z differs from X by {fmt(100 * change)}% "
           "of X's size (relative Frobenius norm).")
if show_qkv:
    kd = [str(j) for j in range(d_k)]
    cols = st.columns(3)
    for col, name, arr in zip(cols, "QKV", (run.q, run.k, run.v)):
        show_heatmap(arr[head], tokens, kd, title=f"{name} of head {head + 1} ({T} x {d_k})", row_title="token",
                     col_title="dim", value_name=name.lower(), scheme="diverging", container=col)

if revealed:
    st.subheader("Export and reproduce")
    c1, c2, c3 = st.columns(3)
    # the CSVs are built only when clicked (callables): at 512 tokens x 16 heads the weights alone are 4M rows
    c1.download_button("Weights (CSV, every head)", lambda: weights_csv(run), "attention_weights.csv", "text/csv",
                       key="dl_w", on_click="ignore")
    c2.download_button("Q, K, V (CSV, every head)", lambda: qkv_csv(run), "attention_qkv.csv", "text/csv",
                       key="dl_qkv", on_click="ignore")
    c3.download_button("Output Z (CSV)", lambda: output_csv(run), "attention_output.csv", "text/csv", key="dl_z",
                       on_click="ignore")
    core_src, torch_src = snippet_core(cfg), snippet_torch(cfg)
    c1, c2 = st.columns(2)
    c1.download_button("Reproduce with attention_core (.py)", core_src, "reproduce_attention_core.py", "text/x-python",
                       key="dl_core", on_click="ignore")
    c2.download_button("Reproduce in plain torch (.py)", torch_src, "reproduce_torch.py", "text/x-python",
                       key="dl_torch", on_click="ignore")
    with st.expander("Show the reproduce scripts"):
        st.code(core_src, language="python")
        st.code(torch_src, language="python")
    st.caption("Both scripts print the same weights as this page. Chart menus (⋯ at the top right of a chart) save "
               "any chart as PNG or SVG.")
show_code(scaled_dot_product_attention, multi_head_attention)
