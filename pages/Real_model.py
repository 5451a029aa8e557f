"""Real transformer attention: a pretrained model's heads on a typed sentence (the embedded model works with no
network), what its heads do, and proof that attention_core recomputes exactly what the model computed."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.config import DEFAULT_SENTENCE
from attention_core.hf import hide_special, recompute_layer
from attention_core.model_views import MODEL_MAX_TOKENS, TOKEN_LIMITS, attention_run, model_forward, neuron_view
from attention_core.real_heads import WINOGRAD, head_roles
from ui.compute import cached_attention_run, cached_head_roles, cached_model_view, model_weights_run
from ui.draw import vega
from ui.draw.charts import bar_chart
from ui.draw.tables import show_table
from ui.lessons.real_model.head_view import WIDTH as HEAD_VIEW_WIDTH
from ui.lessons.real_model.head_view import head_view_chart
from ui.lessons.real_model.model import default_head, hf_model_ui, role_sentences, roles_tables
from ui.lessons.real_model.model_view import pick_model_view_head, show_model_view
from ui.lessons.real_model.text import check_questions, truncation_note
from ui.lessons.real_model.words import word_section
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam, link_length, too_long_for_link
from ui.skeleton.widgets import head_picker, index_picker
from ui.text import fmt, fmt_all, head_name, md_escape

SENTENCE_CHARS = 4000  # the longest sentence (typed or from a link) this page takes: room for 512 tokens
SENTENCE_LINK_BYTES = 6000  # a longer sentence, percent-encoded, stays out of the link (it would pass 16 KB)
SENTENCE = PageParam(  # the typed sentence, in the link once it is not the class's
    "rm_text",
    "text",
    DEFAULT_SENTENCE,
    chars=SENTENCE_CHARS,
    omit_default=True,
    link_bytes=SENTENCE_LINK_BYTES,
    label="Sentence",
    fallback="the class's sentence",
)
TOKENS = PageParam(
    "rm_max_tokens",
    "tokens",
    MODEL_MAX_TOKENS,
    choices=TOKEN_LIMITS,
    integer=True,
    label="Read at most this many tokens",
    widget="select_slider",
)

page = Page(
    __file__,
    "The toy pages teach the mechanism; here is the same mechanism inside a trained model. Type a sentence and "
    "look at its heads: every layer and head at once (model view), where each token looks (head view), and how "
    "one weight is made from q and k (neuron view). The embedded model comes with the app: no network needed.",
)
st.latex(
    r"a_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}\right),\qquad "
    r"q_i = x_i W_q + b_q,\; k_j = x_j W_k + b_k"
)


def _draw() -> list[Question]:
    """The sentence and model, what the heads do, the model, head and neuron views, and the parity."""
    page.keep_in_url()  # the shared what-if setting stays in the link; this page does not use it
    text, max_tokens = _sentence()
    loaded = hf_model_ui(page, text, max_tokens)
    if loaded is None:  # no model could be loaded (the message above says why): the page ends here
        return []
    name, arun = loaded
    _truncation_note(arun, max_tokens)
    roles_box = st.container()  # drawn after the model view, so that the view's bytes leave first
    hide, attn, tokens = _shown_tokens(arun)
    L, H, T = arun.shape[0], arun.shape[1], len(tokens)
    _model_view_section(name, text, max_tokens, hide, L, H, T)
    roles = _roles_section(roles_box, name, text, max_tokens, arun, L * H)

    first_layer, first_head = default_head(roles)
    c1, c2 = st.columns(2)
    layer = index_picker(
        "layer", [f"layer {i + 1}" for i in range(L)], key="rm_layer", container=c1, default=first_layer
    )
    head = head_picker("head", H, key="rm_head", container=c2, default=first_head)
    pick_model_view_head(layer, head, key="rm_model_view_pick")  # the view's enlarged head follows the pickers
    col_head, col_neuron = st.columns(2)
    with col_head:
        row, top = _head_view(attn[layer, head], tokens, layer, head)
    core = cached_attention_run(name, text, max_tokens)  # attention_core recomputes every layer: q, k and parity
    with col_neuron:
        nv, qi, kj = _neuron_view(core, attn, tokens, layer, head, hide)
    _parity_section(core, L)

    return check_questions(tokens, attn[layer, head], (layer, head), (row, top), (nv, qi, kj), core.scale, L, H)


def _sentence() -> tuple[str, int]:
    """The sentence box and the token limit (page controls, ``text=`` and ``tokens=`` in the link): ``(sentence,
    most tokens to read)``; an empty sentence reads the class's."""
    text = page.control(SENTENCE)
    max_tokens = page.control(TOKENS)
    if too_long_for_link(SENTENCE, text):
        st.caption(
            f"This sentence is too long for a link ({link_length(SENTENCE, text):,} characters once encoded for a web "
            f"address, at most {SENTENCE.link_bytes:,}): the share link leaves it out, so whoever opens it sees the "
            "class's sentence. Share a shorter one, or send the text itself."
        )
    if not text.split():
        st.warning("The sentence is empty: type at least one word. Showing the class's sentence instead.")
        return DEFAULT_SENTENCE, max_tokens
    return text, max_tokens


