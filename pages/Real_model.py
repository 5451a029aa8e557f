"""Real transformer attention: a pretrained model's heads on a typed sentence, and proof that
attention_core recomputes exactly what the model computed."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.config import DEFAULT_SENTENCE
from attention_core.hf import hide_special, recompute_layer
from attention_core.model_views import MODEL_MAX_TOKENS, model_attention_run, neuron_view
from ui.charts import bar_chart, show_weights
from ui.lesson import Question
from ui.page import Page
from ui.real_model import hf_model_ui, toy_model_ui
from ui.text import fmt, md_escape
from ui.views import head_view_chart, model_view_alt, model_view_png
from ui.widgets import index_picker

SENTENCE_CHARS = 1000  # the longest sentence (typed or from a link) this page takes; the model reads MODEL_MAX_TOKENS

page = Page(
    __file__,
    "The toy pages teach the mechanism; here is the same mechanism inside a trained model. Type a sentence, "
    "pick a model, and look at its heads: where each token looks (head view), every layer and head at once "
    "(model view), and how one weight is made from q and k (neuron view).",
)
st.latex(
    r"a_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}\right),\qquad "
    r"q_i = x_i W_q + b_q,\; k_j = x_j W_k + b_k"
)


def _draw() -> list[Question]:
    """The sentence and model, the head, model and neuron views, and the parity with attention_core."""
    cfg = page.whatif()
    if "rm_text" not in st.session_state:  # a shared link may carry the sentence
        st.session_state.rm_text = st.query_params.get("text", DEFAULT_SENTENCE)[:SENTENCE_CHARS]
    source = st.radio(
        "Attention to look at",
        ["a pretrained model", "the toy attention (sidebar what-if)"],
        horizontal=True,
        key="rm_source",
    )
    text = st.text_input("Sentence", key="rm_text", max_chars=SENTENCE_CHARS)
    if not text.split():
        st.warning("The sentence is empty; showing the default sentence.")
        text = DEFAULT_SENTENCE
    arun = hf_model_ui(text) if source == "a pretrained model" else toy_model_ui(cfg)
    if arun is None:  # no model could be loaded (the message above says why): the page ends here
        return []

    L, H, T = arun.shape
    if arun.truncated:
        st.info(f"The sentence was cut to its first {MODEL_MAX_TOKENS} tokens.")
    can_hide = bool(arun.special.any() and not arun.special.all())
    hide = (
        st.toggle(
            "Hide special tokens ([CLS], [SEP], <|endoftext|>) and renormalise the rows",
            key="rm_hide",
            disabled=not can_hide,
        )
        and can_hide
    )
    attn, tokens = arun.attentions, list(arun.tokens)
    if hide:
        attn = hide_special(attn, arun.special)
        tokens = [t for t, s in zip(arun.tokens, arun.special) if not s]
        st.caption(
            "Display choice: special tokens often soak up attention ('no-op' heads). Their rows and columns are "
            "removed and every remaining row rescaled to sum to 1; the model itself still attended to them."
        )
    T = len(tokens)
    c1, c2 = st.columns(2)
    layer = index_picker("layer", [f"layer {i + 1}" for i in range(L)], key="rm_layer", container=c1)
    head = index_picker("head", [f"head {h + 1}" for h in range(H)], key="rm_head", container=c2)
    W = attn[layer, head]
    nv = None

    tab_head, tab_model, tab_neuron, tab_parity = st.tabs(["Head view", "Model view", "Neuron view", "Parity"])
    with tab_head:
        iso = st.selectbox(
            "Isolate a query token",
            [None, *range(T)],
            key="rm_iso",
            format_func=lambda i: "all tokens" if i is None else f"{tokens[i]} (#{i + 1})",
        )
        st.altair_chart(
            head_view_chart(W, tokens, isolate=iso, title=f"layer {layer + 1}, head {head + 1}"), width="content"
        )
        row = iso if iso is not None else int(np.argmax(W.max(axis=1)))
        top = int(np.argmax(W[row]))
        st.caption(
            f"All {T} tokens, queries on the left and keys on the right; line opacity is the weight (lines under "
            f"0.02 are not drawn); hover a token on the left to isolate it. "
            + ("" if iso is not None else "The strongest single weight: ")
            + f"query **{md_escape(tokens[row])}** (#{row + 1}) looks most at **{md_escape(tokens[top])}** "
            f"(#{top + 1}) with weight {fmt(float(W[row, top]))}."
        )
    with tab_model:
        st.image(
            model_view_png(attn),
            output_format="PNG",
            caption=f"Every layer (rows, 1 to {L}) and head (columns, 1 to {H}); colour 0 (purple) to 1 (yellow).",
            alt=model_view_alt(attn, tokens),
        )
        show_weights(W, tokens, title=f"layer {layer + 1}, head {head + 1}, enlarged", size=380, max_px=384)
    with tab_neuron:
        c1, c2 = st.columns(2)
        qi = index_picker("query", tokens, key="rm_nq", container=c1)
        kj = index_picker("key", tokens, key="rm_nk", container=c2, default=min(1, T - 1))
        if hide:
            st.caption("The neuron view works on the model's own tokens; turn off 'Hide special tokens' to use it.")
        elif arun.q is None:
            st.caption(arun.no_parity)
        else:
            nv = neuron_view(arun, layer, head, qi, kj)
            st.vega_lite_chart(
                bar_chart(
                    nv.products,
                    [str(d) for d in range(len(nv.q))],
                    title="q ⊙ k, dimension by dimension",
                    value_name="q×k",
                )
            )
            cols = st.columns(4)
            cols[0].metric("q · k", fmt(nv.dot))
            cols[1].metric(
                "× scale" + (f" ÷ τ={arun.temperature:g}" if arun.temperature != 1 else ""),
                fmt(nv.logit),
                help=f"scale = 1/√d_k = {fmt(arun.scale)}" if arun.scale != 1 else "scaling off",
            )
            cols[2].metric("softmax weight", fmt(nv.weight))
            cols[3].metric("the model's weight", fmt(float(attn[layer, head, qi, kj])))
            st.caption(
                f"The weight of {md_escape(tokens[qi])} → {md_escape(tokens[kj])} is e^(logit) over the sum of "
                f"e^(logits) of the row's {nv.visible} visible key{'s' if nv.visible != 1 else ''}."
            )
            st.dataframe(
                pd.DataFrame(
                    {
                        "dim": np.arange(len(nv.q)),
                        "q": np.round(nv.q, 4),
                        "k": np.round(nv.k, 4),
                        "q × k": np.round(nv.products, 4),
                    }
                ),
                hide_index=True,
                width="stretch",
            )
    with tab_parity:
        if arun.parity is None:
            st.caption(arun.no_parity)
        else:
            st.metric(f"layer {layer + 1}: max |difference| over all heads", f"{arun.parity[layer]:.1e}")
            st.markdown(
                f"attention_core recomputed the weights of every layer from the input that layer received and its "
                f"own W_q, W_k (and biases): the largest difference from the model's `output_attentions` is "
                f"{arun.parity.max():.1e}, float rounding."
            )
            st.dataframe(
                pd.DataFrame({"layer": np.arange(1, L + 1), "max |attention_core − model|": arun.parity}),
                hide_index=True,
                column_config={"max |attention_core − model|": st.column_config.NumberColumn(format="%.2e")},
            )

    questions = [
        (
            f"In layer {layer + 1}, head {head + 1}, which key does query {md_escape(tokens[row])} (#{row + 1}) "
            "look at most, "
            "and with what weight?",
            f"**{md_escape(tokens[top])}** (#{top + 1}), weight {fmt(float(W[row, top]))}.",
        )
    ]
    if nv is not None:
        questions.append(
            (
                f"How is the weight from query “{md_escape(tokens[qi])}” to key “{md_escape(tokens[kj])}” made "
                "from q and k?",
                f"q · k = {fmt(nv.dot)}; times the scale {fmt(arun.scale)}"
                + (f" and divided by τ = {arun.temperature:g}" if arun.temperature != 1 else "")
                + f" gives the logit {fmt(nv.logit)}; the softmax over the row's {nv.visible} visible keys "
                f"turns it into {fmt(nv.weight)}.",
            )
        )
    questions.append(
        (
            "How many attention maps does the model view draw?",
            f"{L} layer{'s' if L != 1 else ''} x {H} head{'s' if H != 1 else ''} = {L * H} maps, each {T} x {T}.",
        )
    )
    return questions


page.run(_draw, code=(model_attention_run, recompute_layer, neuron_view))
