"""Small labelled matrices drawn large with their numbers in the cells (Step by step's T x T maps).

show_heatmap draws maps of up to hundreds of tokens at up to 28 px a cell; the walkthrough's 1 to 16
tokens need bigger cells with the value written in each, a fixed colour domain stated in the legend,
and token labels on both axes.
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from ui.draw.charts import Axes, describe_map
from ui.draw.vega import arrow_rows, digest
from ui.server.cache import cached
from ui.text import fmt_all

INK = "contrast('white', scale('color', datum.v)) > contrast('black', scale('color', datum.v))"


def cell_px(n: int) -> int:
    """Pixels per cell: 56 for up to 6 tokens, shrinking to fit about 420 px, never below 26."""
    return int(max(26, min(56, 420 // max(n, 1))))


def _frame(m: np.ndarray, row_labels, col_labels, row_title: str, col_title: str) -> pd.DataFrame:
    n_r, n_c = m.shape
    ii, jj = np.meshgrid(np.arange(n_r), np.arange(n_c), indexing="ij")
    df = pd.DataFrame(
        {
            "r": ii.ravel(),
            "c": jj.ravel(),
            "v": m.ravel(),
            row_title: np.asarray(row_labels, dtype=object)[ii.ravel()],
            col_title: np.asarray(col_labels, dtype=object)[jj.ravel()],
        }
    )
    df["text"] = fmt_all(df["v"])  # in the cell and the tooltip, as the tables and sentences write it
    return df


@cached(max_mb=4)
def _skeleton(
    shape,
    row_labels: tuple,
    col_labels: tuple,
    title: str,
    lo: float,
    hi: float,
    value_name: str,
    diverging: bool,
    row_title: str,
    col_title: str,
) -> str:
    """The layered Vega-Lite spec (rects and their numbers) without data, built and validated by Altair once."""
    n_r, n_c = shape
    px = cell_px(max(n_r, n_c))
    scale = (
        alt.Scale(scheme="redblue", reverse=True, domain=[lo, hi], domainMid=0)
        if diverging
        else alt.Scale(scheme="viridis", domain=[lo, hi])
    )
    x = alt.X(
        "c:O",
        scale=alt.Scale(domain=list(range(n_c))),
        title=col_title,
        axis=alt.Axis(labelExpr=f"{json.dumps(list(col_labels))}[datum.value]", labelAngle=0, labelFontSize=13),
    )
    y = alt.Y(
        "r:O",
        scale=alt.Scale(domain=list(range(n_r))),
        title=row_title,
        axis=alt.Axis(labelExpr=f"{json.dumps(list(row_labels))}[datum.value]", labelFontSize=13),
    )
    tooltip = [
        alt.Tooltip(f"{row_title}:N"),
        alt.Tooltip(f"{col_title}:N"),
        alt.Tooltip("text:N", title=value_name),
    ]
    base = alt.Chart(_frame(np.zeros((1, 1)), ["."], ["."], row_title, col_title))
    rect = base.mark_rect().encode(
        x=x,
        y=y,
        tooltip=tooltip,
        color=alt.Color(
            "v:Q",
            scale=scale,
            title=f"{value_name} ({lo:g} to {hi:g})",
            legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=max(80, min(200, px * n_c))),
        ),
    )
    text = base.mark_text(fontSize=max(11, min(14, px // 4))).encode(  # chart text 11 px at the least
        x=x,
        y=y,
        text="text:N",
        tooltip=tooltip,
        # black or white, whichever contrasts more with the cell's colour as Vega draws it (at least 4.58:1)
        color=alt.condition(INK, alt.value("white"), alt.value("black")),
    )
    # "pad": the size comes from the cells; Vega must not try to fit it (no console warnings)
    spec = (
        alt.layer(rect, text)
        .properties(
            title=title,
            width=alt.Step(px),
            height=alt.Step(px),
            autosize=alt.AutoSizeParams(type="pad", contains="padding"),
        )
        .to_dict()
    )
    spec.pop("datasets", None)
    spec["data"] = {"name": "cells"}
    for layer in spec.get("layer", []):
        layer.pop("data", None)
    return json.dumps(spec)


def matrix_chart(
    m,
    row_labels,
    col_labels,
    *,
    title: str,
    domain: tuple[float, float],
    value_name: str,
    diverging: bool = False,
    row_title: str = "query",
    col_title: str = "key",
) -> dict:
    """A Vega-Lite spec (for st.vega_lite_chart) of ``m`` (n_r, n_c) with the value in every cell on the fixed
    colour ``domain``; ``diverging`` uses blue-white-red around 0 (scores), otherwise viridis (weights).

    The layout is built by Altair once and the cells converted to Arrow once per content (both cached)."""
    m = np.asarray(m, dtype=np.float64)
    lo, hi = map(float, domain)
    rows, cols = tuple(map(str, row_labels)), tuple(map(str, col_labels))
    spec = json.loads(_skeleton(m.shape, rows, cols, title, lo, hi, value_name, diverging, row_title, col_title))
    key = ("step", digest(m), rows, cols, row_title, col_title, lo, hi, diverging)
    spec["datasets"] = {"cells": arrow_rows(key, lambda: _frame(m, rows, cols, row_title, col_title))}
    spec["usermeta"] = {"group": title, "value": value_name}
    spec["description"] = describe_map(m, rows, cols, title, Axes(row_title, col_title, value_name))
    return spec
