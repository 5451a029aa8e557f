"""Playground: every head's weights, the outputs and the saturation for the current what-if."""

import math
from typing import NamedTuple

import numpy as np
import streamlit as st

from attention_core import multi_head_attention, run_whatif, scaled_dot_product_attention
from attention_core.readout import logit_std, relative_difference, sharpness, uniform_max_weight
from ui.classroom.mode import Prediction, predict, sharper_or_softer
from ui.compute import cached_logit_std, cached_run, cached_saturation, cached_twin_saturation
from ui.draw.charts import is_vector, shared_domain, show_token_dims, stretching
from ui.draw.head_grid import show_head_grid
from ui.draw.metrics import SATURATION_LABELS, metric_row, saturation_columns, saturation_metric, saturation_text
from ui.draw.query_bars import query_bars
from ui.draw.tables import frame_table, show_table
from ui.glossary import TERMS, defined, scale_sentence
from ui.lessons.playground.downloads import download_buttons
from ui.lessons.playground.export import snippet_core, snippet_torch
from ui.lessons.playground.text import (
    LIVE_MAPS_NOTE,
    check_questions,
    maps_caption,
    nearly_uniform_notice,
    query_caption,
    saturation_caption,
    twin_answer,
    twin_question,
    xz_caption,
)
from ui.live import (
    CONTROLS,
    Panel,
    live_maps,
    live_on,
    live_outputs,
    live_sync,
    live_toggle,
    release_into,
    setting_of,
)
from ui.session.partial import rerun_body
from ui.skeleton.controls import ALL_CONTROLS, LEAF_CONTROLS, SHARED, whatif_controls
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker, index_picker
from ui.text import fmt, head_name, head_names

page = Page(
    __file__,
    "Each token's query is compared with every key; the softmax turns those scores into weights; "
    "the output of a token is the weighted mix of the values. The temperature, the scaling and the mask are set "
    "right above the maps; the input, its size and the heads in the sidebar.",
)

MAP_SETTINGS = ("scaled", "temperature", "mask")  # set above the maps (live: the maps' own controls), nowhere else


def _controls() -> tuple:
    """The full-run part: the sidebar's what-if, classroom mode, the head and query pickers, the prediction
    question, the live maps and the Q/K/V toggle, with the places the body fills between them. With live maps
    the seed and the positional encoding rerun the page: they change the scores the maps were sent."""
    live = live_on()
    sidebar = tuple(n for n in ALL_CONTROLS if n not in MAP_SETTINGS)
    cfg = page.whatif(sidebar, leaf=LEAF_CONTROLS - {"seed", "positional"} if live else LEAF_CONTROLS)
    c1, c2 = st.columns(2)
    run = cached_run(cfg)
    head = head_picker("head", cfg.n_heads, key="pg_head", container=c1, on_change=rerun_body)
    query = index_picker("query token", run.tokens, key="pg_query", container=c2, on_change=rerun_body)
    revealed = predict(_twin_question(cfg, head))
    maps = st.container()
    live_io = False  # X and Z drawn by the browser: the maps' feed carries X, V and W_o (set below)
    with maps:
        if revealed:  # the maps answer the prediction question: before the reveal, nothing of them
            st.subheader(f"Attention weights, one map per head ({cfg.n_heads})")
            live_toggle()
        hidden = page.hides(MAP_SETTINGS)
        if revealed and live:  # the maps' own controls set the temperature, the scaling and the mask
            pickers = {"head": "pg_head", "query": "pg_query"}
            setting = setting_of(cfg, head, query, stretching())
            own = tuple(c for c in CONTROLS if c not in hidden)
            panel = Panel("", run, setting, release_into(SHARED, pickers), controls=own, bars=True)
            # X and Z small enough to draw cell by cell: the browser draws them too, Z following the maps
            live_io = is_vector((run.T, cfg.d_model))
            live_maps("pg_live", [panel], size=150 if cfg.n_heads > 1 else 300, partial=True, outputs=live_io)
        elif shown := tuple(n for n in MAP_SETTINGS if n not in hidden):  # the same settings as widgets
            cols = st.columns(3)
            for col, name in zip(cols, shown):
                whatif_controls(col, SHARED, (name,), leaf=LEAF_CONTROLS)
    st.subheader("Inputs and outputs")
    st.toggle("show Q, K, V of the picked head", key="pg_qkv", on_change=rerun_body)
    io = st.container()
    # the scripts are sent when the reader opens them (a change with them closed does not send them again). The
    # downloads stay in the body: a release's request is a full run's, which drops the files of every download
    # button before the callback turns it into a body rerun, so a button outside the body would lead nowhere
    scripts = st.expander("Show the reproduce scripts", key="pg_scripts", on_change="rerun") if revealed else None
    return maps, io, scripts, revealed, live_io


