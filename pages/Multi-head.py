"""Multi-head attention: one map per head, the path from heads to output, how different the heads are."""

import numpy as np
import streamlit as st

from attention_core import head_divergence_matrix, multi_head_attention, run_whatif
from attention_core.class_notes import purposeful_vs_random_heads
from attention_core.readout import sharpness, uniform_max_weight
from ui.compute import cached_head_divergence, cached_heads_demo, cached_run, cached_saturation
from ui.draw.charts import (
    Axes,
    dim_labels,
    own_domain,
    shared_domain,
    show_heatmap,
    show_token_dims,
    show_weights,
    stretching,
    weight_scale,
)
from ui.draw.head_grid import show_head_grid
from ui.draw.metrics import saturation_text
from ui.draw.tables import frame_table, show_table
from ui.glossary import TERMS, defined, scale_sentence
from ui.live import CONTROLS, Panel, live_maps, live_on, live_sync, live_toggle, release_into, setting_of
from ui.session.partial import rerun_body
from ui.skeleton.controls import LEAF_CONTROLS, SHARED
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker
from ui.text import fmt, head_name, head_names

page = Page(
    __file__,
    "Instead of one attention of width d_model, H heads each attend in a subspace of width "
    "d_k = d_model / H with their own slices of W_q, W_k, W_v. Their outputs are concatenated and "
    "mixed by W_o, so different heads can look for different things at the same cost.",
    title="Multi-head attention",
)


def _controls() -> tuple:
    """The full-run part: the sidebar's what-if and the head picker, between the places the body fills."""
    live = live_on()
    cfg = page.whatif(  # the mask and positional encoding are taught on later pages: closed, explained in passing
        leaf=LEAF_CONTROLS - {"seed", "positional"} if live else LEAF_CONTROLS, later=("mask", "positional")
    )
    grid = st.container()
    head = head_picker("Enlarge a head", cfg.n_heads, key="mh_head", on_change=rerun_body)
    live_box = st.container()
    with live_box:
        live_toggle()
        if live:
            run, setting = cached_run(cfg), setting_of(cfg, head, 0, stretching())
            release = release_into(SHARED, {"head": "mh_head"})
            live_maps(
                "mh_live",
                [
                    Panel("", run, setting, release, title=f"every head ({cfg.n_heads})"),
                    Panel("big", run, setting, release, title="the picked head, enlarged", heads="picked", size=300),
                ],
                shared=CONTROLS,
                size=130,
            )
    return grid, st.container()


def _heads_table(sat: list[dict], T: int, d_k: int) -> dict[str, list]:
    """One row per head: its shapes and saturation (columns for ui.draw.tables.frame_table)."""
    return {
        "head": head_names(len(sat)),
        "Q/K/V shape": [f"{T} x {d_k}"] * len(sat),
        "mean max weight": [saturation_text("max_weight", s["max_weight"]) for s in sat],  # as the sentences write it
        "entropy (nats)": [saturation_text("entropy", s["entropy"]) for s in sat],
        "effective tokens": [saturation_text("effective_tokens", s["effective_tokens"]) for s in sat],
        "near-one-hot rows": [saturation_text("near_one_hot_share", s["near_one_hot_share"]) for s in sat],
    }


def _draw(grid, rest) -> list[Question]:
    """One map per head, heads -> concat -> W_o -> output, how different the heads are, the class-notes demo."""
    cfg = page.setting()
    run = cached_run(cfg)
    with grid:
        scale = _grid_section(cfg, run)
    with rest:
        _picked_head_section(cfg, run, scale)
        _heads_to_output(cfg, run)
        questions = _divergence_section(cfg)
        questions.append(_demo_section(cfg))
        T, H, d_k, D = run.T, cfg.n_heads, cfg.d_k, cfg.d_model
        questions.append(
            (
                f"What shape does each head's output have here, and what makes it {T} x {D} again?",
                f"{T} x {d_k} per head; "
                + ("the one head gives" if H == 1 else f"the {H} heads side by side give")
                + f" {T} x ({H} · {d_k}) = {T} x {D}, and W_o "
                f"({D} x {D}) mixes them into the {T} x {D} output.",
            )
        )
        return questions[:3]


