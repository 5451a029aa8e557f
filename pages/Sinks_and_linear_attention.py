"""Sinks and linear attention: a sink logit per head (gpt-oss), StreamingLLM's window, and attention as an RNN."""

import math
from functools import partial

import numpy as np
import streamlit as st

from attention_core.linear_attention import (
    elu_feature_map,
    linear_attention,
    linear_attention_factorised,
    linear_attention_recurrent,
)
from attention_core.sinks import sink_attention, streaming_mask
from ui.compute import cached_linear_view, cached_sinks_view, cached_streaming_view
from ui.draw import vega
from ui.draw.charts import Axes, show_mask, show_weights, weight_scale
from ui.draw.vega_parts import per_head_bars
from ui.lessons.sinks_and_linear_attention.charts import (
    SINKS_CHARS,
    default_sinks,
    format_sinks,
    memory_chart,
    parse_sinks,
)
from ui.lessons.sinks_and_linear_attention.text import check_questions, share
from ui.session.state import keep
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam, bind, head_param, set_value
from ui.text import fmt, head_name

page = Page(
    __file__,
    "A softmax must hand out a total weight of exactly 1, even when a head has nothing to read. **Attention "
    "sinks** give it somewhere else to put it. **Linear attention** drops the softmax altogether and turns "
    "attention into a recurrence, an RNN (a recurrent network: it reads one token at a time and carries a state of "
    "fixed size from each token to the next).",
    see_also=("pages/Masks.py", "pages/Positions.py"),
)
NO_SINK = PageParam("sk_none", "nosink", False, boolean=True, label="no sink (s = −∞): plain attention")
N_SINK = PageParam("sk_n_sink", "n_sink", 2, lo=0, hi=64, integer=True, label="sink tokens kept (n_sink)")
WINDOW = PageParam(
    "sk_window", "window", 4, lo=1, hi=512, integer=True, label="recent tokens kept (window w, itself included)"
)