def _twin_question(cfg, head: int) -> Prediction:
    """Would head ``head`` get sharper or softer with the scaling flipped? (ui/lessons/playground/text.twin_question)"""
    ours, twin = cached_saturation(cfg)[head]["max_weight"], cached_twin_saturation(cfg, head)["max_weight"]
    question, why = twin_question(cfg.scaled, cfg.d_k, head)
    twin_name = "unscaled" if cfg.scaled else "scaled"
    return sharper_or_softer(
        "playground.twin",
        question,
        twin,
        ours,
        signature=(cfg, head),
        why=twin_answer(head, ours, twin, twin_name, why),
    )


def _heads_table(sat: list[dict]) -> dict[str, list]:
    """One row per head: its saturation metrics under the page's labels (columns for ui.draw.tables.frame_table)."""
    return {"head": head_names(len(sat))} | {
        SATURATION_LABELS.get(k, k): [saturation_text(k, s[k]) for s in sat] for k in sat[0]
    }  # written as the metrics above it write them


class Sharpness(NamedTuple):
    """How sharp the picked head is against its scaling twin (the metrics' deltas, the caption, the questions)."""

    level: str  # "nearly uniform" .. "sharp", from the head's mean largest weight
    twin_level: str
    twin_name: str  # "unscaled" or "scaled": the twin has the scaling flipped
    m: dict  # the head's saturation figures (ui.compute.cached_saturation)
    t: dict  # the twin's
    uniform: float  # the largest weight of a uniform row, for this T and mask


def _sharpness(cfg, run, head: int, sat, t: dict) -> Sharpness:
    """The head's figures ``sat[head]`` against its twin's ``t``."""
    uniform = uniform_max_weight(run.mask, run.T, run.T)
    m = sat[head]
    twin_name = "unscaled" if cfg.scaled else "scaled"
    return Sharpness(sharpness(m["max_weight"], uniform), sharpness(t["max_weight"], uniform), twin_name, m, t, uniform)


def _formulas(cfg, run) -> None:
    """The attention formula with this setting's scale and temperature, and its sizes, in the page's notes."""
    d_k = cfg.d_k
    scale_tex = rf"\sqrt{{d_k}} = \sqrt{{{d_k}}} = {math.sqrt(d_k):.3g}" if cfg.scaled else r"1 \;(\text{scaling off})"
    page.notes.latex(  # two lines, so that the formula fits 1280 px
        rf"\alpha = \mathrm{{softmax}}\!\left(\frac{{Q K^\top}}{{s \cdot \tau}}\right),\quad s = {scale_tex},"
        rf"\quad \tau = {cfg.temperature:g}"
    )
    page.notes.latex(
        rf"T = {run.T},\quad d_{{model}} = {cfg.d_model},\quad H = {cfg.n_heads},\quad d_k = d_{{model}} / H = {d_k}"
    )


def _weight_maps(cfg, run, head: int, query: int, sat, uniform: float) -> None:
    """Every head's map (live: the settings handed to the browser's maps) and one query's weights up close."""
    tokens, row = run.tokens, run.weights[head, query]
    live = live_on()
    if live:
        live_sync("pg_live", {"": setting_of(cfg, head, query, stretching())})
        grid_note = LIVE_MAPS_NOTE
    else:
        grid_note = show_head_grid(
            run.weights,
            tokens,
            allowed=run.mask,
            per_row=4,
            size=150 if cfg.n_heads > 1 else 300,
            tile_px=128 if cfg.n_heads > 4 else 256,
        )
    st.caption(maps_caption(grid_note, sat, uniform))
    sharpest = max(s["max_weight"] for s in sat)
    if sharpness(sharpest, uniform) == "nearly uniform" and not stretching():
        st.info(nearly_uniform_notice(sharpest, uniform))

    st.subheader("One query up close")
    note = "" if live else query_bars(row, tokens, title=f"weights of query #{query + 1} in {head_name(head)}")
    st.caption(query_caption(tokens, query, row, note))


