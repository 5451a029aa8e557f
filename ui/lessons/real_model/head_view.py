"""The BertViz-style head view: lines from each query token to the key tokens (the model view of all layers x
heads is a canvas: ui/lessons/real_model/model_view.py)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ui.text import fmt_all

MIN_LINE = 0.02  # weights below this are not drawn as lines (they would be invisible anyway)
WIDTH = 440  # px: the chart's width where its box allows (pages draw it with width=WIDTH)
LEFT, RIGHT = 0.25, 0.75  # the query and key columns, as fractions of the width (110 and 330 px at WIDTH)
LABEL_LIMIT = 80  # px: a longer token is cut with an ellipsis (its lines' tooltips name it whole)


def head_view_chart(
    weights: np.ndarray, tokens: list[str], isolate: int | None = None, title: str = ""
) -> alt.LayerChart:
    """Queries on the left, keys on the right, a line per (query, key) with opacity = weight.

    Hovering a query token on the left isolates its lines; ``isolate`` does the same from Python."""
    T = len(tokens)
    i, j = np.nonzero(weights >= MIN_LINE)
    if isolate is not None:
        keep = i == isolate
        i, j = i[keep], j[keep]
    lines = pd.DataFrame(
        {
            "q": i,
            "k": j,
            "w": np.round(weights[i, j], 4),
            "weight": fmt_all(weights[i, j]),  # the tooltip's text, as ui.text.fmt writes it on the page
            "x0": LEFT,
            "x1": RIGHT,
            "query": [tokens[a] for a in i],
            "key": [tokens[b] for b in j],
        }
    )
    text = pd.DataFrame({"pos": np.arange(T), "token": tokens, "left": LEFT, "right": RIGHT})
    hover = alt.selection_point(fields=["q"], on="pointerover", clear="pointerout", empty=True, name="hover")
    height = max(120, 18 * T)
    # the token columns sit at fixed fractions of the chart's width, which is its box's (at most WIDTH px): on a
    # phone the chart narrows with the lines between the columns instead of running off the screen
    x = alt.Scale(domain=[0, 1])
    y = alt.Y("pos:O", axis=None, scale=alt.Scale(domain=list(range(T))))
    left = (
        alt.Chart(text)
        .mark_text(align="right", dx=-6, limit=LABEL_LIMIT)
        .encode(x=alt.X("left:Q", scale=x, axis=None), y=y, text="token:N")
        .transform_calculate(q="datum.pos")
        .add_params(hover)
    )
    right = (
        alt.Chart(text)
        .mark_text(align="left", dx=6, limit=LABEL_LIMIT)
        .encode(x=alt.X("right:Q", scale=x, axis=None), y=y, text="token:N")
    )
    rules = (
        alt.Chart(lines)
        .mark_rule(color="#e45756", strokeWidth=2)
        .encode(
            x=alt.X("x0:Q", scale=x, axis=None),
            x2="x1:Q",
            y=alt.Y("q:O", axis=None, scale=alt.Scale(domain=list(range(T)))),
            y2="k:O",
            opacity=alt.condition(
                hover, alt.Opacity("w:Q", scale=alt.Scale(domain=[0, 1], range=[0.05, 1]), legend=None), alt.value(0.02)
            ),
            tooltip=["query:N", "key:N", "weight:N"],
        )
    )
    said = "no line drawn"
    if len(i):  # the strongest line drawn
        k = int(np.argmax(weights[i, j]))
        said = f"the strongest, {tokens[i[k]]} to {tokens[j[k]]}, weight {weights[i[k], j[k]]:.3g}"
    description = (
        f"{title + ': ' if title else ''}head view of {T} tokens, queries on the left and keys on the right, "
        f"{len(i)} lines of weight {MIN_LINE} or more" + (f" from query {tokens[isolate]}" if isolate is not None else "")
        + f"; {said}."
    )  # fmt: skip
    chart = alt.layer(rules, left, right).properties(width="container", height=height, description=description)
    return chart.properties(title=title) if title else chart
