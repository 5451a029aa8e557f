"""The Efficient attention page's cached computations and its own URL-bound controls.

Computations take the shared :class:`WhatIf` (a frozen dataclass of primitives) and small ints, so the
caches (ui.cache.cached, bounded by bytes) key cheaply. The page's controls follow ui/controls.py's
pattern: each value lives in ``st.session_state`` under a key of its own, is seeded once from the URL,
re-seeds its widget before drawing (so it survives page switches), is clamped to the range the current
setting allows (with a visible notice) and is written back to the URL after drawing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention_core import WhatIf, causal_mask, random_projection_weights, scaled_dot_product_attention
from attention_core.flash import FlashRun, flash_attention_steps
from attention_core.gqa import gqa_self_attention
from attention_core.kv_cache import DecodeRun, decode_with_cache
from attention_core.whatif import build_input
from attention_core.windows import influence_by_layer, receptive_field_formula, sliding_window_mask
from ui.cache import cached
from ui.compute import cached_run

NOTES_KEY = "eff_notes"  # notices of this run (bad URL values, clamped controls)


# ---- cached computations


@dataclass(frozen=True)
class DecodeView:
    """A KV-cache decode of the what-if's input beside the one-pass causal reference."""

    tokens: tuple[str, ...]  # (T,) labels
    run: DecodeRun  # every step and the final cache
    full_output: np.ndarray  # (T, d_model) one causal pass (gqa_self_attention = multi-head when G = H)
    full_weights: np.ndarray  # (H, T, T) the causal pass's weights
    max_diff: float  # largest |decoded - one pass| over every output number


def kv_weights(cfg: WhatIf, kv_heads: int) -> tuple[np.ndarray, ...]:
    """W_q, W_k, W_v, W_o of the what-if, K/V projections cut to the first G heads' columns (G * d_k)."""
    w_q, w_k, w_v, w_o = random_projection_weights(cfg.d_model, cfg.seed)
    cols = kv_heads * cfg.d_k
    return w_q, w_k[:, :cols], w_v[:, :cols], w_o


@cached(max_mb=24)
def decode_view(cfg: WhatIf, kv_heads: int) -> DecodeView:
    """Decode cfg's input token by token with a cache of ``kv_heads`` K/V heads; compare with one causal pass."""
    tokens, x, _ = build_input(cfg)
    w = kv_weights(cfg, kv_heads)
    run = decode_with_cache(
        x, *w, n_heads=cfg.n_heads, n_kv_heads=kv_heads, scaled=cfg.scaled, temperature=cfg.temperature
    )
    full, weights = gqa_self_attention(
        x,
        *w,
        n_heads=cfg.n_heads,
        n_kv_heads=kv_heads,
        mask=causal_mask(x.shape[0]),
        scaled=cfg.scaled,
        temperature=cfg.temperature,
    )
    return DecodeView(tuple(tokens), run, full, weights.astype(np.float32), float(np.abs(run.output - full).max()))


@dataclass(frozen=True)
class WindowView:
    """A sliding-window mask and the receptive field it gives over layers."""

    mask: np.ndarray  # (T, T) bool, True = may attend
    influence: np.ndarray  # (L + 1, T) bool: tokens that can influence the last token after 0..L layers
    measured: np.ndarray  # (L + 1,) tokens that can influence the last token after 0..L layers
    formula: tuple[int, ...]  # (L + 1,) min(T, l (w - 1) + 1) for l = 0..L


@cached(max_mb=8)
def window_view(T: int, window: int, layers: int) -> WindowView:
    influence = influence_by_layer(T, window, layers)
    formula = (1, *(receptive_field_formula(window, layer, T) for layer in range(1, layers + 1)))
    return WindowView(sliding_window_mask(T, window), influence, influence.sum(axis=1), formula)


@dataclass(frozen=True)
class FlashView:
    """The tiled online softmax of one head beside the full softmax."""

    run: FlashRun  # output and every tile's running statistics
    max_diff: float  # largest |tiled - full| output difference
    mask_note: str  # which mask was applied


