"""Real transformer attention: a pretrained model's heads on a typed sentence, and proof that
attention_core recomputes exactly what the model computed."""


import numpy as np
import pandas as pd
import streamlit as st

from attention_core.config import DEFAULT_SENTENCE
from attention_core import score_factor, softmax
from attention_core.hf import (SUPPORTED, ModelLoadError, ModelRun, hide_special, load_pretrained, recompute_layer,
                               run_model)
from ui.charts import bar_chart, show_heatmap
from ui.compute import cached_run
from ui.controls import fmt, sidebar_controls
from ui.layout import page_setup, show_code
from ui.text import md_escape
from ui.views import head_view_chart, model_view_png
from ui.widgets import index_picker

page_setup("Real model", "🤖",
           "The toy pages teach the mechanism; here is the same mechanism inside a trained model. Type a sentence, "
           "pick a model, and look at its heads: where each token looks (head view), every layer and head at once "
           "(model view), and how one weight is made from q and k (neuron view).")
cfg = sidebar_controls()
MODELS = {
    "BERT mini: google/bert_uncased_L-4_H-256_A-4 (4 layers x 4 heads, 45 MB)": "google/bert_uncased_L-4_H-256_A-4",
    "bert-base-uncased (12 x 12, 440 MB)": "bert-base-uncased",
    "gpt2 (causal, 12 x 12, 550 MB)": "gpt2",
    "another model id or a local folder": "",
}
MAX_TOKENS = 128

if "rm_custom" not in st.session_state:  # a shared link may name the model
    st.session_state.rm_custom = st.query_params.get("model", "")
    if st.session_state.rm_custom:
        st.session_state.rm_choice = list(MODELS)[-1]
    st.session_state.rm_text = st.query_params.get("text", DEFAULT_SENTENCE)[:1000]
source = st.radio("Attention to look at", ["a pretrained model", "the toy attention (sidebar what-if)"],
                  horizontal=True, key="rm_source")
text = st.text_input("Sentence", key="rm_text", max_chars=1000)
if not text.split():
    st.warning("The sentence is empty; showing the default sentence.")
    text = DEFAULT_SENTENCE


@st.cache_resource(max_entries=3, show_spinner=False)
def get_model(name: str):
    """One shared copy per model for every session (eval mode; never modified)."""
    return load_pretrained(name)


@st.cache_data(max_entries=64, show_spinner=False)
def model_run(name: str, sentence: str):
    model, tokenizer = get_model(name)
    return run_model(model, tokenizer, sentence, max_tokens=MAX_TOKENS)


@st.cache_data(max_entries=256, show_spinner=False)
def parity(name: str, sentence: str, layer: int) -> dict:
    model, _ = get_model(name)
    return recompute_layer(model, model_run(name, sentence), layer)


name, run, recompute = None, None, None
if source == "a pretrained model":
    choice = st.selectbox("Model", list(MODELS), key="rm_choice")
    name = MODELS[choice] or st.text_input("Hugging Face model id or local folder", key="rm_custom",
                                           placeholder="e.g. distilbert-base-uncased or /path/to/saved/model").strip()
    if MODELS[choice] == "" and name:
        st.query_params["model"] = name
    elif "model" in st.query_params:
        del st.query_params["model"]
    failed = st.session_state.setdefault("rm_failed", {})  # per session: a failed name is not retried on every rerun
    if not name:
        st.info("Type a model id or a folder to load.")
    elif name not in failed:
        try:
            with st.spinner(f"Loading {name} (the first time it is downloaded; later it is shared by every session)…"):
                get_model(name)
            run = model_run(name, text)
        except ModelLoadError as exc:
            failed[name] = str(exc)
    if name in failed:
        st.warning(failed[name] + " The toy pages keep working.", icon="⚠️")
        if st.button("Try loading again", key="rm_retry"):
            failed.pop(name)
            st.rerun()
    if run is not None and run.layer_inputs is not None:
        recompute = lambda layer: parity(name, text, layer)  # noqa: E731
else:
    toy = cached_run(cfg)
    run = ModelRun(toy.tokens, np.zeros(toy.T, bool), toy.weights[None], None, None, "causal" in cfg.mask, cfg.n_heads)
    st.caption("The toy attention of the sidebar's what-if, as one layer: the same views work for it.")

if run is None:
    st.stop()

L, H, T = run.attentions.shape[0], run.attentions.shape[1], run.attentions.shape[2]
if source == "a pretrained model" and len(text.split()) > 0 and T >= MAX_TOKENS:
    st.info(f"The sentence was cut to {MAX_TOKENS} tokens.")
hide = st.toggle("Hide special tokens ([CLS], [SEP], <|endoftext|>) and renormalise the rows", key="rm_hide",
                 disabled=not run.special.any() or run.special.all())
attn, tokens = run.attentions, run.tokens
if hide and run.special.any() and not run.special.all():
    attn = hide_special(attn, run.special)
    tokens = [t for t, s in zip(run.tokens, run.special) if not s]
    st.caption("Display choice: special tokens often soak up attention ('no-op' heads). Their rows and columns are "
               "removed and every remaining row rescaled to sum to 1; the model itself still attended to them.")