def _truncation_note(arun, max_tokens: int) -> None:
    """Say so when the sentence had more tokens than the model read."""
    if arun.truncated:
        st.info(truncation_note(arun.sentence_tokens, max_tokens))


def _shown_tokens(arun) -> tuple[bool, np.ndarray, list[str]]:
    """The switch that hides the special tokens: ``(hidden, weights (L, H, T, T), tokens)`` as the page shows them."""
    can_hide = bool(arun.special.any() and not arun.special.all())
    hide = (
        st.toggle(
            "Hide special tokens ([CLS], [SEP], <|endoftext|>) and renormalise the rows",
            key="rm_hide",
            disabled=not can_hide,
        )
        and can_hide
    )
    if not hide:
        return hide, arun.attentions, list(arun.tokens)
    st.caption(
        "Display choice: special tokens often soak up attention ('no-op' heads). Their rows and columns are "
        "removed and every remaining row rescaled to sum to 1; the model itself still attended to them."
    )
    tokens = [t for t, s in zip(arun.tokens, arun.special) if not s]
    return hide, hide_special(arun.attentions, arun.special), tokens


def _model_view_section(name: str, text: str, max_tokens: int, hide: bool, L: int, H: int, T: int) -> None:
    """Every layer and head at once, drawn by the browser."""
    st.subheader("Model view")
    show_model_view(cached_model_view(name, text, max_tokens, hide), key="rm_model_view")
    st.caption(
        f"Every layer (rows, 1 to {L}) and head (columns, 1 to {H}) of {md_escape(name)}, each a {T} x {T} map "
        "(a row per query, a column per key) on one colour scale, 0 (purple) to 1 (yellow)"
        + ("; where a tile has fewer pixels than the head has tokens, a pixel shows the largest weight it covers")
        + ". The head the layer and head pickers below name is drawn enlarged beside the grid (under it where the "
        "page is too narrow), with its tokens; hover a tile for the query, the key and the weight, and to enlarge "
        "that head until the pointer leaves the grid."
    )


def _roles_section(box, name: str, text: str, max_tokens: int, arun, n_heads: int):
    """What the heads do on this sentence (into ``box``, above the model view) and where one word looks; returns
    the heads' roles."""
    roles, toy = cached_head_roles(name, text, max_tokens)
    with box:
        st.subheader("What the heads do on this sentence")
        for sentence in role_sentences(roles, arun.tokens, arun.special, toy):
            st.markdown(sentence)
        with st.expander(f"Every head's figures ({n_heads} heads)"):
            where, peaked = roles_tables(roles)
            st.caption(
                "Where each head looks: the mean weight a word gives its previous and next word and the first and "
                "last token (and the pronoun its referent, when the sentence has both)."
            )
            show_table(st, where.round(3), hide_index=True, width="stretch")
            st.caption("How peaked each head is: the toy pages' saturation figures (means over the words' rows).")
            show_table(st, peaked.round(3), hide_index=True, width="stretch")
        st.subheader("Where one word looks")
        word_section(arun, [model_weights_run(name, s, max(max_tokens, 32)) for s in WINOGRAD])  # never cut
    return roles


