"""Positional encoding: the sinusoidal table, similarity by distance, and the shuffle experiment."""

import numpy as np
import pandas as pd
import altair as alt
import streamlit as st

from attention_core import shuffle_experiment, sinusoidal_positional_encoding
from ui.charts import show_heatmap
from ui.compute import cached_run, cached_shuffle
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape

page_setup("Positional encoding", "📍",
           "Attention compares every token with every other one, but nothing in q·k says *where* a token is: "
           "shuffle the words and each word gets the same output as before. The sinusoidal encoding adds to each "
           "position a pattern of sines and cosines of different wavelengths, so order becomes part of the input.")
cfg = sidebar_controls(show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "seed"))
st.latex(r"PE_{pos,\,2i} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right),\qquad "
         r"PE_{pos,\,2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
run = cached_run(cfg.replace(positional=False, mask="none"))
T, D = run.T, cfg.d_model
pe = sinusoidal_positional_encoding(T, D)
positions = [str(p) for p in range(T)]

st.subheader(f"The encoding table: {T} positions x {D} dimensions")
show_heatmap(pe, positions, [str(j) for j in range(D)], title="PE", row_title="position", col_title="dimension",
             value_name="PE", scheme="diverging", domain=(-1, 1), size=420, max_px=384)
st.caption("Left columns oscillate fast (short wavelength), right columns slowly: each position gets a unique "
           f"fingerprint. Wavelengths run from 2π ≈ 6.3 to {fmt(2 * np.pi * 10000 ** ((2 * ((D - 1) // 2)) / D))} positions.")

default_dims = [d for d in (0, 1, 4, D - 2) if 0 <= d < D]
dims = st.multiselect("Dimensions to draw as curves", list(range(D)), default=sorted(set(default_dims)), key="pe_dims",
                      max_selections=8)
if dims:
    curves = pd.DataFrame([{"position": p, "value": float(pe[p, d]), "dimension": f"dim {d} ({'sin' if d % 2 == 0 else 'cos'})"}
                           for d in dims for p in range(T)])
    st.altair_chart(alt.Chart(curves).mark_line(point=T <= 64).encode(
        x="position:Q", y=alt.Y("value:Q", scale=alt.Scale(domain=[-1, 1])), color="dimension:N",
        tooltip=["dimension:N", "position:Q", alt.Tooltip("value:Q", format=".4f")]).properties(height=240))
else:
    st.caption("Pick at least one dimension to draw its curve.")

st.subheader("Similarity depends on distance")
sim = pe.astype(np.float64) @ pe.T.astype(np.float64)  # (T, T)
c1, c2 = st.columns([3, 2])
show_heatmap(sim, positions, positions, title="PE · PEᵀ (position x position)", row_title="position",
             col_title="position", value_name="dot", container=c1, size=320, max_px=320)
offsets = np.arange(T)
by_offset = [float(np.mean(np.diagonal(sim, offset=o))) for o in offsets]
c2.altair_chart(alt.Chart(pd.DataFrame({"distance": offsets, "mean dot product": by_offset})).mark_line().encode(
    x="distance:Q", y="mean dot product:Q").properties(height=260, title="mean PE·PE by distance"))
c2.caption(f"A position matches itself best (dot product {fmt(by_offset[0])} = d_model / 2) and nearby positions more "
           + (f"than distant ones: distance 1 gives {fmt(by_offset[1])}, distance {T - 1} gives {fmt(by_offset[-1])}."
              if T > 1 else "than distant ones (raise seq_len to see it)."))

st.subheader("The shuffle experiment")
if "pe_shuffle" not in st.session_state:
    st.session_state.pe_shuffle = 0
if st.button("Reshuffle", key="pe_reshuffle"):
    st.session_state.pe_shuffle += 1
perm, diff_without, diff_with = cached_shuffle(cfg.replace(mask="none"), st.session_state.pe_shuffle)
shown = " ".join(md_escape(run.tokens[i]) for i in perm[:12]) + (" …" if T > 12 else "")
st.markdown(f"Shuffled order (shuffle #{st.session_state.pe_shuffle}): {shown}")
c1, c2 = st.columns(2)
c1.metric("max |difference| without positional encoding", f"{diff_without:.1e}")
c2.metric("max |difference| with positional encoding", f"{diff_with:.3g}")
if T == 1:
    st.caption("With one token there is nothing to shuffle; raise seq_len.")
else:
    st.markdown(
        f"Each token's output after shuffling, put back in the original order, is compared with its output before. "
        f"**Without** positional encoding the largest difference is {diff_without:.1e}, which is 0 up to "
        f"float64 rounding: attention saw a bag of words and gave every word the same answer whatever its place. "
        f"**With** the encoding the outputs change by up to {fmt(diff_with)}: the same word at a new "
        "position is now a different input. That is why transformers add positions before the first attention layer.")
show_code(sinusoidal_positional_encoding, shuffle_experiment)