def _grid_section(cfg, run):
    """The formula and one map per head (drawn by the browser when live maps are on); returns the maps' scale."""
    for note in run.notices:
        st.info(note)
    H, d_k, D = cfg.n_heads, cfg.d_k, cfg.d_model
    tokens = run.tokens
    st.latex(
        rf"\mathrm{{head}}_h = \mathrm{{softmax}}\!\left(\frac{{Q_h K_h^\top}}{{\sqrt{{d_k}}}}\right) V_h,\quad "
        rf"\mathrm{{MultiHead}}(X) = [\mathrm{{head}}_1, \dots, \mathrm{{head}}_{{{H}}}]\, W_o,\quad d_k = {D}/{H} = {d_k}"
    )

    # ---- grid of heads
    st.subheader(f"One map per head ({H})")
    scale = weight_scale(run.weights, allowed=[run.mask], group="heads")
    if live_on():
        picked = st.session_state["mh_head"]
        live_sync("mh_live", dict.fromkeys(("", "big"), setting_of(cfg, picked, 0, stretching())))
        grid_note = (
            "The maps below (every head, and the picked head enlarged) are drawn by your browser on one colour "
            "scale and follow the controls above them while you drag; hover a cell for its weight, click a map "
            "to enlarge its head."
        )
    else:
        grid_note = show_head_grid(
            run.weights, tokens, allowed=run.mask, per_row=4, size=130, max_cells=1024, tile_px=96, scale=scale
        )
    st.caption(
        f"{grid_note} Rows are queries, columns keys; the weights are from seeded random, untrained projections "
        f"(seed {cfg.seed})."
    )
    return scale


def _picked_head_section(cfg, run, scale) -> None:
    """The picked head enlarged on the grid's scale, its shapes and saturation, and every head's row of figures."""
    T, H, d_k = run.T, cfg.n_heads, cfg.d_k
    tokens, sat = run.tokens, cached_saturation(cfg)
    uniform = uniform_max_weight(run.mask, T, T)
    head = st.session_state["mh_head"]
    big = st.columns([3, 2]) if not live_on() else (st.container(), st.container())
    if not live_on():
        show_weights(
            run.weights[head],
            tokens,
            title=f"{head_name(head)}, enlarged",
            allowed=run.mask,
            scale=scale,  # the grid's scale: the enlarged head looks as it does in the grid
            container=big[0],
            size=420,
            max_px=512,
        )
    m = sat[head]
    level = sharpness(m["max_weight"], uniform)
    big[1].markdown(
        f"**{head_name(head)}**  \n"
        f"Q, K, V shapes: {T} x {d_k} each (columns {head * d_k + 1}–{(head + 1) * d_k} of W_q, W_k, W_v)  \n"
        f"d_k = {d_k}, √d_k = {fmt(d_k**0.5)}  \n"
        f"mean max weight {fmt(m['max_weight'])} (uniform rows: {fmt(uniform)}), so this head is **{level}**  \n"
        f"entropy {fmt(m['entropy'])} nats, effective tokens {fmt(m['effective_tokens'])} of {T}, "
        f"near-one-hot rows {m['near_one_hot_share']:.0%}"
    )
    with big[1].expander("The words on this page"):
        st.markdown(scale_sentence() + "\n\n" + defined("d_k", "max_weight", "entropy", "effective_tokens", "W_o"))
    table = frame_table(("multi-head", cfg), lambda: _heads_table(sat, T, d_k))
    show_table(st, table, hide_index=True, width="stretch", height=min(38 + 35 * H, 400))


def _heads_to_output(cfg, run) -> None:
    """heads -> concatenation -> W_o -> output, with their shapes."""
    T, H, d_k, D = run.T, cfg.n_heads, cfg.d_k, cfg.d_model
    tokens = run.tokens
    st.subheader("From heads to output")
    st.markdown(
        f"Each head returns a **{T} x {d_k}** matrix; side by side they make the **{T} x {D}** concatenation "
        f"(columns 1–{d_k} are head 1"
        + (f", {d_k + 1}–{2 * d_k} head 2, and so on" if H > 1 else "")
        + f"); W_o (**{D} x {D}**) mixes the heads into the final **{T} x {D}** output."
    )
    c1, c2, c3 = st.columns([3, 2, 3])
    z_domain = shared_domain(run.concat, run.output, symmetric=True)  # the two z maps compare: one scale
    show_token_dims(run.concat, tokens, title="concatenated heads", domain=z_domain, container=c1, size=220, max_px=192)
    dims = dim_labels(D)
    show_heatmap(
        run.w[3],
        dims,
        dims,
        title="W_o",
        axes=Axes("in", "out", "w"),
        scheme="diverging",
        domain=own_domain(run.w[3], diverging=True),
        container=c2,
        size=220,
        max_px=192,
        max_cells=1024,
    )
    show_token_dims(run.output, tokens, title="output", domain=z_domain, container=c3, size=220, max_px=192)
    st.caption(
        "Blue is negative, red positive; W_o is seeded random (untrained), so the output mixes the heads "
        "without a learned purpose."
    )