def _head_view(W: np.ndarray, tokens: list[str], layer: int, head: int) -> tuple[int, int]:
    """One head's lines from queries to keys; returns ``(query row, its strongest key)`` as the summary names them."""
    T = len(tokens)
    st.markdown(f"**Head view**: layer {layer + 1}, {head_name(head)}")
    iso = st.selectbox(
        "Isolate a query token",
        [None, *range(T)],
        key="rm_iso",
        format_func=lambda i: "all tokens" if i is None else f"{tokens[i]} (#{i + 1})",
    )
    row = iso if iso is not None else int(np.argmax(W.max(axis=1)))
    top = int(np.argmax(W[row]))
    summary = (
        ("" if iso is not None else "The strongest single weight: ")
        + f"query {md_escape(tokens[row])} (#{row + 1}) looks most at {md_escape(tokens[top])} "
        f"(#{top + 1}) with weight {fmt(float(W[row, top]))}."
    )
    chart = head_view_chart(W, tokens, isolate=iso, title=f"layer {layer + 1}, {head_name(head)}")
    described = chart.properties(
        description=f"Head view of layer {layer + 1}, {head_name(head)}: {T} query tokens on the left, the "
        f"same tokens as keys on the right, a line per weight of at least 0.02, opacity 0 to 1. " + summary
    )
    vega.draw(None, vega.arrow_datasets(described.to_dict()), width=HEAD_VIEW_WIDTH)
    st.caption(
        f"All {T} tokens, queries on the left and keys on the right; line opacity is the weight on a 0 to 1 "
        "scale (lines under 0.02 are not drawn); hover a token on the left to isolate it. " + summary
    )
    return row, top


def _neuron_view(core, attn: np.ndarray, tokens: list[str], layer: int, head: int, hide: bool):
    """How one weight is made from q and k, from attention_core's recomputation ``core``: ``(view or None, query,
    key)``."""
    st.markdown("**Neuron view**: how one weight is made from q and k")
    c1, c2 = st.columns(2)
    qi = index_picker("query", tokens, key="rm_nq", container=c1)
    kj = index_picker("key", tokens, key="rm_nk", container=c2, default=min(1, len(tokens) - 1))
    if hide:
        st.caption("The neuron view works on the model's own tokens; turn off 'Hide special tokens' to use it.")
        return None, qi, kj
    if core.q is None:
        st.caption(core.no_parity)
        return None, qi, kj
    nv = neuron_view(core, layer, head, qi, kj)
    spec = bar_chart(
        nv.products,
        [str(d) for d in range(len(nv.q))],
        title="q ⊙ k, dimension by dimension",
        value_name="q×k",
        axis_name="dimension",
        every=4 if len(nv.q) > 16 else 1,  # half a page holds about 8 labels of two digits
    )
    vega.draw(
        None,
        {
            **spec,
            "description": f"Bar chart of q times k for each of the {len(nv.q)} dimensions of layer "
            f"{layer + 1}, {head_name(head)}, query {tokens[qi]} and key {tokens[kj]}; they sum to "
            f"q · k = {fmt(nv.dot)}.",
        },
    )
    cols = [*st.columns(2), *st.columns(2)]  # two a row: at four in half a page the labels were cut
    cols[0].metric("q · k", fmt(nv.dot), help="the sum of the bars above")
    cols[1].metric("scale = 1/√d_k", fmt(core.scale), help=f"d_k = {len(nv.q)} dimensions per head")
    cols[2].metric("logit = q · k × scale", fmt(nv.logit))
    cols[3].metric("weight = softmax of the logits", fmt(nv.weight))
    st.caption(
        f"The weight of {md_escape(tokens[qi])} → {md_escape(tokens[kj])} is e^(logit) over the sum of "
        f"e^(logits) of the row's {nv.visible} visible key{'s' if nv.visible != 1 else ''}; the model's own "
        f"weight for this cell is {fmt(float(attn[layer, head, qi, kj]))}."
    )
    rows = min(len(nv.q), 5)  # whole rows: the grid's header and rows are 35 px, and 3 px of border
    show_table(
        st,
        {"dim": np.arange(len(nv.q)), "q": fmt_all(nv.q), "k": fmt_all(nv.k), "q × k": fmt_all(nv.products)},
        hide_index=True,
        width="stretch",
        height=38 + 35 * rows,
    )
    return nv, qi, kj


def _parity_section(core, L: int) -> None:
    """attention_core's weights against the model's own, layer by layer."""
    st.subheader("Parity with attention_core")
    if core.parity is None:
        st.caption(core.no_parity)
        return
    worst = fmt(float(core.parity.max()))  # one formatter: the metric, the sentence and the table's cell agree
    st.metric("max |attention_core − model| over every layer and head", worst)
    st.markdown(
        f"attention_core recomputed the weights of all {L} layers from the input each layer received and its "
        f"own W_q, W_k (and biases): the largest difference from the model's `output_attentions` (the weights the model itself reports) is "
        f"{worst}, float rounding (the model computes in float32, 32-bit numbers with about half the digits of "
        "float64, attention_core in float64)."
    )
    show_table(
        st,
        pd.DataFrame({"layer": np.arange(1, L + 1), "max |attention_core − model|": fmt_all(core.parity)}),
        hide_index=True,
    )


page.run(_draw, code=(model_forward, attention_run, recompute_layer, head_roles, neuron_view))
