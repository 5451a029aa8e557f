"""Step by step: the class-notes example, one matrix at a time, with editable W_q, W_k, W_v."""

import math
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import class_notes_weights, format_matrix, parse_matrix, random_projection_weights
from attention_core.matrices import check_matrix
from attention_core.walkthrough import VOCAB, walkthrough
from ui.classroom.mode import classroom_on, predict, which_key
from ui.draw import vega
from ui.draw.tables import matrix_table, prefixed, show_matrix
from ui.lessons.step_by_step import text as step_text
from ui.lessons.step_by_step.charts import matrix_chart
from ui.session.partial import full_run
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam, clear_notes, set_value
from ui.skeleton.widgets import index_picker
from ui.text import fmt

page = Page(
    __file__,
    "The worked example from the class notes: four tokens **A1 A2 B3 A4**, one-hot embeddings, and "
    "a query matrix that makes every token *look for B*. Follow the numbers from E to Z; edit any "
    "weight matrix and watch every later step change. τ is the temperature, a dial in the sidebar: the scores are "
    "divided by it before the softmax (τ = 1 leaves them as they are).",
)
st.latex(r"Z = \operatorname{softmax}\!\Big(\frac{(E W_q)(E W_k)^\top}{\sqrt{d_k}\,\tau}\Big)\,E W_v")

PRESETS = ("looking for B", "identity", "seeded random")
W_NAMES = ("W_q", "W_k", "W_v")
# each matrix in the link (wq=1,0;0,1) while any of the three differs from the preset; None: the preset's
LINKED = {
    name: PageParam(
        f"sbs_link_{url}",
        url,
        None,
        parse=partial(parse_matrix, name, shape=(2, 2)),
        format=format_matrix,
        fallback="the preset",
    )
    for name, url in (("W_q", "wq"), ("W_k", "wk"), ("W_v", "wv"))
}
BOOST = 10.0  # the class notes' key booster: W_k = 10 I


def preset_matrices(preset: str, seed: int) -> dict[str, np.ndarray]:
    if preset == "looking for B":
        return {n: w.astype(np.float64) for n, w in zip(W_NAMES, class_notes_weights())}
    if preset == "identity":
        return {n: np.eye(2) for n in W_NAMES}
    rng_ws = random_projection_weights(2, seed=seed, n=3)
    return {n: np.round(w.astype(np.float64), 2) for n, w in zip(W_NAMES, rng_ws)}


def load_preset():
    clear_notes()  # a notice about the link's matrices no longer applies
    mats = preset_matrices(st.session_state.sbs_preset, st.session_state.get("whatif").seed)
    st.session_state.sbs_good = dict(mats)
    st.session_state.sbs_base = dict(mats)
    st.session_state.sbs_version += 1


def set_w_k(factor: float):
    """Keep W_q and W_v as they are (edits included) and set W_k = factor * I."""
    clear_notes()
    st.session_state.sbs_good = {**st.session_state.sbs_good, "W_k": factor * np.eye(2)}
    st.session_state.sbs_base = dict(st.session_state.sbs_good)
    st.session_state.sbs_version += 1


def step(title: str, latex: str, table, sentence: str):
    """A heading with its formula (one element), the table and the sentence beside it; a table of more than 6
    columns (7 tokens or more) takes the page's width, with the sentence under it."""
    st.markdown(f"#### {title}\n$$\n{latex}\n$$")
    if table.num_columns > 7:  # 6 columns + the index: beside a sentence it would scroll sideways at 1280 px
        show_matrix(st, table, width="stretch")
        st.markdown(sentence)
        return
    row = st.container(horizontal=True, gap="large")  # one block (columns send three): the body reruns per change
    show_matrix(row, table, width="content")
    row.markdown(sentence, width=360)  # a set width stays beside a table of up to 7 columns at 1280 px


def _controls() -> tuple:
    """The full-run part: tokens, preset, the three matrices, steps 1 to 5 (they depend on the tokens and the
    matrices alone), the booster's buttons, classroom mode; the places the body fills between them. The seed
    reruns the page (it picks the seeded preset's matrices)."""
    cfg = page.whatif(
        show=("scaled", "temperature", "seed"), heading="Controls for this walkthrough", leaf={"scaled", "temperature"}
    )
    symbols = _tokens()
    _seed_matrices(cfg.seed)
    W = _matrix_editors(cfg.seed)
    # ---- steps 1 to 5 depend on the tokens and the matrices only: drawn by the full run, not by the body
    wt = walkthrough(symbols, W["W_q"], W["W_k"], W["W_v"], scaled=cfg.scaled, temperature=cfg.temperature)
    _first_steps(wt)
    booster = st.container()
    b1, b2, _ = st.columns([1, 1, 2])
    b1.button("Set W_k = I", key="sbs_wk_plain", on_click=set_w_k, args=(1.0,), width="stretch")
    b2.button("Set W_k = 10·I (booster)", key="sbs_wk_boost", on_click=set_w_k, args=(BOOST,), width="stretch")
    revealed = _values_and_scores(cfg, wt, symbols, W)
    return booster, st.container(), symbols, W, revealed


