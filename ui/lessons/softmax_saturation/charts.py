"""Charts of the Softmax saturation page: one measure over d_k, the user's scaling choice drawn bold.

Each chart lists in its legend only the series it draws; the series of the current setting is named
"(your setting)" and drawn thick, the other one thin and faded, so the scaling toggle changes what is
shown. Log axes get explicit 1-2-5 ticks (so 1, where the scaled score spread sits, is labelled) and
fall back to a linear axis when a value is 0 (a log axis cannot show it).

A chart's layout (its layers, encodings, legend) is built and validated by Altair once per kind (measure,
titles, axis type, which series, which is the user's) and kept as JSON; a new setting fills in the rows as
named Arrow datasets and the log axis's range and ticks. Altair took 0.2-0.3 s a chart, which made a new
temperature cost over a second before any drawing.
"""

from __future__ import annotations

import json
import math

import altair as alt
import numpy as np
import pyarrow as pa
from streamlit import dataframe_util

from attention_core.sweep import MEASURES, SaturationPoint, SaturationSweep
from ui.draw.chart_text import describe_spec
from ui.server.cache import cached

COLORS = {"scaled": "#4c78a8", "unscaled": "#e45756", "unscaled_sqrt_dk": "#54a24b"}
NAMES = {"scaled": "scaled by 1/√d_k", "unscaled": "unscaled", "unscaled_sqrt_dk": "unscaled at temperature τ·√d_k"}
DATASETS = ("curves", "marks", "theory", "rule")  # the named datasets of a chart's layers


