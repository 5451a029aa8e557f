"""A chart's text alternative from its own rows: what it plots and what its lines or bars do.

Vega makes a spec's ``description`` the chart's ``aria-label``; without one a screen reader hears "Vega
visualization". Heatmaps and bar charts describe themselves (ui/draw/charts.describe_map, bar_chart); every other chart
whose rows pass through ``ui.draw.charts.with_data`` or ``ui.draw.vega.arrow_datasets`` gets :func:`describe_spec`: the
title, the y axis against the x axis, and per line (the colour field) its first and last value and its largest, or
for bars the largest and the smallest. The numbers are the rows the chart draws, so the text follows the setting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.text import fmt

MAX_SERIES = 6  # lines named one by one; more are counted


def _num(v) -> str:
    """A number as the sentences write it (3 significant digits), whole numbers whole (d_k 1024, step 1500)."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e6 else fmt(v)


def _title(spec: dict) -> str:
    t = spec.get("title")
    if isinstance(t, dict):
        t = t.get("text")
    if isinstance(t, list):
        t = " ".join(map(str, t))
    return str(t) if t else ""


def _name(channel: dict) -> str:
    title = channel.get("title")
    return str(title) if isinstance(title, str) and title else str(channel.get("field"))


def _units(spec: dict) -> list[dict]:
    """The spec itself and its layers, the ones that draw marks first (areas and rules last)."""
    units = [spec, *spec.get("layer", [])]

    def rank(u):
        mark = u.get("mark")
        kind = mark.get("type") if isinstance(mark, dict) else mark
        return {"line": 0, "bar": 0, "point": 1}.get(kind, 2)

    return sorted(units, key=rank)


def _plotted(spec: dict, datasets: dict[str, pd.DataFrame]):
    """(unit, rows) of the first unit whose x and y fields are columns of its rows, or None."""
    for unit in _units(spec):
        enc = unit.get("encoding") or {}
        x, y = enc.get("x") or {}, enc.get("y") or {}
        name = (unit.get("data") or spec.get("data") or {}).get("name")
        rows = datasets.get(name) if name else (next(iter(datasets.values())) if len(datasets) == 1 else None)
        if rows is not None and {x.get("field"), y.get("field")} <= set(rows.columns):
            return unit, rows
    return None


def describe_spec(spec: dict, datasets: dict[str, pd.DataFrame]) -> str:
    """The text alternative of ``spec`` drawing ``datasets`` (name -> rows); the title alone if no unit plots
    two columns of its rows."""
    title = _title(spec)
    found = _plotted(spec, datasets)
    if found is None:
        return title or "chart"
    unit, rows = found
    enc = unit["encoding"]
    x, y = enc["x"], enc["y"]
    xf, yf = x["field"], y["field"]
    what = f"{title}: " if title else ""
    rows = rows[np.isfinite(pd.to_numeric(rows[yf], errors="coerce"))]
    if rows.empty:
        return f"{what}{_name(y)} against {_name(x)}, no values."
    if x.get("type") in ("nominal", "ordinal"):
        top, low = rows.loc[rows[yf].idxmax()], rows.loc[rows[yf].idxmin()]
        return (
            f"{what}{len(rows)} bars of {_name(y)} by {_name(x)}; the largest, {_num(top[yf])}, at {top[xf]}; the "
            f"smallest, {_num(low[yf])}, at {low[xf]}."
        )
    series = next((enc[c]["field"] for c in ("color", "detail", "strokeDash") if c in enc and "field" in enc[c]), None)
    groups = list(rows.groupby(series, sort=False)) if series in rows.columns else [("", rows)]
    parts = []
    for name, g in groups[:MAX_SERIES]:
        g = g.sort_values(xf)
        first, last, top = g.iloc[0], g.iloc[-1], g.loc[g[yf].idxmax()]
        parts.append(
            (f"{name}: " if name != "" else "")
            + f"{_num(first[yf])} at {_num(first[xf])}, {_num(last[yf])} at {_num(last[xf])}, largest "
            + f"{_num(top[yf])} at {_num(top[xf])}"
        )
    more = f"; and {len(groups) - MAX_SERIES} more lines" if len(groups) > MAX_SERIES else ""
    lines = f"{len(groups)} lines" if len(groups) > 1 else "a line"
    return f"{what}{_name(y)} against {_name(x)}, {lines}. " + "; ".join(parts) + more + "."
