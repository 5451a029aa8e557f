"""Playground: every head's weights, the outputs and the saturation for the current what-if."""

import math

import numpy as np
import streamlit as st

from attention_core import multi_head_attention, run_whatif, saturation_metrics, scaled_dot_product_attention
from attention_core.readout import SHARPNESS_LEVELS, logit_std, relative_difference, sharpness, uniform_max_weight
from ui.charts import show_token_dims
from ui.classroom import classroom_toggle, prediction_gate
from ui.compute import cached_logit_std, cached_run, cached_saturation, cached_twin_saturation
from ui.controls import Outputs, reserve_outputs, show_outputs, sidebar_widgets
from ui.downloads import download_buttons
from ui.export import snippet_core, snippet_torch
from ui.head_grid import show_head_grid
from ui.layout import page_setup, show_code
from ui.lesson import check_yourself, next_link
from ui.metrics import SATURATION_LABELS, metric_row, saturation_metric
from ui.partial import body, rerun_body
from ui.query_bars import query_bars
from ui.tables import frame_table
from ui.text import fmt, md_escape
from ui.widgets import index_picker

page_setup(
    "Playground",
    "🎛️",
    "Each token's query is compared with every key; the softmax turns those scores into weights; "
    "the output of a token is the weighted mix of the values. Move the sliders in the sidebar.",
)


def _controls() -> tuple:
    """The full-run part: the sidebar's what-if, classroom mode, the head and query pickers, the prediction
    question and the Q/K/V toggle, with the places the body fills between them."""
    cfg = sidebar_widgets()
    out = reserve_outputs()
    classroom_toggle()
    c1, c2 = st.columns(2)
    run = cached_run(cfg)
    head = index_picker(
        "head", [f"head {h + 1}" for h in range(cfg.n_heads)], key="pg_head", container=c1, on_change=rerun_body
    )
    query = index_picker("query token", run.tokens, key="pg_query", container=c2, on_change=rerun_body)
    revealed = prediction_gate(
        "playground", (cfg, head, query), run.weights[head, query], run.tokens[query], run.tokens
    )
    maps = st.container()
    st.subheader("Inputs and outputs")
    st.toggle("show Q, K, V of the picked head", key="pg_qkv", on_change=rerun_body)
    return out, maps, st.container(), revealed


def _heads_table(sat: list[dict]) -> dict[str, list]:
    """One row per head: its saturation metrics under the page's labels (columns for ui.tables.frame_table)."""
    return {"head": [f"head {h + 1}" for h in range(len(sat))]} | {
        SATURATION_LABELS.get(k, k): [s[k] for s in sat] for k in sat[0]
    }


