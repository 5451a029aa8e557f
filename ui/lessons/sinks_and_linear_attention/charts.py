"""The Sinks and linear attention page: the sinks URL list and the memory chart.

What the page computes is in attention_core/sinks_linear_views.py; its cached versions are declared in ui/compute.py.
Its own controls are ui/skeleton/page_params.PageParam declarations (in the page file); the per-head sink logits
travel in one of them, ``sinks=-2,0,2,4``, read by :func:`parse_sinks` and written by :func:`format_sinks`.
"""

from __future__ import annotations

import math

from attention_core.config import MAX_HEADS
from ui.draw.vega_parts import dashed_rule
from ui.skeleton.page_params import Fitted
from ui.text import head_name


def default_sinks(H: int) -> tuple[float, ...]:
    """Sink logits spread from -2 to 4 over the heads (a trained model learns one per head), in steps of 0.5."""
    if H == 1:
        return (1.0,)
    return tuple(float(round((-2 + 6 * h / (H - 1)) * 2) / 2) for h in range(H))


SINKS_CHARS = 8 * MAX_HEADS  # the longest sinks= the link carries: "-10.0, " for each of the most heads offered


def parse_sinks(raw: str, H: int) -> tuple[float, ...] | Fitted:
    """Sink logits for H heads from the URL text "0.5,1,-2": heads it does not give keep their default; a number
    moved to a multiple of 0.5 from -10 to 10, or one that cannot be read (its head's default instead), or values
    beyond the H heads (dropped) give the logits used as :class:`Fitted`, with a notice saying what changed."""
    values, notes = list(default_sinks(H)), []
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
    return Fitted(tuple(values), tuple(notes)) if notes else tuple(values)


def format_sinks(sinks: tuple[float, ...]) -> str:
    """Sink logits as the link writes them: "-2,0,2,4"."""
    return ",".join(f"{s:g}" for s in sinks)


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
