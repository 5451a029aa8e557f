"""Page scaffolding shared by every page: config, the list of pages, "show the code"."""

from __future__ import annotations

import inspect
from pathlib import Path

import streamlit as st

from ui.cache import cached
from ui.fairness import notice as pace_notice
from ui.links import KEY as LINK_KEY
from ui.links import link_options, write_link_options
from ui.partial import page_started
from ui.presets import find_preset
from ui.runtime import settle_imports
from ui.state import enter_page
from ui.text import md_escape

ROOT = Path(__file__).resolve().parents[1]

# (file, label, icon, what it teaches) in reading order; the home page links to each.
PAGES = [
    (
        "pages/1_Playground.py",
        "Playground",
        "🎛️",
        "Every head's weights, the outputs and the saturation for the sliders' setting; pick a query to see its row.",
    ),
    (
        "pages/2_Step_by_step.py",
        "Step by step",
        "🧮",
        "The class-notes example A A B A: Q, K, V, scores, scaling, softmax and Z, one table at a time, with editable W_q, W_k, W_v.",
    ),
    (
        "pages/3_Softmax_saturation.py",
        "Softmax saturation",
        "🌡️",
        "Why divide by √d_k: score spread, max weight, entropy and the gradient through the softmax, measured over d_k.",
    ),
    (
        "pages/4_Multi-head.py",
        "Multi-head",
        "🧠",
        "One map per head, the path heads → concat → W_o → output with shapes, and how different the heads are.",
    ),
    (
        "pages/5_Masks.py",
        "Masks",
        "🎭",
        "Causal and padding masks, the masked scores and the weights; why padded keys get 0 and what a fully masked row does.",
    ),
    (
        "pages/6_Positional_encoding.py",
        "Positional encoding",
        "📍",
        "The sinusoidal table, similarity by distance, and the shuffle experiment that shows why attention needs positions.",
    ),
    (
        "pages/7_Cross-attention.py",
        "Cross-attention",
        "🔀",
        "Queries from one sequence, keys and values from another: a T_q x T_k map, and how it differs from self-attention.",
    ),
    (
        "pages/8_Compare.py",
        "Compare",
        "⚖️",
        "Two settings side by side (A and B) with their weights, outputs and saturation, and the difference B − A.",
    ),
    (
        "pages/9_Implementations.py",
        "Implementations",
        "🧩",
        "The same attention in NumPy, from-scratch torch, PyTorch's own layers and Keras: differences and times.",
    ),
    (
        "pages/10_Transformer_block.py",
        "Transformer block",
        "🏗️",
        "Encoder and decoder blocks around attention: residuals, LayerNorm (post- vs pre-norm), feed-forward.",
    ),
    (
        "pages/11_Real_model.py",
        "Real model",
        "🤖",
        "A pretrained BERT or GPT-2 on your sentence: head view, model view, neuron view, and parity with attention_core.",
    ),
    (
        "pages/12_Positions.py",
        "Positions",
        "🧭",
        "Sinusoidal, learned, RoPE and ALiBi on the same input: scores that depend on the offset only, and longer inputs.",
    ),
    (
        "pages/13_Efficient_attention.py",
        "Efficient attention",
        "⚡",
        "The KV cache token by token, KV memory of real models (MHA, GQA, MQA), sliding windows, FlashAttention's tiles.",
    ),
    (
        "pages/14_Sinks_and_linear_attention.py",
        "Sinks and linear attention",
        "🕳️",
        "A sink logit that lets a head attend to nothing, StreamingLLM's window, and linear attention as an RNN.",
    ),
    (
        "pages/15_Train.py",
        "Train",
        "🏋️",
        "Train a tiny transformer live or replay shipped runs: watch heads form, and the induction-head phase change.",
    ),
]


PROJECTOR_CSS = """<style>
[data-testid="stMainBlockContainer"] { font-size: 1.2rem; max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2.4rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.2rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] { font-size: 1.05rem; }
</style>"""  # static text, never anything a user typed


def page_setup(title: str, icon: str, intro: str | None = None, path: str | None = None) -> None:
    """set_page_config, the page list, the title, a short intro line, and what the link says about the lesson
    (the preset's question, the projector view, notices about link options that were ignored).

    ``path`` is the page's file ("pages/1_Playground.py"); the preset banner appears only on the preset's page."""
    if path is None:  # the calling page's file, relative to the repository
        caller = Path(inspect.currentframe().f_back.f_code.co_filename).resolve()
        path = caller.relative_to(ROOT).as_posix() if caller.is_relative_to(ROOT) else None
    enter_page()
    page_started()  # no page body is current until this run draws it (ui/partial.py)
    first_run = LINK_KEY not in st.session_state  # the session's first run reads the link
    options = link_options()
    if first_run and options.preset:
        complete_bare_preset_link(options.preset, path)
    st.set_page_config(
        page_title=f"{title} · Attention Explorer",
        page_icon=icon,
        layout="wide",
        initial_sidebar_state="collapsed" if options.projector else "auto",
    )
    settle_imports()  # after the page's imports: freeze their objects, cap the native thread pools
    if options.projector:
        st.markdown(PROJECTOR_CSS, unsafe_allow_html=True)
    nav = st.sidebar.container()
    nav.page_link("streamlit_app.py", label="Home", icon="🔍")
    for page, label, page_icon, _ in PAGES:
        nav.page_link(page, label=label, icon=page_icon)
    st.sidebar.divider()
    st.title(f"{icon} {title}")
    pace_notice()  # a toast when this session sent changes faster than the server redraws (ui/fairness.py)
    for notice in st.session_state.pop(f"{LINK_KEY}_notices", None) or []:
        st.warning(f"Link: {notice}", icon="⚠️")
    preset = find_preset(options.preset) if options.preset else None
    if options.preset and preset is None:
        st.warning(
            f"Link: there is no preset called {options.preset!r}; the settings in the link still apply.", icon="⚠️"
        )
    elif preset is not None and preset.page == path:
        with st.container(border=True):
            st.markdown(f"**🧪 {md_escape(preset.name)}** · {md_escape(preset.question)}")
            st.caption(f"What to look for: {preset.look_for}")
    write_link_options()
    if intro:
        st.markdown(intro)


def complete_bare_preset_link(slug: str, path: str | None) -> None:
    """A link that names this page's preset but none of the preset's settings (``Compare?preset=2_why_scale``,
    shortened or typed by hand) opens the preset: its parameters go into the URL before the controls read it, so
    the banner's question is asked of the preset's settings, not of the defaults. A link that carries any of
    them is taken as it is (a teacher's variation of the preset)."""
    preset = find_preset(slug)
    if preset is None or preset.page != path:
        return
    wanted = preset.query_params()
    if set(st.query_params.keys()) & (set(wanted) - {"preset"}):
        return
    st.query_params.update({k: v for k, v in wanted.items() if k not in st.query_params})


@cached(max_mb=2)  # source files do not change while the server runs (no file watcher in class)
def _source(obj) -> str:
    return inspect.getsource(obj)


def show_code(*objects, label: str = "Show the code that ran") -> None:
    """An expander with the real source of the functions used (inspect.getsource, read once per function)."""
    with st.expander(label):
        for obj in objects:
            st.code(_source(obj), language="python")