def _draw() -> list[Question]:
    """Per-head sink logits, StreamingLLM's window, and linear attention as an RNN."""
    cfg = page.whatif(show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed"))
    _seed_sinks(cfg.n_heads)
    st.header("Attention sinks")
    no_sink, sinks, head = _sink_controls(cfg.n_heads)
    view = cached_sinks_view(cfg, sinks, no_sink)
    mean_sum = _sinks_section(view, sinks, no_sink, head)
    labels, T = list(view.tokens), view.weights.shape[-1]
    n_sink, window, kept = _streaming_section(labels, T)
    lin = _linear_section(cfg, head, labels, T)
    hungriest = int(np.argmax(sinks)) if not no_sink else head
    return check_questions(hungriest, sinks, no_sink, mean_sum, n_sink, window, kept, lin, T)


def sinks_param(H: int) -> PageParam:
    """``sinks=-2,0,2,4``: the sink logits of the H heads, one per slider that the page draws itself (read with
    ``page.link``, set with ``set_value``); a link's logits out of range or too many are fitted with a notice."""
    default = default_sinks(H)
    return PageParam(
        "sk_sinks",
        "sinks",
        default,
        chars=SINKS_CHARS,
        parse=partial(parse_sinks, H=H),
        format=format_sinks,
        fallback=format_sinks(default),
    )


def _seed_sinks(H: int) -> None:
    """Put each head's sink logit in its widget: from the link's ``sinks=-2,0,2,4`` on the session's first run."""
    linked = page.link(sinks_param(H))
    first = default_sinks(H)  # heads added later (more heads in the sidebar) start at their default
    for h in range(H):
        keep(f"sk_sink_{h}", linked[h] if h < len(linked) else first[h])


def _sink_controls(H: int) -> tuple[bool, tuple[float, ...], int]:
    """The formula, the no-sink switch, one slider per head's sink logit and the head to look at:
    ``(no_sink, sinks, head)``, the head 0-based; the sinks are mirrored into the link."""
    st.latex(
        r"w_{ij} = \frac{e^{z_{ij}}}{e^{s_h} + \sum_{j'} e^{z_{ij'}}},\qquad z_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}}"
        r",\qquad \sum_j w_{ij} = 1 - \frac{e^{s_h}}{e^{s_h} + \sum_{j'} e^{z_{ij'}}} < 1"
    )
    st.markdown(
        "gpt-oss (an open model by OpenAI) learns one logit s_h per head that joins the softmax's denominator but has **no value**: the "
        'weight it takes is simply not spent, so a head can attend to "nothing". Without it, trained models '
        "dump the spare weight on the first token instead: the sink that StreamingLLM (a way to run a model over an "
        "endless stream of text) keeps."
    )
    no_sink = page.control(NO_SINK)
    with st.expander(f"Sink logit s_h of each of the {H} heads", expanded=True):
        cols = st.columns(min(H, 4))
        for h in range(H):
            cols[h % len(cols)].slider(
                f"s of {head_name(h)}",
                -10.0,
                10.0,
                step=0.5,
                disabled=no_sink,
                **bind(f"sk_sink_{h}"),
            )
    sinks = tuple(float(st.session_state[f"sk_sink_{h}"]) for h in range(H))
    head = (
        page.control(
            head_param("sk_head", H, label="head to look at (sinks and linear attention)"), st.columns([1, 3])[0]
        )
        - 1
    )
    set_value(sinks_param(H), sinks)  # the link mirrors the sliders
    return no_sink, sinks, head


def _sinks_section(view, sinks: tuple[float, ...], no_sink: bool, head: int) -> np.ndarray:
    """Each head's weight left on the real tokens, one head's map with the sink's column, and the checks against
    a plain softmax; returns the mean weight on real tokens per head, (H,)."""
    H = len(sinks)
    mean_sum = view.real_sum.mean(axis=1)  # (H,) mean over query rows
    c1, c2 = st.columns([3, 2])
    vega.draw(
        c1,
        *per_head_bars(mean_sum, "weight on real tokens (mean over query rows)", "sum of weights", (0, 1)),
        width="stretch",
    )
    matrix = np.concatenate([view.weights[head], view.sink_weight[head][:, None]], axis=1)  # (T, T + 1)
    labels = list(view.tokens)
    show_weights(
        matrix,
        labels,
        labels + ["∅ sink"],
        title=f"{head_name(head)}: weights and the sink's share",
        container=c2,
        size=260,
    )
    lo, hi = float(view.real_sum.min()), float(view.real_sum.max())
    if no_sink:
        st.markdown(
            f"With no sink every row with an allowed key sums to exactly 1 (here from {lo:.6g} to {hi:.6g}"
            f"{'; fully masked rows give 0' if lo == 0 else ''}): the softmax must spend all its weight on the "
            "real tokens, whether they are useful or not."
        )
    else:
        parts = [f"{head_name(h)} (s = {sinks[h]:g}): {share(mean_sum[h])}" for h in range(H)]
        st.markdown(
            "Weight left on the real tokens, mean over the rows: "
            + "; ".join(parts)
            + ". "
            + (
                f"Every row of every head sums to less than 1 (at most {share(hi)}). "
                if hi < 1
                else "The largest row sum is 1 in float64: the sink's share is below rounding there. "
            )
            + "A higher sink logit takes more: the head can say *nothing here is worth reading*."
        )
    c1, c2 = st.columns(2)
    c1.metric("max |weights − softmax([scores, s_h]) without the sink column|", f"{view.diff_reference:.1e}")
    c2.metric("max |weights with s = −∞ − plain attention|", f"{view.diff_plain:.1e}")
    worst = max(view.diff_reference, view.diff_plain)
    st.caption(
        (
            f"Both are 0 up to float64 rounding (largest {worst:.1e}): "
            if worst < 1e-12
            else f"The larger of the two is {worst:.1e}. "
        )
        + "a sink is one extra column in the softmax that is dropped afterwards, and a sink of −∞ is no sink at all."
    )
    return mean_sum


def _streaming_section(labels: list[str], T: int) -> tuple[int, int, list[int]]:
    """StreamingLLM's mask for the chosen n_sink and window: ``(n_sink, window, keys the last query keeps)``."""
    st.subheader("StreamingLLM: keep the first tokens and a window")
    c1, c2 = st.columns(2)
    n_sink = page.control(N_SINK, c1)
    window = page.control(WINDOW, c2)
    stream = cached_streaming_view(T, n_sink, window)
    c1, c2 = st.columns([3, 2])
    show_mask(
        stream.mask,
        labels,
        title="StreamingLLM mask (1 = may attend)",
        axes=Axes(value="may attend"),
        legend=True,
        container=c1,
        size=280,
    )
    kept = stream.kept_last
    first = [j for j in kept if j < n_sink]
    recent = [j for j in kept if j >= n_sink]
    c2.markdown(
        f"The last query (token {T}) keeps **{len(kept)} of {T}** keys: "
        + (f"the first {len(first)} (tokens {first[0] + 1}–{first[-1] + 1}, the sinks)" if first else "no sink tokens")
        + (f" and the last {len(recent)} (tokens {recent[0] + 1}–{recent[-1] + 1})" if recent else "")
        + f". No query ever keeps more than n_sink + w = {n_sink + window} keys, so the key/value cache stays at "
        f"{min(T, n_sink + window)} entries however long the stream runs. The mask allows {stream.allowed_share:.1%} of "
        f"all query–key pairs, a full causal mask {stream.causal_share:.1%}."
    )
    c2.caption(
        "The paper found that dropping the first tokens from a plain sliding window breaks generation: trained "
        "models park spare attention there. Keeping four of them restores it."
    )
    return n_sink, window, kept


def _linear_section(cfg, head: int, labels: list[str], T: int):
    """Linear attention against softmax attention for one head: maps, checks, memory; returns its view."""
    st.header("Linear attention")
    st.latex(
        r"\mathrm{out}_i = \frac{\phi(q_i)^{\top} S_i}{\phi(q_i)^{\top} z_i},\quad "
        r"S_i = \sum_{j \le i} \phi(k_j)\, v_j^{\top},\quad z_i = \sum_{j \le i} \phi(k_j),\quad \phi(x) = \mathrm{elu}(x) + 1"
    )
    st.markdown(
        "Replace exp(q·k) by a product of positive features φ(q)·φ(k), with φ(x) = elu(x) + 1 (elu(x) is x for "
        "x > 0 and e^x − 1 below, so φ is always positive). The sums over keys then factor out of "
        "each query: S and z are running sums, an RNN whose state has the same size at token 5 and at "
        "token 5 million. Computed in parallel, the same numbers come from a (masked) T × T matrix."
    )
    lin = cached_linear_view(cfg, head)
    mask_note = "causal" if lin.causal else "no mask"
    pair_scale = weight_scale(
        lin.softmax_weights, lin.linear_weights, group="softmax vs linear"
    )  # the two maps compare: one scale
    for col, weights, title in zip(
        st.columns(2),
        (lin.softmax_weights, lin.linear_weights),
        (f"softmax attention, {head_name(head)}", f"linear attention, {head_name(head)} ({mask_note})"),
    ):
        show_weights(weights, labels, title=title, scale=pair_scale, container=col, size=260)
    c1, c2, c3 = st.columns(3)
    c1.metric("max |causal parallel − recurrent|", f"{lin.diff_recurrent:.1e}")
    c2.metric("max |non-causal parallel − φ(q)(φ(k)ᵀV)|", f"{lin.diff_factorised:.1e}")
    c3.metric("state numbers vs T × T weights", f"{lin.state_numbers:,} vs {T * T:,}")
    cross = math.isqrt(lin.state_numbers - 1) + 1  # smallest T with T^2 >= state
    st.markdown(
        f"The recurrent form (one token at a time; its state is S, d_k × d_v = {lin.d_k} × {lin.d_v} numbers with d_v "
        f"being the length of a value vector, plus z of {lin.d_k}) gives the same "
        f"outputs as the causal parallel form up to {lin.diff_recurrent:.1e}, and the non-causal form computed as "
        f"φ(q)(φ(k)ᵀV) matches the T × T form up to {lin.diff_factorised:.1e}"
        + (": float64 rounding. " if max(lin.diff_recurrent, lin.diff_factorised) < 1e-9 else ". ")
        + f"The state holds "
        f"{lin.state_numbers:,} numbers per head whatever T is; softmax attention's weights hold T² = {T * T:,} at T = {T} "
        + (f"and more from T = {cross} on." if cross > T else f"— already {T * T / lin.state_numbers:.1f}× the state.")
        + f" Linear attention has no softmax, so the temperature ({cfg.temperature:g}) and the 1/√d_k scaling do not "
        "apply to it" + (", and it ignores the padding mask (only causality is built in)." if cfg.padded else ".")
    )
    vega.draw(None, *memory_chart(T, lin.state_numbers, lin.d_k), width="stretch")
    peak_soft, peak_lin = lin.mean_peaks
    st.caption(
        f"The price: φ(q)·φ(k) is a smoother similarity than exp(q·k/√d_k). Here a row's largest weight is "
        f"{fmt(peak_soft)} on average with softmax and {fmt(peak_lin)} with linear attention"
        + (
            ": the linear map is flatter."
            if peak_lin * 1.05 < peak_soft
            else f": about as flat as each other (a uniform row's is {fmt(1 / T)}); a lower temperature sharpens the "
            "softmax, not the linear map."
            if peak_lin <= peak_soft * 1.05
            else ": on this input the linear map is not flatter (try a lower temperature for a sharper softmax)."
        )
    )
    return lin


page.run(
    _draw,
    code=(
        sink_attention,
        streaming_mask,
        elu_feature_map,
        linear_attention,
        linear_attention_recurrent,
        linear_attention_factorised,
    ),
)
