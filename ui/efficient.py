"""The Efficient attention page's chart specs.

What the page computes is in attention_core/efficient_views.py; its cached versions are declared in ui/compute.py; its
own controls are ui/page_params.PageParam declarations in the page file.
"""

from __future__ import annotations

import json

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