@cached(max_mb=16)
def flash_view(cfg: WhatIf, head: int, tile: int) -> FlashView:
    """flash_attention_steps on head ``head`` of cfg's run (the sidebar's mask), and the full softmax's output."""
    run = cached_run(cfg.replace(mask="none"))
    q, k, v = run.q[head], run.k[head], run.v[head]  # (T, d_k) each
    T = run.T
    pad = min(cfg.pad_count, T) if "padding" in cfg.mask else 0
    keys = (np.arange(T) < T - pad)[None, :]  # (1, T): a padding mask broadcasts over queries, no T x T copy
    causal = "causal" in cfg.mask
    mask = keys if pad else None
    flash = flash_attention_steps(
        q, k, v, mask=mask, causal=causal, tile_size=tile, scaled=cfg.scaled, temperature=cfg.temperature
    )
    full_mask = mask if not causal else (causal_mask(T) if mask is None else causal_mask(T) & mask)
    ref, _ = scaled_dot_product_attention(q, k, v, mask=full_mask, scaled=cfg.scaled, temperature=cfg.temperature)
    note = " and ".join(n for n, on in (("causal (computed per tile)", causal), (f"padding ({pad} keys)", pad)) if on)
    return FlashView(flash, float(np.abs(flash.output - ref).max()), note or "none")


# ---- the page's own controls, bound to the URL


def begin_notes() -> None:
    """Start this run's notice list (call once, before the controls)."""
    st.session_state[NOTES_KEY] = []


def note(text: str) -> None:
    st.session_state.setdefault(NOTES_KEY, []).append(text)


def _store(name: str) -> str:
    return f"eff_{name}"


def _widget(name: str) -> str:
    return f"eff_w_{name}"


def _copy_back(name: str) -> None:
    st.session_state[_store(name)] = st.session_state[_widget(name)]


def _parse(raw: str, kind: type):
    if kind is int:
        number = float(raw.strip())
        if not number.is_integer():  # also NaN and inf
            raise ValueError(raw)
        return int(number)
    return kind(raw)


def seed(name: str, url: str, default, kind: type = int):
    """The stored value of control ``name``, seeded once per session from URL parameter ``url`` (or ``default``)."""
    key = _store(name)
    if key not in st.session_state:
        value = default
        raw = st.query_params.get(url)
        if raw is not None:
            try:
                value = _parse(str(raw), kind)
            except ValueError:
                note(f"{url}={str(raw)[:40]!r} is not {'a whole number' if kind is int else 'valid'}; using {default}.")
                value = default
        st.session_state[key] = value
    return st.session_state[key]


def clamp_int(name: str, url: str, lo: int, hi: int, why: str = "") -> int:
    """Keep control ``name`` inside [lo, hi] for the current setting, with a notice when it had to move."""
    value = st.session_state[_store(name)]
    if not lo <= value <= hi:
        fixed = min(max(value, lo), hi)
        note(f"{url}={value} is outside {lo} to {hi}{why}; using {fixed}.")
        st.session_state[_store(name)] = value = fixed
    return value


def clamp_choice(name: str, url: str, options: list, why: str = ""):
    """Keep control ``name`` among ``options`` (the nearest number for numeric options), with a notice."""
    value = st.session_state[_store(name)]
    if value not in options:
        if all(isinstance(o, int) for o in options) and isinstance(value, int):
            fixed = min(options, key=lambda o: (abs(o - value), o))
        else:
            fixed = options[0]
        note(f"{url}={str(value)[:40]!r} is not allowed{why} (allowed: {', '.join(map(str, options))}); using {fixed}.")
        st.session_state[_store(name)] = value = fixed
    return value


def control(box, kind: str, label: str, name: str, **kw):
    """Draw one of the page's controls (``kind``: "slider", "selectbox", ...) into ``box`` with its stored value;
    a change is copied back to the store."""
    st.session_state[_widget(name)] = st.session_state[_store(name)]
    return getattr(box, kind)(label, key=_widget(name), on_change=_copy_back, args=(name,), **kw)


