"""The Real model page's two sources of attention, each a ``*_ui()`` helper returning an AttentionRun:
a pretrained Hugging Face model (chosen, loaded and run on the sentence) or the toy what-if."""

from __future__ import annotations

import streamlit as st

from attention_core import WhatIf
from attention_core.hf import ModelLoadError
from attention_core.model_views import AttentionRun, toy_attention_run
from ui.compute import MODELS, cached_attention_run, cached_run

CHOICES = {
    "BERT mini: google/bert_uncased_L-4_H-256_A-4 (4 layers x 4 heads, 45 MB)": "google/bert_uncased_L-4_H-256_A-4",
    "bert-base-uncased (12 x 12, 440 MB)": "bert-base-uncased",
    "gpt2 (causal, 12 x 12, 550 MB)": "gpt2",
    "another model id or a local folder": "",
}


def _model_name() -> str:
    """The model picked (a shared link may name one in ?model=), kept in the URL when typed."""
    if "rm_custom" not in st.session_state:
        st.session_state.rm_custom = st.query_params.get("model", "")
        if st.session_state.rm_custom:
            st.session_state.rm_choice = list(CHOICES)[-1]
    choice = st.selectbox("Model", list(CHOICES), key="rm_choice")
    name = (
        CHOICES[choice]
        or st.text_input(
            "Hugging Face model id or local folder",
            key="rm_custom",
            placeholder="e.g. distilbert-base-uncased or /path/to/saved/model",
        ).strip()
    )
    if CHOICES[choice] == "" and name:
        st.query_params["model"] = name
    elif "model" in st.query_params:
        del st.query_params["model"]
    return name


def hf_model_ui(text: str) -> AttentionRun | None:
    """Pick and load a pretrained model and run ``text`` through it; None (with a message) if that fails."""
    name = _model_name()
    failed = st.session_state.setdefault("rm_failed", {})  # per session: a failed name is not retried on every rerun
    if not name:
        st.info("Type a model id or a folder to load.")
        return None
    arun = None
    if name not in failed:
        try:
            if name not in MODELS:
                with st.spinner(f"Loading {name} (the first time it is downloaded; later every session shares it)…"):
                    MODELS.get(name)
            arun = cached_attention_run(name, text)
        except ModelLoadError as exc:
            failed[name] = str(exc)
    if name in failed:
        st.warning(failed[name] + " The toy pages keep working.", icon=":material/warning:")
        if st.button("Try loading again", key="rm_retry"):
            failed.pop(name)
            st.rerun()
    return arun


def toy_model_ui(cfg: WhatIf) -> AttentionRun:
    """The sidebar's what-if attention as a one-layer model."""
    st.caption(
        "The toy attention of the sidebar's what-if (seeded random, untrained weights), shown as one layer: "
        "the same views work for it."
    )
    return toy_attention_run(cached_run(cfg))
