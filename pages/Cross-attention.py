"""Self-attention vs cross-attention: queries from one sequence, keys and values from another."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import multi_head_attention
from attention_core.config import MAX_SEED
from attention_core.cross_attention import run_cross_attention
from attention_core.readout import sharpness
from ui.compute import cached_cross
from ui.draw.charts import is_vector, show_weights
from ui.draw.query_bars import query_bars
from ui.session.partial import full_run, rerun_body
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker, index_picker
from ui.text import fmt, head_name, md_escape

DEFAULT_Q, DEFAULT_KV = "the cat sat on the mat", "le chat est assis sur le tapis"

page = Page(
    __file__,
    "In self-attention Q, K and V all come from the same sequence. In cross-attention the **queries** come "
    "from one sequence (say, the translation being written by the decoder) and the **keys and values** from another "
    "(the sentence being translated, read by the **encoder**: the part of the model that reads the whole input "
    "first), so the weight map is T_q x T_k, not square.",
)
st.latex(
    r"\mathrm{CrossAttention}(X_q, X_{kv}) = \mathrm{softmax}\!\left(\frac{(X_q W_q)(X_{kv} W_k)^\top}"
    r"{\sqrt{d_k}}\right) X_{kv} W_v"
)


def _sequences(cfg):
    """The query and key/value settings for the page's controls, and whether a typed box was empty."""
    ss = st.session_state
    base = cfg.replace(positional=False, mask="none")  # this page adds no positions and no mask
    if ss["ca_source"] == "typed sentences":
        try:
            return (
                base.replace(input_kind="sentence", sentence=ss["ca_q"]),
                base.replace(input_kind="sentence", sentence=ss["ca_kv"]),
                False,
            )
        except ValueError:
            return (
                base.replace(input_kind="sentence", sentence=DEFAULT_Q),
                base.replace(input_kind="sentence", sentence=DEFAULT_KV),
                True,
            )
    q_cfg = base.replace(input_kind="random", seq_len=ss["ca_tq"])
    return q_cfg, base.replace(input_kind="random", seq_len=ss["ca_tk"], seed=(cfg.seed + 1) % (MAX_SEED + 1)), False


def _controls() -> tuple:
    """The full-run part: the sidebar, the two sequences and the head and query pickers (the sequences rerun the
    page: the query picker lists their tokens); the places the body fills."""
    cfg = page.whatif(show=("d_model", "n_heads", "scaled", "temperature", "seed"))
    source = st.radio(
        "Sequences", ["typed sentences", "seeded random"], horizontal=True, key="ca_source", on_change=full_run
    )
    c1, c2 = st.columns(2)
    if source == "typed sentences":
        c1.text_input("Query sequence (decoder side)", DEFAULT_Q, key="ca_q", max_chars=3000, on_change=full_run)
        c2.text_input("Key/value sequence (encoder side)", DEFAULT_KV, key="ca_kv", max_chars=3000, on_change=full_run)
    else:
        c1.slider("T_q (query tokens)", 1, 256, 5, key="ca_tq", on_change=full_run)
        c2.slider("T_k (key/value tokens)", 1, 256, 9, key="ca_tk", on_change=full_run)
    q_cfg, kv_cfg, empty = _sequences(cfg)
    if empty:
        st.error("Each box needs at least one word; showing the default sentences.")
    notes = st.container()
    c1, c2 = st.columns(2)
    head_picker("head", cfg.n_heads, key="ca_head", container=c1, on_change=rerun_body)
    index_picker(
        "query token", cached_cross(q_cfg, kv_cfg).tokens_q, key="ca_query", container=c2, on_change=rerun_body
    )
    return notes, st.container()


def _draw(notes, rest) -> list[Question]:
    """The T_q x T_k map, a query's bars and the self-attention contrast, into the places."""
    cfg = page.setting()
    q_cfg, kv_cfg, _ = _sequences(cfg)
    run = cached_cross(q_cfg, kv_cfg)
    for note in run.notices:
        notes.info(note)
    T_q, T_k, D = run.T_q, run.T_k, cfg.d_model
    tok_q, tok_kv = run.tokens_q, run.tokens_kv

    head, q_row = st.session_state["ca_head"], st.session_state["ca_query"]
    with rest:
        _weights_section(cfg, run, head)
        top = _query_section(cfg, run, q_row)
        _self_vs_cross()
        return [
            (
                f"What shape do the weights of {head_name(head)} have here, and why is it not square?",
                f"{T_q} x {T_k}: one row per query token of the query sequence ({T_q} tokens), one column per key "
                f"of the key/value sequence ({T_k} tokens).",
            ),
            (
                f"Which key does query {md_escape(tok_q[q_row])} (#{q_row + 1}) attend to most in {head_name(head)}, "
                "and does that mean anything?",
                f"{md_escape(tok_kv[top])} (#{top + 1}) with weight {fmt(float(run.weights[head, q_row, top]))}. It "
                f"means nothing yet: the projection weights are random (seed {cfg.seed}) and untrained.",
            ),
            (
                "What shape does the output have, and what would change if the key/value sequence were longer?",
                f"{T_q} x {D}. A longer key/value sequence adds columns to the weights but the output keeps one row per "
                "query.",
            ),
        ]


