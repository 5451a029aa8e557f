"""Implementations side by side: the same attention in NumPy, from-scratch torch, PyTorch's own and Keras."""

import inspect

import pandas as pd
import streamlit as st

from attention_core import implementations as impls
from attention_core.torch_attention import (MultiHeadSelfAttention, SelfAttention,
                                            scaled_dot_product_attention_torch)
from attention_core import scaled_dot_product_attention as sdpa_numpy
from ui.compute import cached_run
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup

page_setup("Implementations", "🧩",
           "The same multi-head attention, on the current input and weights, computed by every implementation "
           "we can run. The from-scratch versions are a few lines each; the table proves they compute what "
           "PyTorch's and Keras' own layers compute.")
cfg = sidebar_controls()
run = cached_run(cfg)


@st.cache_data(max_entries=32, show_spinner="Running every implementation…")
def table_for(cfg) -> list[dict]:
    r = cached_run(cfg)
    return impls.compare_implementations(r.x, *r.w, n_heads=cfg.n_heads, mask=r.mask, scaled=cfg.scaled,
                                         temperature=cfg.temperature)


rows = table_for(cfg)
df = pd.DataFrame(rows)
st.subheader(f"Same input, same weights: T = {run.T}, d_model = {cfg.d_model}, {cfg.n_heads} heads")
st.dataframe(df, hide_index=True, column_config={
    "max |Δ weights|": st.column_config.NumberColumn(format="%.2e"),
    "max |Δ output|": st.column_config.NumberColumn(format="%.2e"),
    "time (ms)": st.column_config.NumberColumn(format="%.3f")})
measured = df.dropna(subset=["max |Δ output|"])
worst = float(measured[["max |Δ weights|", "max |Δ output|"]].max().max())
st.caption(f"Differences against the NumPy reference (float32); the largest is {worst:.1e}, the size of float32 "
           "rounding. Times are the median of 3 runs after a warm-up on this server, for this one input.")
if not impls.keras_available():
    st.info("The Keras row needs TensorFlow, which the app does not install: `pip install -r requirements-tf.txt` "
            "adds `tensorflow-cpu`, and the row fills in. The test suite installs it and checks it.")

st.subheader("The code that ran")
tabs = st.tabs(["NumPy", "torch functional", "torch modules", "PyTorch's own", "Keras"])
with tabs[0]:
    st.code(inspect.getsource(sdpa_numpy), language="python")
    st.code(inspect.getsource(impls.numpy_functional), language="python")
with tabs[1]:
    st.code(inspect.getsource(scaled_dot_product_attention_torch), language="python")
    st.code(inspect.getsource(impls.torch_functional), language="python")
with tabs[2]:
    st.code(inspect.getsource(MultiHeadSelfAttention), language="python")
    st.code(inspect.getsource(SelfAttention), language="python")
with tabs[3]:
    st.code(inspect.getsource(impls.torch_sdpa), language="python")
    st.code(inspect.getsource(impls.torch_nn_multihead), language="python")
with tabs[4]:
    st.markdown("The equivalent Keras code:")
    st.code(impls.KERAS_CODE, language="python")
    st.markdown("What this page runs for the Keras row:")
    st.code(inspect.getsource(impls.keras_multihead), language="python")
st.caption(f"Scaling: {'1/√d_k = ' + fmt(cfg.d_k ** -0.5) if cfg.scaled else 'off'}, temperature {cfg.temperature:g}. "
           "Layers that always divide by √d_k (nn.MultiheadAttention, Keras) get the setting folded into W_q.")