def _tokens() -> list[str]:
    """The tokens box: its symbols, or the class notes' A A B A (with an error) when they cannot be read."""
    tokens_text = st.text_input(
        "Tokens (A and B, separated by spaces)", value="A A B A", key="sbs_tokens", max_chars=80, on_change=full_run
    )
    symbols = tokens_text.split()
    if not symbols or len(symbols) > 16 or any(s not in VOCAB for s in symbols):
        st.error(step_text.bad_tokens(tokens_text))
        return ["A", "A", "B", "A"]
    return symbols


def _seed_matrices(seed: int) -> None:
    """On the session's first run: the class notes' matrices, or the link's (``wq=``, ``wk=``, ``wv=``: page
    controls, LINKED); a matrix the link gives badly is refused with a notice that says what is allowed."""
    linked = {name: page.link(p) for name, p in LINKED.items()}
    if "sbs_good" not in st.session_state:
        good = preset_matrices("looking for B", seed)
        good.update({name: w for name, w in linked.items() if w is not None})
        st.session_state.sbs_good = good
        st.session_state.sbs_base = dict(good)
        st.session_state.sbs_version = 0
    st.radio(
        "Weight preset",
        PRESETS,
        key="sbs_preset",
        horizontal=True,
        on_change=load_preset,
        help="Loading a preset replaces any edits.",
    )


def _matrix_editors(seed: int) -> dict[str, np.ndarray]:
    """The three editable matrices (a bad cell keeps the last good matrix), mirrored into the link when they differ
    from the preset; returns them by name."""
    st.markdown("Edit a cell to change a matrix. Rows are the input dimensions (A, B), columns the output dimensions.")
    cols = st.columns(3)
    W = {}
    for col, name in zip(cols, W_NAMES):
        base = pd.DataFrame(st.session_state.sbs_base[name], index=["A", "B"], columns=["0", "1"])
        edited = col.data_editor(
            base,
            key=f"sbs_{name}_{st.session_state.sbs_version}",
            on_change=clear_notes,  # returns normally: the whole page reruns (ui.session.partial.full_run)
            column_config={c: st.column_config.NumberColumn(c, format="%.4g") for c in base.columns},
            width="content",  # the grid as wide as its cells (a 150 px column at 820 px made it scroll by 2 px)
        )
        col.caption(f"**{name}**")
        try:
            W[name] = check_matrix(name, edited.to_numpy(dtype=np.float64, na_value=np.nan), (2, 2))
            st.session_state.sbs_good[name] = W[name]
        except ValueError as exc:
            col.error(f"{exc}. Keeping the last good {name}.")
            W[name] = st.session_state.sbs_good[name]
    preset = preset_matrices(st.session_state.sbs_preset, seed)
    edited_any = any(not np.array_equal(W[n], preset[n]) for n in W_NAMES)
    for name, p in LINKED.items():
        set_value(p, W[name] if edited_any else None)  # written into the link when the run ends
    return W


def _values_and_scores(cfg, wt, symbols: list[str], W: dict) -> bool:
    """Step 4, the question to predict in classroom mode, then step 5 once revealed; returns whether it is."""
    labels = list(wt.labels)
    step(
        "4. Values V = E W_v",
        r"V = E\,W_v",
        matrix_table(wt.V, labels, prefixed("v", 2), text=True),
        step_text.values_sentence(W["W_v"]),
    )
    revealed = True
    if classroom_on():  # every change reruns the page then (ui/session/partial.py): the question depends on all
        pq = index_picker("Query to predict", labels, key="sbs_pq")
        signature = (cfg, tuple(symbols), tuple(W[n].tobytes() for n in W_NAMES), pq)
        revealed = predict(which_key("step", signature, wt.A[pq], labels[pq], labels))
    if revealed:  # the scores, weights and outputs stay hidden until the reveal
        step(
            "5. Scores S = Q Kᵀ",
            r"S_{ij} = q_i \cdot k_j",
            matrix_table(wt.S, labels, labels, text=True),
            step_text.scores_sentence(wt),
        )
        st.latex(rf"d_k = {wt.d_k},\qquad \sqrt{{d_k}} = {fmt(math.sqrt(wt.d_k))}")
    return revealed


