"""One query's weights as bars that stay readable at any length (Playground, Cross-attention).

Up to ``MAX_BARS`` keys every key gets a bar in token order. Above that the bars would be thinner than
a pixel and their labels dropped, so only the ``TOP_K`` largest weights are drawn, largest first, and the
caption says so and how much of the row they hold. The value axis runs from 0 to 1, or, when the reader
stretches the scales, from 0 to the largest weight (the chart's title says so).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.draw import vega
from ui.draw.charts import Scale, bar_chart, weight_axis
from ui.text import fmt

MAX_BARS = 64  # keys shown one bar each, in order
TOP_K = 20  # bars shown above MAX_BARS keys


def query_bars(row, labels: list[str], title: str, container=None, scale: Scale | None = None) -> str:
    """Draw ``row`` (T_k,) over ``labels`` on ``scale`` (default :func:`ui.draw.charts.weight_axis` of the row: 0 to 1
    unless the reader stretches) and return a caption sentence saying what the bars show."""
    box = container or st
    row = np.asarray(row, dtype=np.float64)
    n = row.size
    if n > MAX_BARS:
        order = np.argsort(-row, kind="stable")[:TOP_K]  # the TOP_K largest weights, largest first
        values, names = row[order], [f"{labels[j]} (#{j + 1})" for j in order]
        shown = (
            f"Only the {TOP_K} largest of the {n} weights are drawn, largest first (they hold "
            f"{fmt(100 * float(values.sum()))}% of the row; the other {n - TOP_K} average "
            f"{fmt(float(row.sum() - values.sum()) / (n - TOP_K))})."
        )
    else:
        values, names, shown = row, list(labels), ""
    scale = scale or weight_axis(row)
    note = scale.note("axis") if scale.stretched else ""
    vega.draw(box, bar_chart(values, names, title=title, domain=scale.domain, note=note), width="stretch")
    return shown.strip()