def write_url(names: dict[str, str]) -> None:
    """Mirror the page's controls (name -> URL parameter) into the URL."""
    for name, url in names.items():
        value = str(st.session_state[_store(name)])
        if st.query_params.get(url) != value:
            st.query_params[url] = value


def show_notes() -> None:
    notes = st.session_state.get(NOTES_KEY) or []
    if notes:
        st.warning("Some page settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes), icon="⚠️")


# ---- chart specs: plain Vega-Lite dicts (Altair validates every chart it builds: tens of ms a chart)

FIT_X = {"type": "fit-x", "contains": "padding"}  # fill the column's width; the height stays the plot's own


def _labels_axis(labels, title: str | None) -> dict:
    """An ordinal axis over positions 0..n-1 labelled by ``labels`` (a JSON array in a Vega expression, never HTML)."""
    if len(labels) > 64:
        return {"title": title, "labels": False, "ticks": False}
    return {
        "title": title,
        "labelExpr": f"{json.dumps([str(t) for t in labels])}[datum.value]",
        "labelAngle": -45,
        "labelLimit": 90,
    }


def weights_bar_spec(labels, title: str) -> dict:
    """Bars of one weights row (fields i, token, weight) in token order, y fixed to 0..1."""
    return {
        "title": title,
        "height": 180,
        "autosize": FIT_X,
        "mark": {"type": "bar", "color": "#4c78a8"},
        "encoding": {
            "x": {"field": "i", "type": "ordinal", "axis": _labels_axis(labels, "key")},
            "y": {"field": "weight", "type": "quantitative", "scale": {"domain": [0, 1]}},
            "tooltip": [
                {"field": "token", "type": "nominal"},
                {"field": "weight", "type": "quantitative", "format": ".4f"},
            ],
        },
    }


def memory_bar_spec(own_label: str) -> dict:
    """Bars of KV-cache GB per attention kind (fields attention, GB, KV heads, own) with the value on top."""
    color = {
        "field": "own",
        "type": "nominal",
        "title": None,
        "scale": {"domain": [own_label, "what-if"], "range": ["#e45756", "#8aa1c1"]},
        "legend": {"orient": "top"},
    }
    x = {
        "field": "attention",
        "type": "nominal",
        "sort": None,
        "title": None,
        "axis": {"labelAngle": 0, "labelLimit": 220},
    }
    y = {"field": "GB", "type": "quantitative", "title": "KV cache (GB)"}
    return {
        "height": 240,
        "autosize": FIT_X,
        "layer": [
            {
                "mark": "bar",
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": color,
                    "tooltip": [
                        {"field": "attention", "type": "nominal"},
                        {"field": "KV heads", "type": "quantitative"},
                        {"field": "GB", "type": "quantitative", "format": ".4g"},
                    ],
                },
            },
            {
                "mark": {"type": "text", "dy": -7, "color": "#333"},
                "encoding": {"x": x, "y": y, "text": {"field": "GB", "type": "quantitative", "format": ".3g"}},
            },
        ],
    }


def lines_spec(
    title: str, x: str, y: str, series: str, x_title: str, y_title: str | None, dashed: bool = False
) -> dict:
    """One line with points per ``series`` over an integer x axis, legend below the chart."""
    enc = {
        "x": {"field": x, "type": "quantitative", "title": x_title, "axis": {"tickMinStep": 1}},
        "y": {"field": y, "type": "quantitative", "title": y_title},
        "color": {
            "field": series,
            "type": "nominal",
            "legend": {"orient": "bottom", "direction": "vertical", "title": None, "labelLimit": 260},
        },
        "tooltip": [
            {"field": series, "type": "nominal"},
            {"field": x, "type": "quantitative"},
            {"field": y, "type": "quantitative", "format": ".4g"},
        ],
    }
    if dashed:
        enc["strokeDash"] = {"field": series, "type": "nominal"}  # one legend with the colour
    return {"title": title, "height": 190, "autosize": FIT_X, "mark": {"type": "line", "point": True}, "encoding": enc}
