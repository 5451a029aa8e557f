"""The transformer block around attention: encoder and decoder, add & norm, feed-forward."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import random_embeddings, sentence_embeddings, sinusoidal_positional_encoding
from attention_core.config import DEFAULT_SENTENCE
from attention_core.transformer import block_params, decoder_block, encoder_block
from ui.charts import bar_chart, show_heatmap
from ui.compute import cached_run
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape
from ui.widgets import index_picker

page_setup("Transformer block", "🏗️",
           "Attention is one sub-layer of a transformer block. Around it: a residual connection (add the input "
           "back), LayerNorm (re-centre and re-scale each token's vector), and a position-wise feed-forward "
           "network. An encoder block has one attention; a decoder block has a causal self-attention, then a "
           "cross-attention over the encoder's output.")
cfg = sidebar_controls(show=("d_model", "n_heads", "scaled", "temperature", "seed", "positional"))
c1, c2, c3 = st.columns(3)
source = c1.radio("Input", ["the 'it' sentence", "the shared what-if input"], key="tb_source")
norm_first = c2.toggle("pre-norm (LayerNorm before each sub-layer)", key="tb_prenorm",
                       help="Off: post-norm, as in the original paper. On: pre-norm, as in most modern models.")
T_dec = c3.slider("decoder tokens", 1, 64, 5, key="tb_tdec")
D, H = cfg.d_model, cfg.n_heads


@st.cache_data(max_entries=32, show_spinner=False)
def blocks(cfg, it_sentence: bool, norm_first: bool, T_dec: int):
    """Tokens, the encoder block's tensors and the decoder block's tensors for this page's setting."""
    if it_sentence:
        tokens, x, _ = sentence_embeddings(DEFAULT_SENTENCE, cfg.d_model, cfg.seed)
        if cfg.positional:
            x = x + sinusoidal_positional_encoding(len(tokens), cfg.d_model)
    else:
        run = cached_run(cfg)
        tokens, x = run.tokens, run.x
    kw = dict(norm_first=norm_first, scaled=cfg.scaled, temperature=cfg.temperature)
    enc = encoder_block(x, block_params(cfg.d_model, seed=cfg.seed), cfg.n_heads, **kw)
    y = random_embeddings(T_dec, cfg.d_model, cfg.seed + 11)
    dec = decoder_block(y, enc["out"], block_params(cfg.d_model, seed=cfg.seed, decoder=True), cfg.n_heads, **kw)
    return tokens, enc, dec


tokens, enc, dec = blocks(cfg, source == "the 'it' sentence", norm_first, T_dec)
x, T = enc["x"], len(tokens)

st.subheader("Encoder block")
if norm_first:
    flow = [("x", "LN₁"), ("LN₁", "multi-head\nself-attention"), ("multi-head\nself-attention", "add₁"), ("x", "add₁"),
            ("add₁", "LN₂"), ("LN₂", "feed-forward\nReLU(xW₁+b₁)W₂+b₂"), ("feed-forward\nReLU(xW₁+b₁)W₂+b₂", "add₂"),
            ("add₁", "add₂"), ("add₂", "out")]
else:
    flow = [("x", "multi-head\nself-attention"), ("multi-head\nself-attention", "add₁"), ("x", "add₁"),
            ("add₁", "LN₁"), ("LN₁", "feed-forward\nReLU(xW₁+b₁)W₂+b₂"), ("feed-forward\nReLU(xW₁+b₁)W₂+b₂", "add₂"),
            ("LN₁", "add₂"), ("add₂", "LN₂"), ("LN₂", "out")]
dot = "digraph { rankdir=LR; node [shape=box, style=rounded, fontname=sans]; " + " ".join(
    f'"{a}" -> "{b}"' + (' [style=dashed, label="residual"]' if (a, b) in (("x", "add₁"), ("add₁", "add₂"), ("LN₁", "add₂")) else "")
    + ";" for a, b in flow) + " }"
st.graphviz_chart(dot)
dims = [str(j) for j in range(D)]
order = (["x", "norm1", "attn", "add1", "norm2", "ffn_hidden", "ffn", "add2"] if norm_first
         else ["x", "attn", "add1", "norm1", "ffn_hidden", "ffn", "add2", "norm2"])
