"""The Positions and the Sinks-and-linear-attention pages: the sinks URL list and chart specs.

What the pages compute is in attention_core/position_views.py and attention_core/sinks_linear_views.py; their cached versions are
declared in ui/compute.py. Their own controls are ui/page_params.PageParam declarations (in the page files);
the per-head sink logits travel in one URL parameter, read by :func:`parse_sinks`.
"""

from __future__ import annotations

import math

from attention_core.positions import OffsetProfile
from ui.text import fmt_all, head_name, head_names

METHOD_LABELS = {
    "sinusoidal": "sinusoidal (added)",
    "learned": "learned table (added)",
    "rope": "RoPE (rotated)",
    "alibi": "ALiBi (biased)",
}


# ---- Positions page


def _rule(x: float, description: str) -> dict:
    """A dashed vertical rule at ``x`` of the layer's x scale (a datum, not a second data source), with its text
    alternative (the mark's ``description``: Vega's aria-label of the mark)."""
    return {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "#333", "description": description},
            "encoding": {"x": {"datum": x}}}  # fmt: skip


def offset_chart(profile: OffsetProfile, train_len: int, title: str) -> tuple[dict, dict]:
    """(spec, data) of the scores by offset: a band from the lowest to the highest score among the pairs with
    that offset, their mean as a line, and dashed rules where the trained length ends (|offset| = L - 1)."""
    data = {
        "offset": profile.offsets.tolist(),
        "low": profile.low.tolist(),
        "high": profile.high.tolist(),
        "mean": profile.mean.tolist(),
    }
    x = {"field": "offset", "type": "quantitative", "title": "offset j − i (key position − query position)"}
    limits = [o for o in (-(train_len - 1), train_len - 1) if profile.offsets[0] <= o <= profile.offsets[-1] and o]
    layers = [
        {
            "mark": {"type": "area", "opacity": 0.35, "color": "#e45756"},
            "encoding": {
                "x": x,
                "y": {"field": "low", "type": "quantitative", "title": "score (logit)", "scale": {"zero": False}},
                "y2": {"field": "high"},
            },
        },
        {
            "mark": {"type": "line", "color": "#4c78a8", "point": len(profile.offsets) <= 64},
            "encoding": {
                "x": x,
                "y": {"field": "mean", "type": "quantitative"},
                "tooltip": [
                    {"field": "offset", "type": "quantitative"},
                    {"field": "low", "type": "quantitative", "format": ".6g"},
                    {"field": "high", "type": "quantitative", "format": ".6g"},
                ],
            },
        },
    ]
    layers += [
        _rule(o, f"dashed line at offset {o}: the trained length ends (|offset| = {train_len - 1})") for o in limits
    ]
    return {"title": title, "height": 260, "width": "container", "layer": layers}, data


# ---- Sinks and linear attention page


def default_sinks(H: int) -> tuple[float, ...]:
    """Sink logits spread from -2 to 4 over the heads (a trained model learns one per head), in steps of 0.5."""
    if H == 1:
        return (1.0,)
    return tuple(float(round((-2 + 6 * h / (H - 1)) * 2) / 2) for h in range(H))


def parse_sinks(raw: str | None, H: int) -> tuple[tuple[float, ...], list[str]]:
    """Sink logits for H heads from the URL text "0.5,1,-2" (each clamped to -10..10), with notices."""
    values, notes = list(default_sinks(H)), []
    if raw is None:
        return tuple(values), notes
    parts = [s.strip() for s in str(raw).split(",")]
    for h, s in enumerate(parts[:H]):
        try:
            x = float(s)
        except ValueError:
            x = float("nan")
        if not math.isfinite(x):
            notes.append(f"sinks: {s[:20]!r} for {head_name(h)} is not a finite number; using {values[h]:g}.")
            continue
        c = round(min(max(x, -10.0), 10.0) * 2) / 2
        if c != x:
            notes.append(f"sinks: {x:g} for {head_name(h)} is not a multiple of 0.5 from -10 to 10; using {c:g}.")
        values[h] = c
    if len(parts) > H:
        notes.append(f"sinks has {len(parts)} values but there are {H} heads; the extra ones are ignored.")
    return tuple(values), notes


def memory_chart(T: int, state_numbers: int, d_k: int) -> tuple[dict, dict]:
    """(spec, data): numbers kept per head against T, softmax attention's T x T weights vs linear attention's
    fixed state, log-log, with the current T marked."""
    ts = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, T})
    rows = [{"T": t, "numbers": t * t, "kind": "softmax: T × T weights"} for t in ts]
    rows += [{"T": t, "numbers": state_numbers, "kind": f"linear: state d_k × d_v + d_k (d_k = {d_k})"} for t in ts]
    colors = ["#4c78a8", "#e45756"]  # linear, softmax (the legend sorts the names)
    data = {key: [r[key] for r in rows] for key in ("T", "numbers", "kind")}
    x = {"field": "T", "type": "quantitative", "scale": {"type": "log", "base": 2}, "title": "sequence length T"}
    y = {
        "field": "numbers",
        "type": "quantitative",
        "scale": {"type": "log"},
        "title": "numbers kept per head",
        "axis": {"tickCount": 6},
    }
    return {
        "title": "Memory per head: weights matrix vs recurrent state",
        "height": 260,
        "width": "container",
        "layer": [
            {
                "mark": {"type": "line", "point": True},
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": {
                        "field": "kind",
                        "type": "nominal",
                        "scale": {"range": colors},
                        "legend": {"orient": "right", "title": None, "labelLimit": 260},
                    },
                    "tooltip": [
                        {"field": "kind", "type": "nominal"},
                        {"field": "T", "type": "quantitative"},
                        {"field": "numbers", "type": "quantitative", "format": ","},
                    ],
                },
            },
            _rule(T, f"dashed line at T = {T}: the sidebar's sequence length"),
        ],
    }, data


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
