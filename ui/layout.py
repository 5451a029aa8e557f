"""Page scaffolding shared by every page: config, the list of pages, "show the code"."""

from __future__ import annotations

import inspect

import streamlit as st

from ui.runtime import settle_memory

# (file, label, icon, what it teaches) in reading order; the home page links to each.
PAGES = [
    ("pages/1_Playground.py", "Playground", "🎛️",
     "Every head's weights, the outputs and the saturation for the sliders' setting; pick a query to see its row."),
    ("pages/2_Step_by_step.py", "Step by step", "🧮",
     "The class-notes example A A B A: Q, K, V, scores, scaling, softmax and Z, one table at a time, with editable W_q, W_k, W_v."),
    ("pages/3_Softmax_saturation.py", "Softmax saturation", "🌡️",
     "Why divide by √d_k: score spread, max weight, entropy and the gradient through the softmax, measured over d_k."),
    ("pages/4_Multi-head.py", "Multi-head", "🧠",
     "One map per head, the path heads → concat → W_o → output with shapes, and how different the heads are."),
    ("pages/5_Masks.py", "Masks", "🎭",
     "Causal and padding masks, the masked scores and the weights; why padded keys get 0 and what a fully masked row does."),
    ("pages/6_Positional_encoding.py", "Positional encoding", "📍",
     "The sinusoidal table, similarity by distance, and the shuffle experiment that shows why attention needs positions."),
    ("pages/7_Cross-attention.py", "Cross-attention", "🔀",
     "Queries from one sequence, keys and values from another: a T_q x T_k map, and how it differs from self-attention."),
    ("pages/8_Compare.py", "Compare", "⚖️",
     "Two settings side by side (A and B) with their weights, outputs and saturation, and the difference B − A."),
    ("pages/9_Implementations.py", "Implementations", "🧩",
     "The same attention in NumPy, from-scratch torch, PyTorch's own layers and Keras: differences and times."),
    ("pages/10_Transformer_block.py", "Transformer block", "🏗️",
     "Encoder and decoder blocks around attention: residuals, LayerNorm (post- vs pre-norm), feed-forward."),
    ("pages/11_Real_model.py", "Real model", "🤖",
     "A pretrained BERT or GPT-2 on your sentence: head view, model view, neuron view, and parity with attention_core."),
]


def page_setup(title: str, icon: str, intro: str | None = None) -> None:
    """set_page_config, the title and a short intro line."""
    st.set_page_config(page_title=f"{title} · Attention Explorer", page_icon=icon, layout="wide")
    settle_memory()  # after the page's imports: later collections skip the libraries' objects
    nav = st.sidebar.container()
    nav.page_link("streamlit_app.py", label="Home", icon="🔍")
    for path, label, page_icon, _ in PAGES:
        nav.page_link(path, label=label, icon=page_icon)
    st.sidebar.divider()
    st.title(f"{icon} {title}")
    if intro:
        st.markdown(intro)


def show_code(*objects, label: str = "Show the code that ran") -> None:
    """An expander with the real source of the functions used (inspect.getsource)."""
    with st.expander(label):
        for obj in objects:
            st.code(inspect.getsource(obj), language="python")