labels = {"x": "input x", "attn": "attention output", "add1": "x + attention", "norm1": "LayerNorm₁",
          "ffn_hidden": "feed-forward hidden ReLU(xW₁+b₁)", "ffn": "feed-forward output", "add2": "residual sum₂",
          "norm2": "LayerNorm₂"}
cols = st.columns(4)
for i, name in enumerate(order):
    arr = enc[name]
    title = f"{labels[name]} ({arr.shape[0]} x {arr.shape[1]})" + (" = output" if name == ("add2" if norm_first else "norm2") else "")
    show_heatmap(arr, tokens, [str(j) for j in range(arr.shape[1])], title=title, row_title="token", col_title="dim",
                 value_name="value", scheme="diverging", container=cols[i % 4], size=200, legend=False, max_px=160,
                 max_cells=2048)
out = enc["out"]
st.caption(f"The feed-forward layer is {D} → {4 * D} → {D} wide and acts on each token separately. "
           + (f"After the last LayerNorm every row has mean {fmt(float(np.abs(out.mean(1)).max()), 2)} (largest |mean|) "
              f"and standard deviation about {fmt(float(out.std(1).mean()))}, scaled by the learned γ."
              if not norm_first else
              f"Pre-norm leaves the residual stream un-normalised: row norms grow from {fmt(float(np.linalg.norm(x, axis=1).mean()))} "
              f"(input) to {fmt(float(np.linalg.norm(out, axis=1).mean()))} (output)."))

st.subheader('Where does "it" look?')
it = next((i for i, t in enumerate(tokens) if t.lower().strip(".,") == "it"), None)
if it is None:
    st.caption('The input has no token "it"; choose "the \'it\' sentence" above.')
else:
    head = index_picker("head", [f"head {h + 1}" for h in range(H)], key="tb_head")
    row = enc["weights"][head, it]
    top = int(np.argmax(row))
    st.altair_chart(bar_chart(row, tokens, title=f'attention from "it" (head {head + 1}, encoder block)', domain=(0, 1)))
    animal = next((i for i, t in enumerate(tokens) if t.lower() == "animal"), None)
    st.caption(f'"it" puts most weight on **{md_escape(tokens[top])}** ({fmt(float(row[top]))})'
               + (f', and {fmt(float(row[animal]))} on "animal"' if animal is not None else "")
               + ". These are toy, untrained weights: a trained model is needed for \"it\" to find \"animal\"; "
                 "here the pattern only reflects random projections.")

st.subheader("Decoder block")
dec_tokens = [f"y{i + 1}" for i in range(T_dec)]
head_d = index_picker("decoder head", [f"head {h + 1}" for h in range(H)], key="tb_dhead")
c1, c2, c3 = st.columns(3)
show_heatmap(dec["self_mask"].astype(float), dec_tokens, dec_tokens, title=f"causal mask ({T_dec} x {T_dec})",
             value_name="allowed", domain=(0, 1), container=c1, size=200, legend=False)
show_heatmap(dec["self_weights"][head_d], dec_tokens, dec_tokens, title=f"masked self-attention ({T_dec} x {T_dec})",
             domain=(0, 1), blank=~dec["self_mask"], container=c2, size=200, legend=False)
show_heatmap(dec["cross_weights"][head_d], dec_tokens, tokens, title=f"cross-attention ({T_dec} x {T})",
             domain=(0, 1), container=c3, size=260, legend=False)
st.caption(f"The decoder's {T_dec} tokens first attend to themselves, never ahead (the blank upper triangle), then each "
           f"asks the encoder's {T} outputs (the cross-attention map is {T_dec} x {T}); the feed-forward layer follows. "
           f"Output shape: {dec['out'].shape[0]} x {dec['out'].shape[1]}.")
st.dataframe(pd.DataFrame({
    "sub-layer": ["masked self-attention", "cross-attention", "feed-forward"],
    "queries from": ["decoder", "decoder", "—"], "keys / values from": ["decoder (earlier tokens)", "encoder output", "—"],
    "shape out": [f"{T_dec} x {D}"] * 3}), hide_index=True)
show_code(encoder_block, decoder_block)
