"""The Efficient attention page's own URL-bound controls and chart specs.

What the page computes is in ui/efficient_views.py; its cached versions are declared in ui/compute.py.
The page's controls follow ui/controls.py's pattern: each value lives in ``st.session_state`` under a key
of its own, is seeded once from the URL, re-seeds its widget before drawing (so it survives page switches),
is clamped to the range the current setting allows (with a visible notice) and is written back to the URL
after drawing.
"""

from __future__ import annotations

import json

import streamlit as st

NOTES_KEY = "eff_notes"  # notices of this run (bad URL values, clamped controls)


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
