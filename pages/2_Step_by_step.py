"""Step by step: the class-notes example, one matrix at a time, with editable W_q, W_k, W_v."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import (attention_scores, class_notes_weights, format_matrix, one_hot_embeddings, parse_matrix,
                            position_labels, random_projection_weights, softmax)
from attention_core.matrices import check_matrix
from ui.charts import matrix_frame, show_heatmap
from ui.controls import fmt, share_box, sidebar_controls
from ui.classroom import classroom_toggle, prediction_gate
from ui.layout import page_setup, show_code
from ui.widgets import index_picker

page_setup("Step by step", "🧮",
           "The worked example from the class notes: four tokens **A1 A2 B3 A4**, one-hot embeddings, and "
           "a query matrix that makes every token *look for B*. Follow the numbers from E to Z; edit any "
           "weight matrix and watch every later step change.")
cfg = sidebar_controls(show=("scaled", "temperature", "seed"), heading="Controls for this walkthrough", share=False)

VOCAB = ["A", "B"]
PRESETS = ("looking for B", "identity", "seeded random")
W_NAMES = ("W_q", "W_k", "W_v")
URL_KEYS = {"W_q": "wq", "W_k": "wk", "W_v": "wv"}


def preset_matrices(preset: str, seed: int) -> dict[str, np.ndarray]:
    if preset == "looking for B":
        return dict(zip(W_NAMES, class_notes_weights()))
    if preset == "identity":
        return {n: np.eye(2) for n in W_NAMES}
    rng_ws = random_projection_weights(2, seed=seed, n=3)
    return {n: np.round(w.astype(np.float64), 2) for n, w in zip(W_NAMES, rng_ws)}


# ---- tokens
tokens_text = st.text_input("Tokens (A and B, separated by spaces)", value="A A B A", key="sbs_tokens", max_chars=80)
symbols = tokens_text.split()
if not symbols or len(symbols) > 16 or any(s not in VOCAB for s in symbols):
    st.error(f"Tokens must be 1 to 16 symbols, each A or B, separated by spaces; got {tokens_text!r}. "
             "Using A A B A.")
    symbols = ["A", "A", "B", "A"]
labels = position_labels(symbols)
E, _ = one_hot_embeddings(symbols, vocabulary=VOCAB)
E = E.astype(np.float64)

# ---- weights: preset, link, or edited
if "sbs_good" not in st.session_state:
    st.session_state.sbs_good = preset_matrices("looking for B", cfg.seed)
    st.session_state.sbs_base = dict(st.session_state.sbs_good)
    st.session_state.sbs_version = 0
    link_errors = []
    for name, p in URL_KEYS.items():
        if p in st.query_params:
            try:
                st.session_state.sbs_good[name] = parse_matrix(name, st.query_params[p], (2, 2))
                st.session_state.sbs_base[name] = st.session_state.sbs_good[name]
            except ValueError as exc:
                link_errors.append(str(exc))
    st.session_state.sbs_link_errors = link_errors


def load_preset():
    mats = preset_matrices(st.session_state.sbs_preset, st.session_state.get("whatif").seed)
    st.session_state.sbs_good = dict(mats)
    st.session_state.sbs_base = dict(mats)
    st.session_state.sbs_version += 1


for err in st.session_state.pop("sbs_link_errors", []):
    st.warning(f"Link ignored: {err}. Using the preset instead.")
st.radio("Weight preset", PRESETS, key="sbs_preset", horizontal=True, on_change=load_preset,
         help="Loading a preset replaces any edits.")
st.markdown("Edit a cell to change a matrix. Rows are the input dimensions (A, B), columns the output dimensions.")
cols = st.columns(3)
W = {}
for col, name in zip(cols, W_NAMES):
    base = pd.DataFrame(st.session_state.sbs_base[name], index=["A", "B"], columns=["0", "1"])
    edited = col.data_editor(base, key=f"sbs_{name}_{st.session_state.sbs_version}",
                             column_config={c: st.column_config.NumberColumn(c, format="%.4g") for c in base.columns})
    col.caption(f"**{name}**")
    try:
        W[name] = check_matrix(name, edited.to_numpy(dtype=np.float64, na_value=np.nan), (2, 2))
        st.session_state.sbs_good[name] = W[name]
    except ValueError as exc:
        col.error(f"{exc}. Keeping the last good {name}.")
        W[name] = st.session_state.sbs_good[name]
edited_any = any(not np.array_equal(W[n], preset_matrices(st.session_state.sbs_preset, cfg.seed)[n]) for n in W_NAMES)
for name, p in URL_KEYS.items():
    if edited_any:
        st.query_params[p] = format_matrix(W[name])
    elif p in st.query_params:
        del st.query_params[p]
share_box(st.sidebar)  # after the matrices are in the URL

# ---- the steps
Q, K, V = E @ W["W_q"], E @ W["W_k"], E @ W["W_v"]
S = attention_scores(Q, K, scaled=False)
d_k = Q.shape[1]
S_scaled = S / math.sqrt(d_k) if cfg.scaled else S
A = softmax(S_scaled, temperature=cfg.temperature)
Z = A @ V


def step(title: str, latex: str, matrix, cols_prefix: str, sentence: str, row_labels=labels):
    st.markdown(f"#### {title}")
    st.latex(latex)
    left, right = st.columns([2, 3])
    left.dataframe(matrix_frame(np.round(matrix, 4), row_labels, cols_prefix))
    right.markdown(sentence)


st.divider()
step("1. Embeddings E", r"E \in \{0,1\}^{T \times 2},\; A = [1, 0],\; B = [0, 1]", E, "e",
     f"{len(symbols)} tokens, one row each. The B tokens are {', '.join(l for l in labels if l.startswith('B')) or 'absent'}.")
step("2. Queries Q = E W_q", r"Q = E\,W_q", Q, "q",
     f"Each row is the question its token asks. Query of {labels[0]}: [{fmt(Q[0, 0])}, {fmt(Q[0, 1])}]"
     + (" — every token asks the same question, *looking for B*." if np.allclose(Q, Q[0]) else "."))
step("3. Keys K = E W_k", r"K = E\,W_k", K, "k",
     f"Each row is how its token advertises itself. Key of {labels[0]}: [{fmt(K[0, 0])}, {fmt(K[0, 1])}].")
step("4. Values V = E W_v", r"V = E\,W_v", V, "v",
     "What each token hands over when attended to" + (" (here the embeddings themselves: W_v = I)." if np.allclose(W["W_v"], np.eye(2)) else "."))
if classroom_toggle():
    pq = index_picker("Query to predict", labels, key="sbs_pq")
    signature = (cfg, tuple(symbols), tuple(W[n].tobytes() for n in W_NAMES), pq)
    if not prediction_gate("step", signature, A[pq], labels[pq], labels):
        st.stop()  # the scores, weights and outputs below stay hidden until the reveal
best = np.unravel_index(np.argmax(S), S.shape)
step("5. Scores S = Q Kᵀ", r"S_{ij} = q_i \cdot k_j", S, "",
     f"Row i scores query i against every key. The largest score is {fmt(S[best])} ({labels[best[0]]} against {labels[best[1]]}).",
     row_labels=labels)
st.latex(rf"d_k = {d_k},\qquad \sqrt{{d_k}} = {math.sqrt(d_k):.4f}")
step("6. Scaled scores S / √d_k" + ("" if cfg.scaled else " (scaling is off: unchanged)"),
     r"\tilde S = S / \sqrt{d_k}" if cfg.scaled else r"\tilde S = S", S_scaled, "",
     f"Dividing by √d_k keeps the scores' spread independent of d_k. The top score becomes {fmt(S_scaled[best])}"
     + (f", then the temperature {cfg.temperature:g} divides it again." if cfg.temperature != 1 else "."))
a_frame = np.concatenate([A, A.sum(1, keepdims=True)], 1)
st.markdown("#### 7. Weights A = softmax(S̃ / τ), row by row")
st.latex(rf"A_{{ij}} = \frac{{e^{{\tilde S_{{ij}}/\tau}}}}{{\sum_{{j'}} e^{{\tilde S_{{ij'}}/\tau}}}},\quad \tau = {cfg.temperature:g}")
left, right = st.columns([2, 3])
frame = matrix_frame(np.round(a_frame, 4), labels, "")
frame.columns = labels + ["row sum"]
left.dataframe(frame)
b_cols = [j for j, s in enumerate(symbols) if s == "B"]
on_b = A[:, b_cols].sum(1) if b_cols else np.zeros(len(symbols))
right.markdown(f"Every row sums to 1. Query {labels[0]} puts {fmt(A[0].max())} of its weight on "
               f"{labels[int(np.argmax(A[0]))]}; on average the queries put {fmt(float(on_b.mean()))} of their weight on B tokens.")
c1, c2 = st.columns(2)
show_heatmap(S, labels, labels, title="scores S", value_name="score", container=c1)
show_heatmap(A, labels, labels, title="weights A", domain=(0, 1), container=c2)
step("8. Outputs Z = A V", r"Z = A\,V", Z, "z",
     f"Each output row is the weighted mix of the value rows. {labels[0]}'s output is [{fmt(Z[0, 0])}, {fmt(Z[0, 1])}].")
st.markdown("#### 9. Before and after: E next to Z")
c1, c2 = st.columns(2)
c1.dataframe(matrix_frame(E, labels, "e"))
c2.dataframe(matrix_frame(np.round(Z, 4), labels, "z"))
moved = float(np.mean(Z[:, 1] - E[:, 1])) if "B" in symbols else 0.0
st.markdown(f"On average the rows moved {fmt(moved)} towards B in the second coordinate: the A tokens now carry B's "
            "content, which is what *looking for B* asked for." if moved > 0.5 else
            f"The rows moved on average {fmt(moved)} in the B coordinate.")
show_code(attention_scores, softmax)
