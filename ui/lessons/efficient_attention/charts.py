"""The Efficient attention page's chart specs and the rows they draw.

What the page computes is in attention_core/efficient_views.py, the rows its charts and tables draw are built here
(after the specs), its sentences are in ui/lessons/efficient_attention/text.py; its cached versions are declared in ui/compute.py; its
own controls are ui/skeleton/page_params.PageParam declarations in the page file.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ui.text import fmt

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


# ---- the rows the page's charts and tables draw


def memory_frame(gb: dict[str, float], variants: dict[str, int], own: str, model_name: str) -> pd.DataFrame:
    """One row per attention shape (MHA, GQA, MQA): its KV cache in GB and KV heads, the model's own shape marked
    (the rows of :func:`memory_bar_spec`)."""
    return pd.DataFrame(
        {
            "attention": list(gb),
            "GB": list(gb.values()),
            "KV heads": list(variants.values()),
            "own": [f"{model_name}'s own shape" if n == own else "what-if" for n in gb],
        }
    )


def models_table(models) -> pd.DataFrame:
    """The real models' shapes, one short number a column: seven columns fit a phone's width as text."""
    return pd.DataFrame(
        [
            {
                "model": m.name,
                "layers": m.layers,
                "heads": m.heads,
                "KV heads": m.kv_heads,
                "head dim": m.head_dim,
                "context": m.max_context,
                "window": f"{m.sliding_window:,}" if m.sliding_window else "none",
            }
            for m in models
        ]
    )


def sources_table(models) -> pd.DataFrame:
    """Where each model's shape comes from (its config.json): a table of its own, since a long source beside seven
    numbers left the numbers no room on a phone."""
    return pd.DataFrame([{"model": m.name, "source (config.json)": m.source} for m in models])


def receptive_field_frame(wv, layers: int) -> pd.DataFrame:
    """The last token's receptive field after 0..layers layers, measured and by the formula (two lines)."""
    return pd.DataFrame(
        {
            "layers": np.tile(np.arange(layers + 1), 2),
            "tokens": np.concatenate([wv.measured, wv.formula]).astype(int),
            "how": ["measured (mask products)"] * (layers + 1) + ["min(T, L(w−1)+1)"] * (layers + 1),
        }
    )


def _num(x) -> str:
    """A running statistic as the table shows it: 4 significant digits, −∞ for a row with no allowed key yet."""
    return "−∞" if x == -np.inf else fmt(float(x), 4)


def flash_table(steps, fq: int) -> pd.DataFrame:
    """Query row ``fq``'s walk through FlashAttention's tiles: keys, tile max, running max before and after, the
    rescale note and the running sum."""
    return pd.DataFrame(
        {
            "tile": [s.index + 1 for s in steps],
            "keys": [f"{s.start + 1}–{s.stop}" if s.stop - s.start > 1 else f"{s.stop}" for s in steps],
            "tile max": [_num(s.tile_max[fq]) for s in steps],
            "m before": [_num(s.m_before[fq]) for s in steps],
            "m after": [_num(s.m[fq]) for s in steps],
            "rescale": [s.rescale_note(fq) for s in steps],
            "l after": [_num(s.l[fq]) for s in steps],
        }
    )


def running_stats_frame(steps, fq: int) -> pd.DataFrame:
    """Query row ``fq``'s running max m and sum l after each tile, finite values only (a masked start is −∞)."""
    chart = pd.DataFrame(
        {
            "tile": np.tile([s.index + 1 for s in steps], 2),
            "value": np.concatenate([[s.m[fq] for s in steps], [s.l[fq] for s in steps]]),
            "statistic": ["running max m"] * len(steps) + ["running sum l"] * len(steps),
        }
    )
    return chart[np.isfinite(chart["value"])]
