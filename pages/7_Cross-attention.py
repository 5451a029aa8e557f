"""Self-attention vs cross-attention: queries from one sequence, keys and values from another."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import multi_head_attention, random_embeddings, random_projection_weights, sentence_embeddings
from attention_core.inputs import MAX_TOKENS
from ui.charts import bar_chart, show_heatmap
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape
from ui.widgets import index_picker

page_setup("Cross-attention", "🔀",
           "In self-attention Q, K and V all come from the same sequence. In cross-attention the **queries** come "
           "from one sequence (say, the translation being written) and the **keys and values** from another (the "
           "sentence being translated), so the weight map is T_q x T_k, not square.")
cfg = sidebar_controls(show=("d_model", "n_heads", "scaled", "temperature", "seed"))
source = st.radio("Sequences", ["typed sentences", "seeded random"], horizontal=True, key="ca_source")
D = cfg.d_model
if source == "typed sentences":
    c1, c2 = st.columns(2)
    s_q = c1.text_input("Query sequence (decoder side)", "the cat sat on the mat", key="ca_q", max_chars=3000)
    s_kv = c2.text_input("Key/value sequence (encoder side)", "le chat est assis sur le tapis", key="ca_kv", max_chars=3000)
    try:
        tok_q, x_q, cut_q = sentence_embeddings(s_q, D, cfg.seed)
        tok_kv, x_kv, cut_kv = sentence_embeddings(s_kv, D, cfg.seed)
    except ValueError as exc:
        st.error(f"{exc}. Type at least one word in each box; showing the default sentences.")
        tok_q, x_q, cut_q = sentence_embeddings("the cat sat on the mat", D, cfg.seed)
        tok_kv, x_kv, cut_kv = sentence_embeddings("le chat est assis sur le tapis", D, cfg.seed)
    if cut_q or cut_kv:
        st.info(f"Sentences are cut to {MAX_TOKENS} tokens.")
else:
    c1, c2 = st.columns(2)
    T_q = c1.slider("T_q (query tokens)", 1, 256, 5, key="ca_tq")
    T_k = c2.slider("T_k (key/value tokens)", 1, 256, 9, key="ca_tk")
    x_q, x_kv = random_embeddings(T_q, D, cfg.seed), random_embeddings(T_k, D, cfg.seed + 1)
    tok_q, tok_kv = [f"q{i + 1}" for i in range(T_q)], [f"k{j + 1}" for j in range(T_k)]

ws = random_projection_weights(D, seed=cfg.seed)
out, weights = multi_head_attention(x_q, *ws, n_heads=cfg.n_heads, scaled=cfg.scaled, temperature=cfg.temperature, kv=x_kv)
T_q, T_k = len(tok_q), len(tok_kv)
head = index_picker("head", [f"head {h + 1}" for h in range(cfg.n_heads)], key="ca_head")
st.subheader(f"Cross-attention weights: {T_q} queries x {T_k} keys")
show_heatmap(weights[head], tok_q, tok_kv, title=f"head {head + 1}: {T_q} x {T_k}", domain=(0, 1), size=360, max_px=384)
q_row = index_picker("query token", tok_q, key="ca_query")
row = weights[head, q_row]
st.altair_chart(bar_chart(row, tok_kv, title=f"where query {tok_q[q_row]} looks in the other sequence", domain=(0, 1)))
top = int(np.argmax(row))
st.caption(f"Each row sums to 1 over the {T_k} keys of the *other* sequence. Query **{md_escape(tok_q[q_row])}** puts "
           f"{fmt(float(row[top]))} of its weight on **{md_escape(tok_kv[top])}**; its output is a mix of that sequence's values, "
           f"with shape {T_q} x {D} overall (one row per query, whatever T_k is).")

st.subheader("Self-attention vs cross-attention")
st.table(pd.DataFrame({
    "": ["Q comes from", "K and V come from", "weight map", "where in a transformer", "what it answers"],
    "self-attention": ["the sequence itself", "the same sequence", "T x T (square)",
                       "every encoder layer; decoder layers (with a causal mask)",
                       "which other tokens of my own sequence matter to me?"],
    "cross-attention": ["the decoder's sequence", "the encoder's output", "T_q x T_k (rectangular)",
                        "each decoder layer, after its masked self-attention",
                        "which tokens of the source sequence matter to what I am producing?"],
}).set_index(""))
show_code(multi_head_attention)
