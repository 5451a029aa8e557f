"""Positions: sinusoidal, learned, RoPE and ALiBi on the same input; offset-only vs absolute scores; beyond the trained length."""

import math

import streamlit as st

from attention_core.alibi import alibi_bias
from attention_core.positions import (
    METHODS,
    learned_position_table,
    lookup_positions,
    offset_profile,
    pair_scores,
    position_attention,
)
from attention_core.rope import apply_rope
from ui.compute import cached_positions_view, cached_run
from ui.draw import vega
from ui.draw.charts import Axes, own_domain, show_heatmap, show_weights
from ui.draw.vega_parts import per_head_bars
from ui.lessons.positions.charts import METHOD_LABELS, offset_chart
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam, head_param
from ui.text import fmt, head_name, md_escape

page = Page(
    __file__,
    "Attention by itself cannot tell where a token is. Four answers are in use: **add** a sinusoidal or a "
    "**learned** vector to each input, **rotate** queries and keys by their position (RoPE, used by the Llama models), or "
    "**bias** each score by the distance (ALiBi). The question that separates them: does the score of two "
    "tokens depend on *where* they are, or only on *how far apart*?",
    title="Positions: sinusoidal, learned, RoPE, ALiBi",
    see_also=("pages/Positional_encoding.py", "pages/Efficient_attention.py"),
)
METHOD = PageParam(
    "pos_method",
    "method",
    "rope",
    choices=METHODS,
    label="Position method",
    names=tuple(map(METHOD_LABELS.get, METHODS)),
)
BASE = PageParam(
    "pos_base",
    "base",
    10000.0,
    choices=(100.0, 1000.0, 10000.0, 100000.0, 500000.0, 1000000.0),
    label="base (sinusoidal and RoPE wavelengths)",
)
TRAIN = PageParam(
    "pos_train_len", "train_len", 6, lo=1, hi=512, integer=True, label="trained length L (longest sequence in training)"
)