def _saturation(cfg, run, head: int, sat, s: Sharpness) -> None:
    """Head ``head``'s saturation against its scaling twin: the metrics, what they mean, every head's table."""
    T, H = run.T, cfg.n_heads
    st.subheader(f"Softmax saturation of {head_name(head)} (change against the {s.twin_name} twin)", help=TERMS["twin"])
    hints = {
        "entropy": f"0 = one-hot, log T = {fmt(math.log(T)) if T > 1 else 0} = uniform",
        "max_weight": f"1 = one-hot, {fmt(s.uniform)} = uniform",
    }
    metric_row(
        [
            saturation_metric(key, s.m[key], s.t[key], help=hints.get(key))
            for key in ("entropy", "max_weight", "effective_tokens", "near_one_hot_share")
        ]
    )
    spread = float(cached_logit_std(cfg)[head])
    st.caption(saturation_caption(cfg, head, s.m, s.t, s.level, s.twin_level, s.twin_name, s.uniform, spread))
    with st.expander("The words on this page"):
        st.markdown(
            scale_sentence() + "\n\n" + defined("max_weight", "entropy", "effective_tokens", "near_one_hot_share")
        )
        st.markdown(defined("jacobian_norm", "twin", "logits", "W_o", "relative_change"))
    table = frame_table(("playground", cfg), lambda: _heads_table(sat))
    show_table(
        st, table, hide_index=True, width="stretch", height=min(38 + 35 * H, 400), column_config=saturation_columns()
    )


def _inputs_outputs(cfg, run, head: int, live: bool) -> float:
    """X and Z on one colour scale (``live``: drawn by the browser, Z following the live maps), how far Z is from
    X, and (toggled) the picked head's Q, K and V; returns ‖Z − X‖ / ‖X‖."""
    tokens = run.tokens
    lim = float(max(np.abs(run.x).max(), np.abs(run.output).max())) or 1.0  # one colour scale for X and Z
    if live:
        live_outputs("pg_live", run)
        kind = "live"
    else:
        c1, c2 = st.columns(2)
        kind = show_token_dims(run.x, tokens, title="X input", value_name="x", domain=(-lim, lim), container=c1)
        show_token_dims(run.output, tokens, title="Z output", domain=(-lim, lim), container=c2)
    change = relative_difference(run.output, run.x)
    st.caption(xz_caption(run.T, cfg.d_model, lim, kind, change))
    if st.session_state["pg_qkv"]:
        st.caption(f"Q, K and V of {head_name(head)} are {run.T} x {cfg.d_k} each (tokens x d_k).")
        qkv_domain = shared_domain(run.q[head], run.k[head], run.v[head], symmetric=True)  # side by side: one scale
        for col, name, arr in zip(st.columns(3), "QKV", (run.q, run.k, run.v)):
            show_token_dims(
                arr[head],
                tokens,
                title=f"{name} of {head_name(head)}",
                value_name=name.lower(),
                domain=qkv_domain,
                container=col,
            )
    return change


def _export(cfg, run, head: int) -> None:
    """The downloads (built only when clicked; each label states the size first) and the two reproduce scripts."""
    st.subheader("Export and reproduce")
    download_buttons(run, head)
    c1, c2 = st.columns(2)
    c1.download_button(
        "Reproduce with attention_core (.py)",
        snippet_core(cfg),
        "reproduce_attention_core.py",
        "text/x-python",
        key="dl_core",
        on_click="ignore",
    )
    c2.download_button(
        "Reproduce in plain torch (.py)",
        snippet_torch(cfg),
        "reproduce_torch.py",
        "text/x-python",
        key="dl_torch",
        on_click="ignore",
        help="A script that needs only PyTorch (imported as torch), the Python library most transformers "
        "are written in.",
    )
    st.caption(
        "Both scripts print the same weights as this page. Chart menus (⋯ at the top right of a chart) save "
        "any chart as PNG or SVG."
    )


def _draw(maps, io, scripts, revealed: bool, live_io: bool) -> list[Question]:
    """Every head's map, one query's bars, saturation against the twin, X/Z, export (into the places)."""
    cfg = page.setting()
    run = cached_run(cfg)
    sat = cached_saturation(cfg)
    for note in run.notices:
        page.notes.info(note)
    _formulas(cfg, run)
    head, query = st.session_state["pg_head"], st.session_state["pg_query"]
    sharp = _sharpness(cfg, run, head, sat, cached_twin_saturation(cfg, head))
    with maps:
        if revealed:  # the maps and the twin's numbers answer the prediction question
            _weight_maps(cfg, run, head, query, sat, sharp.uniform)
            _saturation(cfg, run, head, sat, sharp)
    with io:
        change = _inputs_outputs(cfg, run, head, live_io)
        if revealed:
            _export(cfg, run, head)
        questions = check_questions(run.tokens, query, head, run.weights[head, query], revealed, tuple(sharp), change)
    if scripts is not None and scripts.open:
        with scripts:
            st.code(snippet_core(cfg), language="python")
            st.code(snippet_torch(cfg), language="python")
    return questions


page.run(_draw, _controls, code=(run_whatif, multi_head_attention, scaled_dot_product_attention, logit_std))
