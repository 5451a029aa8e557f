"""Masks: causal, padding and both; masked scores left blank; the fully masked row."""


import numpy as np
import pandas as pd
import streamlit as st

from attention_core import attention_scores, causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from ui.charts import show_heatmap
from ui.compute import cached_run
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape
from ui.widgets import index_picker

page_setup("Masks", "🎭",
           "A mask decides which keys a query may see. Blocked scores are set to −∞ before the softmax, so "
           "e^−∞ = 0 and they get exactly zero weight while the allowed keys share all of it. "
           "**Causal** masks hide the future (a decoder must not peek at the next word); **padding** masks hide "
           "the filler tokens that make sequences of a batch equally long.")
cfg = sidebar_controls(show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "pad_count",
                             "seed", "positional"))
run = cached_run(cfg.replace(mask="none"))
T, d_k = run.T, cfg.d_k
pad = min(cfg.pad_count, T)
if cfg.pad_count > T:
    st.info(f"pad count {cfg.pad_count} is more than the {T} tokens; using {T}.")
if pad == 0:
    st.info("The pad count in the sidebar is 0, so the padding mask blocks nothing yet: raise it to pad the last keys.")
tokens = run.tokens
head = index_picker("head", [f"head {h + 1}" for h in range(cfg.n_heads)], key="mk_head")
q, k, v = run.q[head], run.k[head], run.v[head]
scores = attention_scores(q, k, scaled=cfg.scaled) / cfg.temperature  # (T, T) logits
lim = float(np.abs(scores).max()) or 1.0

masks = {
    "causal": causal_mask(T),
    f"padding ({pad} padded)": padding_mask(T - pad, T),
    "causal + padding": combine_masks(causal_mask(T), padding_mask(T - pad, T)),
}
results = {}
for name, mask in masks.items():
    st.subheader(name)
    out, w = scaled_dot_product_attention(q, k, v, mask=mask, scaled=cfg.scaled, temperature=cfg.temperature)
    results[name] = (mask, out, w)
    c1, c2, c3 = st.columns(3)
    show_heatmap(mask.astype(float), tokens, tokens, title="mask (1 = may attend)", value_name="allowed",
                 domain=(0, 1), container=c1, size=220, legend=False)
    show_heatmap(scores, tokens, tokens, title="masked scores (blank = blocked)", value_name="score",
                 scheme="diverging", domain=(-lim, lim), blank=~mask, container=c2, size=220, legend=False)
    show_heatmap(w, tokens, tokens, title="weights", domain=(0, 1), blank=~mask, container=c3, size=220, legend=False)
    blocked = w[~mask]
    empty = int((~mask.any(axis=1)).sum())
    st.caption(f"{int((~mask).sum())} of {T * T} cells are blocked; their weights are exactly "
               f"{fmt(float(blocked.max())) if blocked.size else 0} (largest blocked weight). Allowed rows still sum to 1"
               + (f"; {empty} row(s) have no allowed key at all: their weights and outputs are 0." if empty else "."))

st.subheader("Why padded keys get zero weight")
mask = masks[f"padding ({pad} padded)"]
w = results[f"padding ({pad} padded)"][2]
row = index_picker("query", tokens, key="mk_query")
df = pd.DataFrame({"key": tokens, "score": np.round(scores[row], 4),
                   "masked score": ["−∞" if not a else f"{s:.4f}" for a, s in zip(mask[row], scores[row])],
                   "e^(masked score − max)": np.round(np.where(mask[row], np.exp(scores[row] - scores[row][mask[row]].max()) if mask[row].any() else 0.0, 0.0), 6),
                   "weight": np.round(w[row], 6)})
st.dataframe(df, hide_index=True)
st.caption(f"The padded keys (the last {pad}) have e^−∞ = 0 in the numerator, so their weight is 0 whatever their score; "
           f"the {T - pad} real keys share the whole weight: they sum to {fmt(float(w[row, :T - pad].sum()))}.")

st.subheader("A fully masked row")
full = causal_mask(T).copy()
full[0, :] = False  # query 1 may attend to nothing
z, wf = scaled_dot_product_attention(q, k, v, mask=full, scaled=cfg.scaled, temperature=cfg.temperature)
with np.errstate(invalid="ignore", divide="ignore"):
    naive = np.where(full, scores, -np.inf)
    naive = np.exp(naive - naive.max(axis=1, keepdims=True))
    naive = naive / naive.sum(axis=1, keepdims=True)
st.markdown(
    f"Block every key for query **{md_escape(tokens[0])}** (row 1). A textbook softmax "
    f"computes e^(−∞ − (−∞)) = e^NaN and returns **{int(np.isnan(naive[0]).sum())} NaN** weights in that row, which "
    f"would then poison every later layer. attention_core gives that row weights of exactly 0 (sum "
    f"{fmt(float(wf[0].sum()))}) and a zero output (largest |z| = {fmt(float(np.abs(z[0]).max()))}), with "
    f"{int(np.isnan(wf).sum() + np.isnan(z).sum())} NaN anywhere; the other rows are unchanged.")
show_code(scaled_dot_product_attention, causal_mask, padding_mask, combine_masks)