def series_name(setting: str, scaled_now: bool) -> str:
    """The legend name of a series; the current setting's says so."""
    mine = (setting == "scaled") == scaled_now and setting != "unscaled_sqrt_dk"
    return NAMES[setting] + (" (your setting)" if mine else "")


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 tick values from ``lo`` to ``hi`` (both > 0); 1-1.5-2-3-...-9 when that gives fewer than three."""
    for mantissas in ((1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)):
        out = []
        for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
            out += [m * 10.0**e for m in mantissas if lo <= m * 10.0**e <= hi]
        if len(out) >= 3:
            break
    return [float(f"{t:.6g}") for t in out]


def _points_table(points, measure: str, names: list[str], mine: list[bool]) -> pa.Table:
    """One row per point: d_k, the measure's mean, lo and hi, the series name and whether it is the user's. Only
    this measure's columns: a chart whose numbers did not change (the score spread, when the temperature moves)
    sends the same bytes again, and the browser need not redraw it."""
    cols = {"d_k": [float(p.d_k) for p in points]}
    for key, part in ((measure, "mean"), (f"{measure}_lo", "lo"), (f"{measure}_hi", "hi")):
        cols[key] = np.array([getattr(getattr(p, measure), part) for p in points], dtype=np.float64)
    return pa.table({**cols, "setting": names, "mine": mine})


def _arrow(table: pa.Table) -> bytes:
    return dataframe_util.convert_anything_to_arrow_bytes(table)


@cached(max_mb=2)
def _skeleton(measure: str, title: str, y_title: str, log_y: bool, settings: tuple[str, ...], scaled_now: bool,
              theory: bool, d_ks: tuple[int, ...]) -> str:  # fmt: skip
    """The layered Vega-Lite spec of one chart kind without its rows (and, on a log axis, without its range and
    ticks), as JSON: bands over seeds, a line per drawn setting, the current d_k as a rule, a filled diamond on
    the current setting and a hollow one on the other; optional dashed theory lines."""
    if log_y:  # range and ticks are filled in per setting
        yscale, axis = alt.Scale(type="log", domain=[0.1, 10.0], nice=False), alt.Axis(values=[1.0], format=".4~g")
    else:
        yscale, axis = alt.Scale(zero=False, nice=True), alt.Axis(format=".4~g")
    names = [series_name(s, scaled_now) for s in settings]
    color = alt.Color(
        "setting:N",
        scale=alt.Scale(domain=names, range=[COLORS[s] for s in settings]),
        legend=alt.Legend(
            orient="top",
            title=None,
            labelLimit=260,
            columns=len(settings) % 3 or 1,
            symbolType="stroke",
            symbolStrokeWidth=3,
            symbolOpacity=1,
        ),
    )
    x = alt.X(
        "d_k:Q",
        scale=alt.Scale(type="log", base=2, domain=[d_ks[0], d_ks[-1]], nice=False),
        axis=alt.Axis(values=list(d_ks), format="d"),
        title="d_k (log scale)",
    )
    y = alt.Y(f"{measure}:Q", scale=yscale, axis=axis, title=y_title)
    tip = [alt.Tooltip("setting:N"), alt.Tooltip("d_k:Q", format="d"), alt.Tooltip(f"{measure}:Q", format=".4g")]
    curves = alt.Chart(alt.NamedData(name="curves"))
    layers = [
        curves.mark_area(opacity=0.15).encode(
            x=x, y=alt.Y(f"{measure}_lo:Q", scale=yscale, axis=axis, title=y_title), y2=f"{measure}_hi:Q", color=color
        ),
        curves.mark_line(point=True).encode(
            x=x,
            y=y,
            color=color,
            strokeWidth=alt.condition("datum.mine", alt.value(3.5), alt.value(1.5)),
            opacity=alt.condition("datum.mine", alt.value(1.0), alt.value(0.5)),
            strokeDash=alt.condition(
                f"datum.setting == '{NAMES['unscaled_sqrt_dk']}'", alt.value([6, 4]), alt.value([1, 0])
            ),
            tooltip=tip,
        ),
    ]
    if theory:
        layers.append(
            alt.Chart(alt.NamedData(name="theory"))
            .mark_line(strokeDash=[2, 2], color="#555", strokeWidth=1)
            .encode(
                x=x,
                y=alt.Y("value:Q", scale=yscale, axis=axis, title=y_title),
                detail="setting:N",
                tooltip=[
                    alt.Tooltip("setting:N", title="theory for"),
                    alt.Tooltip("d_k:Q", format="d"),
                    alt.Tooltip("value:Q", format=".4g"),
                ],
            )
        )
    layers.append(alt.Chart(alt.NamedData(name="rule")).mark_rule(color="#333", strokeDash=[3, 3]).encode(x=x))
    layers.append(
        alt.Chart(alt.NamedData(name="marks"))
        .mark_point(size=170, shape="diamond", stroke="black")
        .encode(
            x=x,
            y=y,
            color=color,
            fillOpacity=alt.condition("datum.mine", alt.value(1.0), alt.value(0.0)),
            fill=color,
            tooltip=tip,
        )  # fmt: skip
    )
    return json.dumps(alt.layer(*layers).properties(title=title, height=230).to_dict())


def sweep_chart_spec(
    sweep: SaturationSweep,
    measure: str,
    title: str,
    y_title: str,
    now: SaturationPoint,
    other: SaturationPoint,
    log_y: bool = False,
    with_sqrt_dk: bool = False,
    theory: bool = False,
) -> dict:
    """A layered Vega-Lite spec of ``measure`` over the sweep's d_k (see :func:`_skeleton`), its rows as named Arrow
    datasets. A log axis whose values include 0 falls back to a linear one."""
    if measure not in MEASURES:
        raise ValueError(f"measure={measure!r} is not allowed; choose one of {MEASURES}")
    settings = ("scaled", "unscaled") + (("unscaled_sqrt_dk",) if with_sqrt_dk else ())
    curve_points = [p for s in settings for p in sweep.curve(s)]
    curve_names = [series_name(s, now.scaled) for s in settings for _ in sweep.d_ks]
    curve_mine = [(s == "scaled") == now.scaled and s != "unscaled_sqrt_dk" for s in settings for _ in sweep.d_ks]
    d_ks = [float(d) for d in sweep.d_ks]
    th_names = [series_name(s, now.scaled) for _ in d_ks for s in ("scaled", "unscaled")]
    th_values = [v for d in sweep.d_ks for v in (1.0, math.sqrt(d))]
    values = [getattr(p, measure) for p in curve_points]
    values = [v.lo for v in values] + [v.hi for v in values]
    values += [getattr(p, measure).mean for p in (now, other)] + (th_values if theory else [])
    lo, hi = min(values), max(values)
    log = log_y and lo > 0
    spec = json.loads(_skeleton(measure, title, y_title, log, settings, now.scaled, theory, tuple(sweep.d_ks)))
    if log:
        domain = [lo / 1.15, hi * 1.15]
        for layer in spec["layer"]:
            y = layer["encoding"].get("y")
            if y and "scale" in y:
                y["scale"]["domain"], y["axis"]["values"] = domain, log_ticks(*domain)
    marks = (now, other)
    curves = _points_table(curve_points, measure, curve_names, curve_mine)
    # its text alternative, from the curves it draws (ui/draw/chart_text.py); Vega reads it as the chart's aria-label
    spec["description"] = describe_spec(spec, {"curves": curves.to_pandas()})
    spec["datasets"] = {
        "curves": _arrow(curves),
        "marks": _arrow(
            _points_table(
                marks,
                measure,
                [series_name("scaled" if p.scaled else "unscaled", now.scaled) for p in marks],
                [True, False],
            )
        ),
        "theory": _arrow(pa.table({"d_k": [d for d in d_ks for _ in (0, 1)], "value": th_values, "setting": th_names})),
        "rule": _arrow(pa.table({"d_k": [float(now.d_k)]})),
    }
    if not theory:
        del spec["datasets"]["theory"]
    return spec
