"""Pieces of hand-written Vega-Lite specs that several pages draw: one bar per head, a dashed vertical rule."""

from __future__ import annotations

from ui.text import fmt_all, head_names


def dashed_rule(x: float, description: str) -> dict:
    """A dashed vertical rule at ``x`` of the layer's x scale (a datum, not a second data source), with its text
    alternative (the mark's ``description``: Vega's aria-label of the mark)."""
    return {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "#333", "description": description},
            "encoding": {"x": {"datum": x}}}  # fmt: skip


def per_head_bars(values, title: str, y_title: str, domain=None) -> tuple[dict, dict]:
    """(spec, data): one bar per head with the value written above it and in its tooltip as ui.text.fmt writes it
    (the page's sentences and tables write it so)."""
    data = {
        "head": head_names(len(values)),
        "v": [float(v) for v in values],
        "text": fmt_all(values),  # the value above the bar and in its tooltip, as the sentences and tables write it
    }
    x = {"field": "head", "type": "nominal", "sort": None, "title": None, "axis": {"labelAngle": -45}}
    y = {
        "field": "v",
        "type": "quantitative",
        "title": y_title,
        **({"scale": {"domain": list(domain)}} if domain else {}),
    }
    return {
        "title": title,
        "height": 220,
        "width": "container",
        "layer": [
            {
                "mark": {"type": "bar", "color": "#4c78a8"},
                "encoding": {
                    "x": x,
                    "y": y,
                    "tooltip": [
                        {"field": "head", "type": "nominal"},
                        {"field": "text", "type": "nominal", "title": y_title},
                    ],
                },
            },
            {
                "mark": {"type": "text", "dy": -7, "color": "#333", "fontSize": 11},
                "encoding": {"x": x, "y": y, "text": {"field": "text", "type": "nominal"}},
            },
        ],
    }, data
