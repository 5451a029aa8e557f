"""The Positions page's chart: the scores by offset (what it computes is in attention_core/position_views.py, its
cached versions in ui/compute.py; its own controls are ui/skeleton/page_params.PageParam declarations in the page file).
"""

from __future__ import annotations

from attention_core.positions import OffsetProfile
from ui.draw.vega_parts import dashed_rule

METHOD_LABELS = {
    "sinusoidal": "sinusoidal (added)",
    "learned": "learned table (added)",
    "rope": "RoPE (rotated)",
    "alibi": "ALiBi (biased)",
}


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
        dashed_rule(o, f"dashed line at offset {o}: the trained length ends (|offset| = {train_len - 1})")
        for o in limits
    ]
    return {"title": title, "height": 260, "width": "container", "layer": layers}, data
