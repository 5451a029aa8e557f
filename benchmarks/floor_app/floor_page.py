"""The floor app's one page (benchmarks/page_ready.py): a title, a formula, a slider and an 8 x 8 Altair heatmap."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st


def floor_page(title: str) -> None:
    st.title(title)
    st.latex(r"\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    tau = st.slider("Temperature", 0.1, 5.0, 1.0, 0.1)
    rng = np.random.default_rng(0)
    s = rng.standard_normal((8, 8)) / tau
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    df = pd.DataFrame([(i, j, w[i, j]) for i in range(8) for j in range(8)], columns=["query", "key", "weight"])
    chart = alt.Chart(df).mark_rect().encode(x="key:O", y="query:O", color="weight:Q")
    st.altair_chart(chart)