def _first_steps(wt) -> None:
    """Steps 1 to 3: E, Q and K with their sentences."""
    labels = list(wt.labels)
    st.divider()
    step(
        "1. Embeddings E, a row for each of the T tokens",
        r"E \in \{0,1\}^{T \times 2},\; A = [1, 0],\; B = [0, 1]",
        matrix_table(wt.E, labels, prefixed("e", 2), text=True),
        step_text.embeddings_sentence(wt),
    )
    step(
        "2. Queries Q = E W_q",
        r"Q = E\,W_q",
        matrix_table(wt.Q, labels, prefixed("q", 2), text=True),
        step_text.queries_sentence(wt),
    )
    step(
        "3. Keys K = E W_k",
        r"K = E\,W_k",
        matrix_table(wt.K, labels, prefixed("k", 2), text=True),
        step_text.keys_sentence(wt),
    )


def _draw(booster, lower, symbols: list[str], W: dict, revealed: bool) -> list[Question]:
    """What the scaling and the temperature change: the booster's sentence, the scaled scores, the softmax, Z and
    the questions, into the places the full run left (steps 1 to 5 are drawn by the full run)."""
    cfg = page.setting()  # this run's setting (the matrices reach the URL and the share link when the run ends)

    # ---- the core call for this part (and the same call with W_k = I and 10 I for the booster comparison)
    wt = walkthrough(symbols, W["W_q"], W["W_k"], W["W_v"], scaled=cfg.scaled, temperature=cfg.temperature)
    plain = walkthrough(symbols, W["W_q"], np.eye(2), W["W_v"], scaled=cfg.scaled, temperature=cfg.temperature)
    boosted = walkthrough(
        symbols, W["W_q"], BOOST * np.eye(2), W["W_v"], scaled=cfg.scaled, temperature=cfg.temperature
    )
    labels = list(wt.labels)

    with booster:
        # ---- the key booster (unrevealed, its sentence keeps query 1's weights back: they would answer the question)
        st.markdown("##### The key booster: W_k = 10·I")
        st.markdown(step_text.booster_sentence(W["W_k"], BOOST, (plain, boosted), revealed))

    if not revealed:
        return  # the scaled scores, weights and outputs below stay hidden until the reveal
    with lower:
        step(
            "6. Scaled scores S / √d_k" + ("" if cfg.scaled else " (scaling is off: unchanged)"),
            r"\tilde S = S / \sqrt{d_k}" if cfg.scaled else r"\tilde S = S",
            matrix_table(wt.S_scaled, labels, labels, text=True),
            step_text.scaled_scores_sentence(wt, cfg),
        )
        st.markdown("#### 7. Weights α = softmax(S̃ / τ), row by row")
        st.latex(
            r"\alpha_{ij} = \frac{e^{\tilde S_{ij}/\tau}}{\sum_{j'} e^{\tilde S_{ij'}/\tau}},"
            rf"\quad \tau = {cfg.temperature:g}"
        )
        left, right = st.columns([3, 2])
        show_matrix(
            left,
            matrix_table(wt.A, labels, labels, extra=(("row sum", wt.A.sum(1)),), text=True),
            width="stretch" if len(labels) > 5 else "content",
        )
        right.markdown(step_text.weights_sentence(wt))
        lim = max(BOOST, float(np.ceil(np.abs(wt.S).max())))
        c1, c2 = st.columns(2)
        vega.draw(
            c1,
            matrix_chart(
                wt.S, labels, labels, title="scores S = Q Kᵀ", domain=(-lim, lim), value_name="score", diverging=True
            ),
            width="content",
        )
        vega.draw(
            c2,
            matrix_chart(wt.A, labels, labels, title="weights α", domain=(0, 1), value_name="weight"),
            width="content",
        )
        st.caption(step_text.score_scale_caption(lim, BOOST))
        step(
            "8. Outputs Z = α V",
            r"Z = \alpha\,V",
            matrix_table(wt.Z, labels, prefixed("z", 2), text=True),
            step_text.outputs_sentence(wt),
        )
        st.markdown("#### 9. Before and after: E next to Z")
        c1, c2 = st.columns(2)
        show_matrix(c1, matrix_table(wt.E, labels, prefixed("e", 2), text=True))
        show_matrix(c2, matrix_table(wt.Z, labels, prefixed("z", 2), text=True))
        st.markdown(step_text.moved_towards_b(wt))
        return step_text.check_questions(wt, (plain, boosted), cfg)


page.run(_draw, _controls, code=(walkthrough,))
