"""Streamlit's own floor for a rerun on the server: a title, a slider and a line (benchmarks/herd_floor.py)."""

import streamlit as st

st.title("Bare page")
x = st.slider("x", 0, 100, 5)
st.markdown(f"x is {x}")