@body
def _body(out: Outputs, maps, io, revealed: bool) -> None:
    """Every head's map, one query's bars, saturation against the twin, X/Z, export (into the places)."""
    cfg = show_outputs(out)
    run = cached_run(cfg)
    sat, twin_sat = cached_saturation(cfg), cached_twin_saturation(cfg)
    for note in run.notices:
        out.notes.info(note)
    T, H, d_k = run.T, cfg.n_heads, cfg.d_k
    tokens = run.tokens

    scale_tex = rf"\sqrt{{d_k}} = \sqrt{{{d_k}}} = {math.sqrt(d_k):.3g}" if cfg.scaled else r"1 \;(\text{scaling off})"
    out.notes.latex(  # two lines, so that the formula fits 1280 px
        rf"A = \mathrm{{softmax}}\!\left(\frac{{Q K^\top}}{{s \cdot \tau}}\right),\quad s = {scale_tex},"
        rf"\quad \tau = {cfg.temperature:g}"
    )
    out.notes.latex(rf"T = {T},\quad d_{{model}} = {cfg.d_model},\quad H = {H},\quad d_k = d_{{model}} / H = {d_k}")
    head, query = st.session_state["pg_head"], st.session_state["pg_query"]
    row = run.weights[head, query]

    with maps:
        uniform = uniform_max_weight(run.mask, T, T)
        if revealed:
            st.subheader(f"Attention weights, one map per head ({H})")
            grid_note = show_head_grid(
                run.weights,
                tokens,
                allowed=run.mask,
                per_row=4,
                size=150 if H > 1 else 300,
                tile_px=128 if H > 4 else 256,
            )
            sharpest = int(np.argmax([s["max_weight"] for s in sat]))
            st.caption(
                f"{grid_note} Rows are queries, columns keys; each row sums to 1. "
                + (f"Head {sharpest + 1} is the sharpest: its rows" if H > 1 else "The rows")
                + " put on average"
                f" {fmt(sat[sharpest]['max_weight'])} of their weight on a single key (uniform rows would put "
                f"{fmt(uniform)})."
            )
            if sharpness(sat[sharpest]["max_weight"], uniform) == "nearly uniform":
                st.info(
                    f"Attention is nearly uniform here (max weight {fmt(sat[sharpest]['max_weight'])} vs uniform "
                    f"1/T = {fmt(uniform)}): every map looks one colour on the 0 – 1 scale. Lower the temperature or turn "
                    "scaling off to sharpen it."
                )

            st.subheader("One query up close")
            top = int(np.argmax(row))
            note = query_bars(row, tokens, title=f"weights of query #{query + 1} in head {head + 1}")
            if row.sum() == 0:
                st.caption(
                    f"Query {md_escape(tokens[query])} may attend to no key under this mask: its weights are all 0 and "
                    "its output is 0."
                )
            else:
                st.caption(
                    f"Query **{md_escape(tokens[query])}** attends most to **{md_escape(tokens[top])}** (#{top + 1}) with "
                    f"weight {fmt(row[top])}; it spreads over about "
                    f"{fmt(float(saturation_metrics(row[None]).effective_tokens[0]))} effective tokens of {T}. {note}"
                )

        twin_name = "unscaled" if cfg.scaled else "scaled"
        st.subheader(f"Softmax saturation of head {head + 1} (change against the {twin_name} twin)")
        m, t = sat[head], twin_sat[head]
        hints = {
            "entropy": f"0 = one-hot, log T = {fmt(math.log(T)) if T > 1 else 0} = uniform",
            "max_weight": f"1 = one-hot, {fmt(uniform)} = uniform",
        }
        metric_row(
            [
                saturation_metric(key, m[key], t[key], help=hints.get(key))
                for key in ("entropy", "max_weight", "effective_tokens", "near_one_hot_share")
            ]
        )
        level, twin_level = sharpness(m["max_weight"], uniform), sharpness(t["max_weight"], uniform)
        spread = float(cached_logit_std(cfg)[head])
        meaning = {
            "single key": "every row has a single key it may attend to, so its weight is 1 whatever the scores",
            "nearly uniform": "every row spreads its weight almost evenly over its keys",
            "soft": "rows spread their weight over several keys",
            "peaked": "one key takes most of a row's weight",
            "sharp": "rows are close to one-hot: nearly all the weight on one key",
        }
        scale_words = f"scaling divides q·k by √d_k = {fmt(math.sqrt(d_k))}" if cfg.scaled else "scaling is off"
        temp_words = (
            f"temperature {cfg.temperature:g} divides them by {cfg.temperature:g}"
            if cfg.temperature != 1
            else "temperature 1 leaves them as they are"
        )
        st.caption(
            f"Deltas (grey: neither direction is good or bad) are this setting minus the same setting {twin_name}. "
            f"Head {head + 1} is **{level}** here: mean max weight {fmt(m['max_weight'])} against {fmt(uniform)} for uniform "
            f"rows, so {meaning[level]}. The logits it sees spread with a standard deviation of {fmt(spread)} ({scale_words}; "
            f"{temp_words}); the {twin_name} twin is {twin_level} (mean max weight {fmt(t['max_weight'])})."
        )
        table = frame_table(("playground", cfg), lambda: _heads_table(sat))
        st.dataframe(table, hide_index=True, width="stretch", height=min(38 + 35 * H, 400))

    show_qkv = st.session_state["pg_qkv"]
    with io:
        c1, c2 = st.columns(2)
        lim = float(max(np.abs(run.x).max(), np.abs(run.output).max())) or 1.0  # one colour scale for X and Z
        kind = show_token_dims(run.x, tokens, title="X input", value_name="x", domain=(-lim, lim), container=c1)
        show_token_dims(run.output, tokens, title="Z output", domain=(-lim, lim), container=c2)
        change = relative_difference(run.output, run.x)
        st.caption(
            f"X and Z ({T} x {cfg.d_model} each) share one colour scale, −{fmt(lim)} (blue) to {fmt(lim)} (red), so "
            "their colours compare directly"
            + (
                "; drawn as images, each pixel averages a block of values, which pulls random values towards 0 and makes "
                "large maps look pale"
                if kind == "image"
                else ""
            )
            + f". Each row of Z is a mix of the value rows, projected by W_o; Z differs from X by "
            f"{fmt(100 * change)}% of X's size (relative Frobenius norm ‖Z − X‖ / ‖X‖)."
        )
        if show_qkv:
            st.caption(f"Q, K and V of head {head + 1} are {T} x {d_k} each (tokens x d_k).")
            for col, name, arr in zip(st.columns(3), "QKV", (run.q, run.k, run.v)):
                show_token_dims(
                    arr[head], tokens, title=f"{name} of head {head + 1}", value_name=name.lower(), container=col
                )

        if revealed:
            st.subheader("Export and reproduce")
            # the files are built only when clicked (callables); each label states the size first
            download_buttons(run, head)
            core_src, torch_src = snippet_core(cfg), snippet_torch(cfg)
            c1, c2 = st.columns(2)
            c1.download_button(
                "Reproduce with attention_core (.py)",
                core_src,
                "reproduce_attention_core.py",
                "text/x-python",
                key="dl_core",
                on_click="ignore",
            )
            c2.download_button(
                "Reproduce in plain torch (.py)",
                torch_src,
                "reproduce_torch.py",
                "text/x-python",
                key="dl_torch",
                on_click="ignore",
            )
            with st.expander("Show the reproduce scripts"):
                st.code(core_src, language="python")
                st.code(torch_src, language="python")
            st.caption(
                "Both scripts print the same weights as this page. Chart menus (⋯ at the top right of a chart) save "
                "any chart as PNG or SVG."
            )

        questions = (
            []
            if not revealed
            else [
                (
                    f"Which key does query {md_escape(tokens[query])} (#{query + 1}) attend to most in head {head + 1}, "
                    "and with what weight?",
                    (
                        f"{md_escape(tokens[int(np.argmax(row))])} (#{int(np.argmax(row)) + 1}) with weight "
                        f"{fmt(float(row.max()))}."
                        if row.sum() > 0
                        else "None: the mask allows it no key, so all its weights are 0."
                    ),
                ),
            ]
        )
        questions += [
            (
                f"How sharp is head {head + 1} at this setting, and what would the {twin_name} twin do?",
                f"It is {level} (mean max weight {fmt(m['max_weight'])}, uniform {fmt(uniform)}); the {twin_name} twin is "
                f"{twin_level} (mean max weight {fmt(t['max_weight'])}).",
                SHARPNESS_LEVELS,  # a choice question: in a class the picks count (ui/pulse_questions.py)
                SHARPNESS_LEVELS.index(level),
            ),
            (
                "How far is the output Z from the input X?",
                f"{fmt(100 * change)}% of X's size: ‖Z − X‖ / ‖X‖ = {fmt(change)}.",
            ),
        ]
        check_yourself(questions)


_body(*_controls())
next_link("pages/1_Playground.py")
show_code(run_whatif, multi_head_attention, scaled_dot_product_attention, logit_std)