def _weights_section(cfg, run, head: int) -> None:
    """The picked head's T_q x T_k map, and why its weights mean nothing yet."""
    T_q, T_k = run.T_q, run.T_k
    tok_q, tok_kv = run.tokens_q, run.tokens_kv
    st.subheader(f"Cross-attention weights: {T_q} queries x {T_k} keys")
    left, right = st.columns([3, 2])
    show_weights(
        run.weights[head],
        tok_q,
        tok_kv,
        # an image states its shape in its caption; a vector map states it in its title (never both)
        title=f"{head_name(head)}: {T_q} x {T_k}" if is_vector((T_q, T_k)) else head_name(head),
        size=360,
        max_px=384,
        container=left,
    )
    w = run.weights[head]  # (T_q, T_k)
    top_per_q = w.argmax(axis=-1)  # (T_q,)
    best = int(np.argmax(w.max(axis=-1)))
    m = float(w.max(axis=-1).mean())
    level = sharpness(m, 1.0 / T_k)
    right.markdown(
        "**These weights are random, not learned.** W_q, W_k, W_v and W_o are seeded random matrices "
        f"(seed {cfg.seed}) that no one trained, and each word's vector is random too. So when "
        f"**{md_escape(tok_q[best])}** puts {fmt(float(w[best, top_per_q[best]]))} on "
        f"**{md_escape(tok_kv[top_per_q[best]])}**, that is chance, not a translation. A trained decoder learns W_q and "
        "W_k so that a word looks at its counterpart; the Real model page shows trained attention."
    )
    right.caption(
        f"Rows are queries, columns keys; each row sums to 1 (the legend gives the colour range). Mean max weight "
        f"{fmt(m)} against {fmt(1 / T_k)} for uniform rows over {T_k} keys: {level} here."
    )


def _query_section(cfg, run, q_row: int) -> int:
    """One query's weights over the other sequence's keys, and the shapes; returns its strongest key."""
    T_q, T_k, D = run.T_q, run.T_k, cfg.d_model
    tok_q, tok_kv = run.tokens_q, run.tokens_kv
    w = run.weights[st.session_state["ca_head"]]
    row = w[q_row]
    top = int(np.argmax(row))
    note = query_bars(row, tok_kv, title=f"weights of query #{q_row + 1} over the {T_k} keys of the other sequence")
    st.caption(
        f"Query **{md_escape(tok_q[q_row])}** (#{q_row + 1}) puts {fmt(float(row[top]))} of its weight on "
        f"**{md_escape(tok_kv[top])}** (#{top + 1}); its weights sum to 1 over the {T_k} keys of the *other* "
        f"sequence, so its output row mixes that sequence's values. {note}"
    )
    st.markdown(
        f"Shapes: Q is {T_q} x {cfg.d_k} per head (from the query sequence), K and V are {T_k} x {cfg.d_k} "
        f"(from the key/value sequence), the weights {T_q} x {T_k}, and the output **{T_q} x {D}**: one row per "
        f"query, whatever T_k is."
    )
    return top


def _self_vs_cross() -> None:
    """Self-attention and cross-attention side by side, as a table."""
    st.subheader("Self-attention vs cross-attention")
    st.table(  # a static table wraps long cells (a dataframe clipped the last column at 1280 px)
        pd.DataFrame(
            {
                "": [
                    "Q comes from",
                    "K and V come from",
                    "weight map",
                    "where in a transformer",
                    "what it answers",
                ],
                "self-attention": [
                    "the sequence itself",
                    "the same sequence",
                    "T x T (square)",
                    "every encoder layer; decoder layers (with a causal mask)",
                    "which other tokens of my own sequence matter to me?",
                ],
                "cross-attention": [
                    "the decoder's sequence",
                    "the encoder's output",
                    "T_q x T_k (rectangular)",
                    "each decoder layer, after its masked self-attention",
                    "which tokens of the source sequence matter to what I am producing?",
                ],
            }
        ).set_index("")
    )


page.run(_draw, _controls, code=(run_cross_attention, multi_head_attention))
