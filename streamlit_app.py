"""Attention Explorer: home page. What self-attention is, the formula, a live example, the pages."""

import numpy as np
import streamlit as st

from attention_core import class_notes_weights, one_hot_embeddings, position_labels, scaled_dot_product_attention
from ui.classroom.pulse_device import join_box
from ui.draw.images import labelled_heatmap_png
from ui.lessons.home.gallery import preset_gallery
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.registry import PAGES

page = Page(
    __file__,
    title="Attention Explorer",
    intro="Self-attention lets every **token** of a sequence (a word or a piece of a word) look at every other "
    "token and take a weighted mix of what it finds. The weights are learned *similarities*: each token asks a question "
    "(its **query**), every token offers a description of itself (its **key**), and the answer is a "
    "blend of the tokens' contents (their **values**), weighted by how well query and key match: the **softmax** "
    "turns each token's match scores into weights that are positive and add up to 1, the best match getting the "
    "most. Move the sliders on any page and watch the weights, the outputs and the softmax change.",
    formula=r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,"
    r"\qquad Q = X W_q,\; K = X W_k,\; V = X W_v",
)


def _draw() -> list[Question]:
    """Joining a class, the three roles, the class-notes example, the classroom presets and the list of pages."""
    join_box()  # a student in a class types the code the projector shows
    c1, c2, c3 = st.columns(3)
    c1.markdown("**Query** $q_i = x_i W_q$: what token *i* is looking for.")
    c2.markdown("**Key** $k_j = x_j W_k$: what token *j* offers to be found by; $q_i \\cdot k_j$ scores the match.")
    c3.markdown("**Value** $v_j = x_j W_v$: what token *j* hands over when it is attended to.")
    st.markdown(
        "$X$ holds one row per token (its **embedding**, $d_{model}$ numbers that stand for the token); $W_q$, $W_k$, "
        "$W_v$ are learned matrices, the **projections**, that turn an embedding into its query, key and value. "
        "$d_k$ is the length of a query or key vector: the scores $q_i \\cdot k_j$ are sums of $d_k$ products, so "
        "they grow with $d_k$, and dividing by $\\sqrt{d_k}$ keeps them in a range where the softmax still spreads "
        "its weight. A model runs several such attentions side by side, its **heads**, each with its own $W_q$, "
        "$W_k$, $W_v$ and queries and keys of $d_k$ numbers."
    )

    st.subheader("A live example: every token looks for B")
    E, _ = one_hot_embeddings("A A B A")
    w_q, w_k, w_v = class_notes_weights()
    d_k = w_k.shape[1]
    Z, A = scaled_dot_product_attention(E @ w_q, E @ w_k, E @ w_v)
    _, A_plain = scaled_dot_product_attention(E @ w_q, E @ np.eye(2), E @ w_v)  # the same without the key booster
    s_b = float((E @ w_q)[0] @ (E @ w_k)[2]) / np.sqrt(d_k)  # A1's scaled score for B3
    labels = position_labels(["A", "A", "B", "A"])
    left, right = st.columns([1, 2])
    left.image(
        labelled_heatmap_png(A, labels, labels, decimals=3),
        output_format="PNG",
        caption=f"Attention weights α = softmax(QKᵀ/√{d_k}), d_k = {d_k}: a row per query, a column per key; "
        "colour purple (0) to yellow (1), each cell's weight written in it.",
        alt=f"Attention weights of A1 A2 B3 A4, a 4 x 4 map, queries by keys: every query puts {A[0, 2]:.4f} of its "
        f"weight on B3 and {A[0, 0]:.4f} on each A.",
    )
    right.markdown(
        f"Tokens **A1 A2 B3 A4** are one-hot (a single 1 in each vector: A = [1, 0], B = [0, 1]), so queries and "
        f"keys have d_k = {d_k} numbers. $W_q$ maps every token to the query [0, 1], *looking for B*; "
        "$W_k = 10\\,I$ (I the identity matrix, so each key is its embedding scaled up) boosts the keys. "
        f"Every query therefore puts **{A[0, 2]:.4f}** of its weight on B3 and only {A[0, 0]:.4f} on each A, so each "
        f"output row Z = α V = [{Z[0, 0]:.4f}, {Z[0, 1]:.4f}] has moved almost all the way to B. Without the booster "
        f"($W_k = I$) B3 would get only {A_plain[0, 2]:.4f}."
    )
    first = PAGES[0]
    right.page_link(first.path, label=f"Start here: {first.label}", icon=first.icon)

    st.subheader("Classroom experiments")
    st.markdown(
        "Each card opens a ready-made what-if on its page; share its link and every student gets the same setting."
    )
    preset_gallery()

    st.subheader("Pages, in reading order")
    for i, p in enumerate(PAGES, start=1):
        a, b = st.columns([2, 3])  # at 1280 px a quarter cut "15. Sinks and linear attention"
        a.page_link(p.path, label=f"{i}. {p.label}", icon=p.icon)
        b.markdown(p.teaches)
    st.caption(
        "Home has no controls. On the pages, the what-if settings sit in the sidebar and the address bar "
        "always holds them: copy it to share an experiment."
    )
    return [
        (
            "In the live example, how much of A1's attention goes to B3, and why so much?",
            f"{A[0, 2]:.4f}. Every query is [0, 1] and B3's key is 10 x [0, 1], so q·k = {s_b * np.sqrt(d_k):g} for B3 "
            f"and 0 for each A; after dividing by √d_k = √{d_k} the softmax gives B3 e^{s_b:.2f} / (e^{s_b:.2f} + 3) = "
            f"{A[0, 2]:.4f}.",
        ),
        (
            "What does W_k = 10 I change compared with W_k = I?",
            f"With W_k = I, B3's scaled score is only {s_b / 10:.3f} instead of {s_b:.2f}, so its weight is "
            f"{A_plain[0, 2]:.4f} instead of {A[0, 2]:.4f}: a bigger gap between scores makes the softmax sharper.",
        ),
        (
            "Which token's value does every output row Z end up close to?",
            f"B's value [0, 1]: Z = [{Z[0, 0]:.4f}, {Z[0, 1]:.4f}] for every row, because every row attends almost "
            "only to B3.",
        ),
    ]


page.keep_in_url()  # Home draws no controls, but a link's settings stay in the address bar
page.run(_draw)
