"""The Positional encoding page's line charts, built by Altair once per setting (ui/draw/vega.py: Arrow data).

Building and validating an Altair chart on every rerun was about half of that page's server CPU per change.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ui.compute import cached_positions
from ui.draw.vega import arrow_datasets
from ui.server.cache import cached


@cached(max_mb=8)
def curves_spec(T: int, d_model: int, dims: tuple[int, ...]) -> dict:
    """PE[:, d] over the T positions for each picked dimension d, one coloured line each."""
    pe = cached_positions(T, d_model)[0]  # (T, d_model)
    curves = pd.DataFrame(
        {
            "position": np.tile(np.arange(T), len(dims)),
            "value": pe[:, list(dims)].T.ravel(),
            "dimension": [f"dim {d} ({'sin' if d % 2 == 0 else 'cos'})" for d in dims for _ in range(T)],
        }
    )
    chart = (
        alt.Chart(curves)
        .mark_line(point=T <= 64)
        .encode(
            x="position:Q",
            y=alt.Y("value:Q", scale=alt.Scale(domain=[-1, 1])),
            color=alt.Color("dimension:N", legend=alt.Legend(orient="bottom")),
            tooltip=["dimension:N", "position:Q", alt.Tooltip("value:Q", format=".4f")],
        )
        .properties(height=240)
    )
    return arrow_datasets(chart.to_dict())


@cached(max_mb=2)
def distance_spec(T: int, d_model: int) -> dict:
    """The mean PE_i · PE_j over the pairs at each distance |i - j|."""
    by_offset = cached_positions(T, d_model)[2]  # (T,)
    chart = (
        alt.Chart(pd.DataFrame({"distance": np.arange(T), "mean dot product": by_offset}))
        .mark_line(point=T <= 2)
        .encode(x="distance:Q", y="mean dot product:Q")
        .properties(height=260, title="mean PE·PE by distance")
    )
    return arrow_datasets(chart.to_dict())
