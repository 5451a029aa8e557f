"""The Sinks and linear attention page: the sinks URL list and the memory chart.

What the page computes is in attention_core/sinks_linear_views.py; its cached versions are declared in ui/compute.py.
Its own controls are ui/skeleton/page_params.PageParam declarations (in the page file); the per-head sink logits
travel in one URL parameter, read by :func:`parse_sinks`.
"""

from __future__ import annotations

import math

from ui.draw.vega_parts import dashed_rule
from ui.text import head_name


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
            dashed_rule(T, f"dashed line at T = {T}: the sidebar's sequence length"),
        ],
    }, data
