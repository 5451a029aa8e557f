"""Multi-head attention: one map per head, the path from heads to output, how different the heads are."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import (class_notes_weights, head_divergence_matrix, multi_head_attention, one_hot_embeddings,
                            position_labels, random_projection_weights, scaled_dot_product_attention)
from ui.charts import show_heatmap
from ui.compute import cached_head_divergence, cached_run, cached_saturation
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.widgets import index_picker

page_setup("Multi-head attention", "🧠",
           "Instead of one attention of width d_model, H heads each attend in a subspace of width "
           "d_k = d_model / H with their own slices of W_q, W_k, W_v. Their outputs are concatenated and "
           "mixed by W_o, so different heads can look for different things at the same cost.")
cfg = sidebar_controls()
run = cached_run(cfg)
sat = cached_saturation(cfg)
for note in run.notices:
    st.info(note)
T, H, d_k, D = run.T, cfg.n_heads, cfg.d_k, cfg.d_model
tokens = run.tokens
st.latex(rf"\mathrm{{head}}_h = \mathrm{{softmax}}\!\left(\frac{{Q_h K_h^\top}}{{\sqrt{{d_k}}}}\right) V_h,\quad "
         rf"\mathrm{{MultiHead}}(X) = [\mathrm{{head}}_1, \dots, \mathrm{{head}}_{{{H}}}]\, W_o,\quad d_k = {D}/{H} = {d_k}")

# ---- grid of heads
st.subheader(f"One map per head ({H})")
blank = None if run.mask is None else ~run.mask
per_row = 4
for start in range(0, H, per_row):
    cols = st.columns(per_row)
    for h in range(start, min(start + per_row, H)):
        show_heatmap(run.weights[h], tokens, tokens, title=f"head {h + 1}", domain=(0, 1), blank=blank,
                     container=cols[h - start], size=150, legend=False, max_px=96, max_cells=1024)
st.caption("Colour runs from 0 (dark purple) to 1 (yellow); rows are queries, columns keys.")

head = index_picker("Enlarge a head", [f"head {h + 1}" for h in range(H)], key="mh_head")
big = st.columns([3, 2])
show_heatmap(run.weights[head], tokens, tokens, title=f"head {head + 1}, enlarged", domain=(0, 1), blank=blank,
             container=big[0], size=420, max_px=512)
m = sat[head]
big[1].markdown(
    f"**head {head + 1}**  \n"
    f"Q, K, V shapes: {T} x {d_k} each (columns {head * d_k + 1}–{(head + 1) * d_k} of W_q, W_k, W_v)  \n"
    f"d_k = {d_k}, √d_k = {fmt(d_k ** 0.5)}  \n"
    f"mean max weight {fmt(m['max_weight'])}, entropy {fmt(m['entropy'])} nats, "
    f"effective tokens {fmt(m['effective_tokens'])} of {T}, near-one-hot rows {m['near_one_hot_share']:.0%}")
table = pd.DataFrame(sat)[["max_weight", "entropy", "effective_tokens", "near_one_hot_share"]]
table.insert(0, "Q/K/V shape", f"{T} x {d_k}")
table.insert(0, "head", [f"head {h + 1}" for h in range(H)])
big[1].dataframe(table, hide_index=True)

# ---- path from heads to output
st.subheader("From heads to output")
st.markdown(f"Each head returns a **{T} x {d_k}** matrix; side by side they make the **{T} x {D}** concatenation; "
            f"W_o (**{D} x {D}**) mixes the heads into the final **{T} x {D}** output.")
lim_h = float(np.abs(run.heads).max()) or 1.0
kd = [str(j) for j in range(d_k)]
for start in range(0, H, 8):
    cols = st.columns(8)
    for h in range(start, min(start + 8, H)):
        show_heatmap(run.heads[h], tokens, kd, title=f"head {h + 1}: {T}x{d_k}", row_title="token", col_title="dim",
                     value_name="z", scheme="diverging", domain=(-lim_h, lim_h), container=cols[h - start], size=80,
                     legend=False, max_px=64, max_cells=512)
dims = [str(j) for j in range(D)]
c1, c2, c3 = st.columns(3)
show_heatmap(run.concat, tokens, dims, title=f"concat: {T} x {D}", row_title="token", col_title="dim", value_name="z",
             scheme="diverging", container=c1, size=220, max_px=192)
w_o = run.w[3]
show_heatmap(w_o, dims, dims, title=f"W_o: {D} x {D}", row_title="in", col_title="out", value_name="w",
             scheme="diverging", container=c2, size=220, max_px=192, max_cells=1024)
show_heatmap(run.output, tokens, dims, title=f"output: {T} x {D}", row_title="token", col_title="dim", value_name="z",
             scheme="diverging", container=c3, size=220, max_px=192)

# ---- how different are the heads
st.subheader("How different are the heads?")
if H == 1:
    st.caption("With one head there is nothing to compare; raise the head count in the sidebar.")
else:
    js = cached_head_divergence(cfg)
    labels = [f"h{h + 1}" for h in range(H)]
    c1, c2 = st.columns([2, 3])
    show_heatmap(js, labels, labels, title="Jensen-Shannon divergence (bits)", row_title="head",
                                  col_title="other head", value_name="JS", domain=(0, 1), container=c1)
    off = js[~np.eye(H, dtype=bool)]
    a, b = np.unravel_index(np.argmax(js + np.eye(H) * -1), js.shape)
    c, d = np.unravel_index(np.argmin(js + np.eye(H) * 2), js.shape)
    c2.markdown(
        f"0 bits means two heads attend identically, 1 bit that they never look at the same keys. Here the heads "
        f"differ by {fmt(float(off.mean()))} bits on average; the most different pair is head {a + 1} and head {b + 1} "
        f"({fmt(float(js[a, b]))} bits), the most alike head {c + 1} and head {d + 1} ({fmt(float(js[c, d]))} bits).")

# ---- class-notes comparison
st.subheader("The class-notes example: one purposeful head vs two random heads")
E, _ = one_hot_embeddings("A A B A")
labels4 = position_labels(["A", "A", "B", "A"])
w_q, w_k, w_v = class_notes_weights()
Z1, A1 = scaled_dot_product_attention(E @ w_q, E @ w_k, E @ w_v, scaled=cfg.scaled, temperature=cfg.temperature)
rand = random_projection_weights(2, seed=cfg.seed)
Z2, A2 = multi_head_attention(E, *rand, n_heads=2, scaled=cfg.scaled, temperature=cfg.temperature)
c1, c2, c3 = st.columns(3)
show_heatmap(A1, labels4, labels4, title="1 head, looking for B", domain=(0, 1), container=c1)
show_heatmap(A2[0], labels4, labels4, title=f"random head 1 (seed {cfg.seed})", domain=(0, 1), container=c2)
show_heatmap(A2[1], labels4, labels4, title=f"random head 2 (seed {cfg.seed})", domain=(0, 1), container=c3)
out = pd.DataFrame({"token": labels4, "E": [str(r.astype(int).tolist()) for r in E],
                    "Z, 1 head looking for B": [f"[{a:.3f}, {b:.3f}]" for a, b in Z1],
                    "Z, 2 random heads": [f"[{a:.3f}, {b:.3f}]" for a, b in Z2]})
st.dataframe(out, hide_index=True)
st.caption(f"The purposeful head sends every token to B: its outputs are all close to [0, 1] (first: "
           f"[{Z1[0, 0]:.3f}, {Z1[0, 1]:.3f}]). The two random heads (d_k = 1 each) have no such goal: their weights "
           f"are spread (largest {fmt(float(A2.max()))}) and the outputs are mixtures mapped by a random W_o.")
show_code(multi_head_attention, head_divergence_matrix)