T = len(tokens)
c1, c2 = st.columns(2)
layer = index_picker("layer", [f"layer {i + 1}" for i in range(L)], key="rm_layer", container=c1)
head = index_picker("head", [f"head {h + 1}" for h in range(H)], key="rm_head", container=c2)
W = attn[layer, head]

tab_head, tab_model, tab_neuron, tab_parity = st.tabs(["Head view", "Model view", "Neuron view", "Parity"])
with tab_head:
    iso = st.selectbox("Isolate a query token", [None, *range(T)], key="rm_iso",
                       format_func=lambda i: "all tokens" if i is None else f"{tokens[i]} (#{i + 1})")
    st.altair_chart(head_view_chart(W, tokens, isolate=iso, title=f"layer {layer + 1}, head {head + 1}"),
                    width="content")
    row = iso if iso is not None else int(np.argmax(W.max(axis=1)))
    top = int(np.argmax(W[row]))
    st.caption(f"Line opacity is the weight (lines under 0.02 are not drawn); hover a token on the left to isolate it. "
               f"Query **{md_escape(tokens[row])}** looks most at **{md_escape(tokens[top])}** ({fmt(float(W[row, top]))}).")
with tab_model:
    png = model_view_png(attn)
    st.image(png, output_format="PNG",
             caption=f"Every layer (rows, 1 to {L}) and head (columns, 1 to {H}); colour 0 (purple) to 1 (yellow).")
    show_heatmap(W, tokens, tokens, title=f"layer {layer + 1}, head {head + 1}, enlarged", domain=(0, 1), size=380,
                 max_px=384)
with tab_neuron:
    c1, c2 = st.columns(2)
    qi = index_picker("query", tokens, key="rm_nq", container=c1)
    kj = index_picker("key", tokens, key="rm_nk", container=c2, default=min(1, T - 1))
    if source == "a pretrained model" and hide and run.special.any() and not run.special.all():
        st.caption("The neuron view works on the model's own tokens; turn off 'Hide special tokens' to use it.")
    elif recompute is None and source == "a pretrained model":
        st.caption(f"The neuron view needs q and k; they are read for {SUPPORTED}.")
    else:
        if source == "a pretrained model":
            rc = recompute(layer)
            q_all, k_all, scale, temp = rc["q"][head], rc["k"][head], rc["scale"], 1.0
            allowed = np.arange(T) <= qi if run.causal else np.ones(T, dtype=bool)
        else:
            q_all, k_all, temp = toy.q[head], toy.k[head], cfg.temperature
            scale = score_factor(cfg.d_k, cfg.scaled)
            allowed = toy.mask[qi] if toy.mask is not None else np.ones(T, dtype=bool)
        q, k = q_all[qi], k_all[kj]
        p = softmax(k_all @ q * scale, temperature=temp, where=allowed)  # the row of weights, as attention_core does it
        prod = q * k
        dims = pd.DataFrame({"dim": np.arange(len(q)), "q": np.round(q, 4), "k": np.round(k, 4), "q × k": np.round(prod, 4)})
        st.altair_chart(bar_chart(prod, [str(d) for d in range(len(q))], title="q ⊙ k, dimension by dimension",
                                  value_name="q×k"))
        cols = st.columns(4)
        cols[0].metric("q · k", fmt(float(prod.sum())))
        cols[1].metric("× scale" + (f" ÷ τ={temp:g}" if temp != 1 else ""), fmt(float(prod.sum() * scale / temp)),
                       help=f"scale = 1/√d_k = {fmt(scale)}" if scale != 1 else "scaling off")
        cols[2].metric("softmax weight", fmt(float(p[kj])))
        cols[3].metric("the model's weight", fmt(float(attn[layer, head, qi, kj])))
        st.caption(f"The weight of {md_escape(tokens[qi])} → {md_escape(tokens[kj])} is e^(logit) over the sum of e^(logits) "
                   f"of the row's {int(allowed.sum())} visible keys.")
        st.dataframe(dims, hide_index=True)
with tab_parity:
    if recompute is None:
        st.caption("Parity is shown for pretrained models: the toy attention is attention_core itself."
                   if source != "a pretrained model" else f"Parity is computed for {SUPPORTED}.")
    else:
        rows = [{"layer": i + 1, "max |attention_core − model|": recompute(i)["max_diff"]} for i in range(L)]
        diff = rows[layer]["max |attention_core − model|"]
        st.metric(f"layer {layer + 1}: max |difference| over all heads", f"{diff:.1e}")
        st.markdown(f"attention_core recomputed the weights of every layer from the input that layer received and its "
                    f"own W_q, W_k (and biases): the largest difference from the model's `output_attentions` is "
                    f"{max(r['max |attention_core − model|'] for r in rows):.1e}, float rounding.")
        st.dataframe(pd.DataFrame(rows), hide_index=True,
                     column_config={"max |attention_core − model|": st.column_config.NumberColumn(format="%.2e")})
show_code(recompute_layer)