def _draw() -> list[Question]:
    """The method, base and training length, the scores by offset and the longer-input experiment."""
    cfg = page.whatif(show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed"))
    _formulas()
    c1, c2, c3, c4 = st.columns([4, 3, 3, 2])  # the head picker shows "head 1" whole at 768 px
    method = page.control(METHOD, c1)
    base = page.control(BASE, c2)
    train_len = page.control(TRAIN, c3)
    head = page.control(head_param("pos_head", cfg.n_heads), c4) - 1

    view = cached_positions_view(cfg, method, float(base), int(train_len), head)
    st.subheader("The score of two tokens at every pair of positions")
    _score_by_offset(cfg, view, method, train_len, head)
    _methods_table(view)
    _weights_section(cfg, view, method, head)
    _beyond_trained_length(cfg, view, train_len, head)
    return _questions(view, train_len, head)


def _formulas() -> None:
    """The four ways of giving attention positions, as formulas."""
    st.latex(  # lines free to break after = on a narrow screen (no gathered block: it cannot break)
        r"\text{added (sinusoidal, learned): } s_{ij} = "
        r"\frac{\big((x_i + p_i)W_q\big)\cdot\big((x_j + p_j)W_k\big)}{\sqrt{d_k}} \\[4pt]"
        r"\text{RoPE: } s_{ij} = \frac{(R_i\,q)\cdot(R_j\,k)}{\sqrt{d_k}} = \frac{q^{\top} R_{j-i}\,k}{\sqrt{d_k}}"
        r"\allowbreak\qquad \text{ALiBi: } s_{ij} = \frac{q\cdot k}{\sqrt{d_k}} - m_h\,(i - j)"
    )
    st.caption(
        "i = query position, j = key position. R_p rotates each pair of dimensions (2t, 2t+1) by p·θ_t with "
        "θ_t = base^(−2t/d_k) (the paper's interleaved pairing; Llama's code pairs t with t + d_k/2, the same "
        "rotation of a permuted vector). ALiBi's slope of head h is m_h = 2^(−8h/H); without a causal mask the page uses "
        "−m_h |i − j| (a common encoder variant; the paper's models are causal)."
    )


def _score_by_offset(cfg, view, method: str, train_len: int, head: int) -> None:
    """The same two tokens at every pair of positions: the score map, the score by offset, and whether the score
    depends on the offset alone."""
    label = METHOD_LABELS[method]
    summary = {s.method: s for s in view.summaries}[method]
    a, b = (md_escape(t) for t in view.pair)
    if view.profile is None:
        st.warning(
            f"{label} cannot run here: {summary.note}. Choose heads so that d_k = d_model / heads is even.",
            icon=":material/warning:",
        )
    else:
        prof, P = view.profile, summary.positions
        st.markdown(
            f"Token **{a}** as the query and token **{b}** as the key are placed at every query position i and "
            f"key position j from 0 to {P - 1}; {head_name(head)}'s score (the logit before the softmax"
            f"{', divided by √d_k' if cfg.scaled else ''}) is drawn for each pair."
        )
        c1, c2 = st.columns([2, 3])
        show_heatmap(
            view.scores,
            [str(i) for i in range(P)],
            [str(j) for j in range(P)],
            title=f"{method}: score s_ij",
            axes=Axes("query position i", "key position j", "score"),
            scheme="diverging",
            domain=own_domain(view.scores, diverging=True),
            container=c1,
            size=300,
            max_px=300,
        )
        vega.draw(
            c2,
            *offset_chart(prof, train_len, f"{method}: score by offset (line: mean; red band: lowest to highest)"),
            width="stretch",
        )
        by_offset_alone = prof.spread < 1e-6
        pairs = P * (P + 1) // 2 if view.causal else P * P
        st.markdown(
            f"The {pairs} pairs of positions{' allowed by the causal mask' if view.causal else ''} have "
            f"{len(prof.offsets)} different offsets j − i. Among pairs with the same offset the score of {label} varies "
            f"by at most **{prof.spread:.3g}** (the red band's largest width). "
            + (
                "So the score depends **only on the offset**: every diagonal of the map has one colour, up to float "
                "rounding."
                if by_offset_alone
                else "So the score depends on **where** the two tokens are, not only on how far apart: moving both by the "
                "same amount changes it."
            )
        )


def _methods_table(view) -> None:
    """Each method's largest spread of the score at one offset, and what its score depends on."""
    rows = [
        "| method | max spread at equal offset | positions compared | score depends on | note |",
        "|---|---:|---:|---|---|",
    ]
    rows += [
        f"| {METHOD_LABELS[s.method]} | {'n/a' if s.spread is None else f'{s.spread:.3g}'} | {s.positions} | "
        f"{'—' if s.spread is None else 'offset only' if s.spread < 1e-6 else 'absolute positions'} | {s.note} |"
        for s in view.summaries
    ]
    st.markdown("\n".join(rows))
    st.caption(
        "The learned table is a seeded random N(0, ½) table standing in for a trained one (GPT-2's position table, wpe): "
        "what matters here is that it has one free row per position, not its values."
    )


def _weights_section(cfg, view, method: str, head: int) -> None:
    """The picked head's weights on the input with the chosen method, and ALiBi's slopes."""
    T, label = len(view.tokens), METHOD_LABELS[method]
    st.subheader(f"{label}: {head_name(head)}'s weights on the input")
    if view.weights is None:
        st.warning(f"{label} cannot attend over this input: {view.problem}.", icon=":material/warning:")
    else:
        run_mask = cached_run(cfg.replace(positional=False)).mask
        c1, c2 = st.columns([3, 2])
        show_weights(
            view.weights[head],
            list(view.tokens),
            title=f"{method}: {head_name(head)} weights",
            allowed=run_mask,
            container=c1,
            size=300,
        )
        if method == "alibi":
            vega.draw(c2, *per_head_bars(view.slopes, "ALiBi slope m per head", "slope m"), width="stretch")
            far = max(T - 1, 1)
            c2.caption(
                f"{head_name(head).capitalize()} subtracts {fmt(view.slopes[head])} per token of distance. At distance {far} the "
                f"steepest head loses {fmt(view.slopes[0] * far)} from the score, the flattest "
                f"{fmt(view.slopes[-1] * far)}: steep heads stay local, flat ones can reach far back."
            )
        else:
            c2.markdown(
                f"Temperature {cfg.temperature:g} divides these scores before the softmax"
                f"{' (ALiBi bias included)' if method == 'alibi' else ''}. "
                + (
                    "Sinusoidal and learned positions are added to the input before W_q and W_k, so they change "
                    "q, k **and v**."
                    if method in ("sinusoidal", "learned")
                    else "RoPE rotates q and k only: the values v carry no position."
                )
            )


def _beyond_trained_length(cfg, view, train_len: int, head: int) -> None:
    """What each method does with positions past the trained length L."""
    T = len(view.tokens)
    st.subheader(f"Beyond the trained length L = {train_len}")
    if T <= train_len:
        st.markdown(
            f"{'All ' + str(T) + ' positions' if T > 1 else 'The one position'} of the input lie{'s' if T == 1 else ''} within the trained length L = {train_len}: every method has "
            f"seen them. Set the trained length below seq_len = {T} to see what happens beyond it."
        )
    else:
        slope = float(view.slopes[head])
        rope = {s.method: s for s in view.summaries}["rope"]
        st.markdown(
            f"- **Learned**: the table has {train_len} rows (positions 0 to {train_len - 1}) and position {train_len} has "
            f"none. A real model's lookup (`nn.Embedding`, PyTorch's table of one learned row per index) fails with an index error; here: *{md_escape(view.learned_error)}*. "
            "A learned table **cannot extrapolate**: the score comparison above uses its first "
            f"{train_len} positions only.\n"
            f"- **Sinusoidal**: the formula gives every position a row, so nothing fails, but {view.unseen_sinusoidal} of "
            f"the {math.ceil(cfg.d_model / 2)} sine/cosine frequencies reach angles at positions {train_len} to {T - 1} "
            f"that positions 0 to {train_len - 1} never produced: inputs the model was not trained on.\n"
            + (
                f"- **RoPE**: also defined everywhere, and the score still depends only on the offset (spread "
                f"{rope.spread:.3g}), but offsets up to {T - 1} now occur where training saw at most {train_len - 1}, and "
                f"{view.unseen_rope} of the {cfg.d_k // 2} rotation pairs turn to angles never seen. (Llama-style context "
                "extension rescales the positions or the base for this reason.)\n"
                if rope.spread is not None
                else f"- **RoPE**: not available with an odd d_k = {cfg.d_k}.\n"
            )
            + f"- **ALiBi**: {head_name(head)}'s bias at distance {T - 1} is −{fmt(slope)} × {T - 1} = −{fmt(slope * (T - 1))}: "
            "the same straight line, only longer; no new kind of input. That is why ALiBi extrapolates "
            "(*train short, test long*)."
        )
        st.caption("The dashed lines in the offset chart mark |j − i| = L − 1, the largest offset seen in training.")


def _questions(view, train_len: int, head: int) -> list[Question]:
    """Which methods depend on the offset alone, ALiBi's penalty at the longest distance, and beyond L."""
    T = len(view.tokens)
    offset_only = [METHOD_LABELS[s.method] for s in view.summaries if s.spread is not None and s.spread < 1e-6]
    absolute = [METHOD_LABELS[s.method] for s in view.summaries if s.spread is not None and s.spread >= 1e-6]
    far = max(T - 1, 1)
    questions = [
        Question(
            "Which of the four methods give a score that depends only on how far apart two tokens are, here?",
            (f"{' and '.join(offset_only)}: their spread at equal offset is below 10⁻⁶" if offset_only else "None")
            + (f"; {' and '.join(absolute)} depend on the absolute positions" if absolute else "")
            + " (the table above).",
        ),
        Question(
            f"How much does ALiBi's {head_name(head)} subtract from a score at distance {far}?",
            f"Its slope m = {fmt(view.slopes[head])} times {far}: {fmt(view.slopes[head] * far)}. The steepest head "
            f"subtracts {fmt(view.slopes[0] * far)}, the flattest {fmt(view.slopes[-1] * far)}.",
        ),
    ]
    if T > train_len:
        questions.append(
            Question(
                f"The input has {T} tokens and training saw at most L = {train_len}. Which method cannot run at all?",
                f"The learned table: it has rows for positions 0 to {train_len - 1} only, so position {train_len} "
                "has none (an index error in a real model). The formulas (sinusoidal, RoPE, ALiBi) give every "
                "position a value.",
            )
        )
    return questions


page.run(
    _draw,
    code=(
        pair_scores,
        offset_profile,
        position_attention,
        apply_rope,
        alibi_bias,
        learned_position_table,
        lookup_positions,
    ),
)