def _divergence_section(cfg) -> list[tuple[str, str]]:
    """A head x head Jensen-Shannon matrix and the most and least alike pairs; its question (none for one head)."""
    H = cfg.n_heads
    st.subheader("How different are the heads?", help=TERMS["js_divergence"])
    questions = []
    if H == 1:
        st.caption("With one head there is nothing to compare; raise the head count in the sidebar.")
    else:
        js = cached_head_divergence(cfg)
        labels = [f"h{h + 1}" for h in range(H)]
        c1, c2 = st.columns(2)
        show_heatmap(
            js,
            labels,
            labels,
            title="Jensen-Shannon divergence (bits)",
            axes=Axes("head", "other head", "JS"),
            domain=(0, 1),
            container=c1,
            size=180,
        )
        off = js[~np.eye(H, dtype=bool)]
        a, b = np.unravel_index(np.argmax(js - np.eye(H)), js.shape)
        c, d = np.unravel_index(np.argmin(js + 2 * np.eye(H)), js.shape)
        c2.markdown(
            f"0 bits means two heads attend identically, 1 bit that they never look at the same keys. Here the heads "
            f"differ by {fmt(float(off.mean()))} bits on average; the most different pair is {head_name(a)} and {head_name(b)} "
            f"({fmt(float(js[a, b]))} bits), the most alike {head_name(c)} and {head_name(d)} ({fmt(float(js[c, d]))} bits)."
        )
        questions.append(
            (
                "Which two heads attend most differently here, and by how much?",
                f"{head_name(a).capitalize()} and {head_name(b)}, with a Jensen-Shannon divergence of {fmt(float(js[a, b]))} bits "
                f"(the average pair differs by {fmt(float(off.mean()))}).",
            )
        )
    return questions


def _demo_section(cfg) -> tuple[str, str]:
    """The class-notes example: one head that looks for B against two random heads; its question."""
    st.subheader("The class-notes example: one purposeful head vs two random heads")
    demo = cached_heads_demo(cfg.scaled, cfg.temperature, cfg.seed)
    c1, c2, c3 = st.columns(3)
    demo_scale = weight_scale(
        demo.purposeful_weights, *demo.random_weights, group="class notes"
    )  # the three maps compare: one scale
    show_weights(
        demo.purposeful_weights,
        demo.labels,
        title="1 head, looking for B",
        scale=demo_scale,
        container=c1,
        size=160,
    )
    for col, h in ((c2, 0), (c3, 1)):
        show_weights(
            demo.random_weights[h],
            demo.labels,
            title=f"random {head_name(h)} (seed {cfg.seed})",
            scale=demo_scale,
            container=col,
            size=160,
            legend=False,
        )
    demo_table = frame_table(  # converted to Arrow once per (scaling, temperature, seed), not at every change
        ("multi-head demo", cfg.scaled, cfg.temperature, cfg.seed),
        lambda: {
            "token": list(demo.labels),
            "E": [str(r.astype(int).tolist()) for r in demo.E],
            "Z, 1 head looking for B": [f"[{a:.3f}, {b:.3f}]" for a, b in demo.purposeful_output],
            "Z, 2 random heads": [f"[{a:.3f}, {b:.3f}]" for a, b in demo.random_output],
        },
    )
    show_table(st, demo_table, hide_index=True, width="stretch")
    rand_max = float(demo.random_weights.max(axis=-1).mean())
    z0 = demo.purposeful_output[0]
    st.caption(
        f"With scaling {'on' if cfg.scaled else 'off'} and temperature {cfg.temperature:g}, the purposeful head puts "
        f"{fmt(demo.focus_on_b)} of every row's weight on B3, so every output is [{z0[0]:.3f}, {z0[1]:.3f}] "
        "(B is [0, 1]). The two random "
        f"heads (d_k = 1 each) have no goal: their rows' largest weight averages {fmt(rand_max)} (uniform: 0.25), "
        f"{sharpness(rand_max, 0.25)}, and a random W_o maps their mix."
    )
    return (
        f"How much of each row's weight does the purposeful head put on B3 at temperature {cfg.temperature:g}"
        f"{'' if cfg.scaled else ' without scaling'}?",
        f"{fmt(demo.focus_on_b)}: B3's score is s = 10{' / √2' if cfg.scaled else ''} / {cfg.temperature:g} = "
        f"{fmt(10 / (2**0.5 if cfg.scaled else 1) / cfg.temperature)} and the A keys score 0, so its "
        "weight is e^s / (3 + e^s).",
    )


page.run(_draw, _controls, code=(run_whatif, multi_head_attention, head_divergence_matrix, purposeful_vs_random_heads))
