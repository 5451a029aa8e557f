"""Charts of the Softmax saturation page: one measure over d_k, the user's scaling choice drawn bold.

Each chart lists in its legend only the series it draws; the series of the current setting is named
"(your setting)" and drawn thick, the other one thin and faded, so the scaling toggle changes what is
shown. Log axes get explicit 1-2-5 ticks (so 1, where the scaled score spread sits, is labelled) and
fall back to a linear axis when a value is 0 (a log axis cannot show it).
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from attention_core.sweep import SaturationPoint, SaturationSweep

COLORS = {"scaled": "#4c78a8", "unscaled": "#e45756", "unscaled_sqrt_dk": "#54a24b"}
NAMES = {"scaled": "scaled by 1/√d_k", "unscaled": "unscaled", "unscaled_sqrt_dk": "unscaled at temperature τ·√d_k"}


def series_name(setting: str, scaled_now: bool) -> str:
    """The legend name of a series; the current setting's says so."""
    mine = (setting == "scaled") == scaled_now and setting != "unscaled_sqrt_dk"
    return NAMES[setting] + (" (your setting)" if mine else "")


def sweep_frame(sweep: SaturationSweep, settings: tuple[str, ...], scaled_now: bool) -> pd.DataFrame:
    """One row per (setting, d_k) with every measure's mean, lo and hi, plus the series name and emphasis."""
    rows = []
    for setting in settings:
        mine = (setting == "scaled") == scaled_now and setting != "unscaled_sqrt_dk"
        for p in sweep.curve(setting):
            rows.append({**p.row(), "setting": series_name(setting, scaled_now), "mine": mine})
    return pd.DataFrame(rows)


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 tick values from ``lo`` to ``hi`` (both > 0); 1-1.5-2-3-...-9 when that gives fewer than three."""
    for mantissas in ((1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)):
        out = []
        for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
            out += [m * 10.0**e for m in mantissas if lo <= m * 10.0**e <= hi]
        if len(out) >= 3:
            break
    return [float(f"{t:.6g}") for t in out]


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
    """A layered Vega-Lite spec: bands over seeds, a line per drawn setting, the current d_k as a rule,
    a filled diamond on the current setting and a hollow one on the other; optional dashed theory lines."""
    settings = ("scaled", "unscaled") + (("unscaled_sqrt_dk",) if with_sqrt_dk else ())
    df = sweep_frame(sweep, settings, now.scaled)
    marks = pd.DataFrame(
        [
            {**p.row(), "setting": series_name("scaled" if p.scaled else "unscaled", now.scaled), "mine": p is now}
            for p in (now, other)
        ]
    )
    th = pd.DataFrame(
        [
            {"d_k": float(d), "value": v, "setting": series_name(s, now.scaled)}
            for d in sweep.d_ks
            for s, v in (("scaled", 1.0), ("unscaled", math.sqrt(d)))
        ]
    )
    values = pd.concat([df[f"{measure}_lo"], df[f"{measure}_hi"], marks[measure]] + ([th["value"]] if theory else []))
    lo, hi = float(values.min()), float(values.max())
    if log_y and lo > 0:
        domain = [lo / 1.15, hi * 1.15]
        yscale = alt.Scale(type="log", domain=domain, nice=False)
        axis = alt.Axis(values=log_ticks(*domain), format=".4~g")
    else:
        yscale, axis = alt.Scale(zero=False, nice=True), alt.Axis(format=".4~g")
    names = [series_name(s, now.scaled) for s in settings]
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
        scale=alt.Scale(type="log", base=2, domain=[sweep.d_ks[0], sweep.d_ks[-1]], nice=False),
        axis=alt.Axis(values=list(sweep.d_ks), format="d"),
        title="d_k (log scale)",
    )
    y = alt.Y(f"{measure}:Q", scale=yscale, axis=axis, title=y_title)
    base = alt.Chart(df)
    layers = [
        base.mark_area(opacity=0.15).encode(
            x=x, y=alt.Y(f"{measure}_lo:Q", scale=yscale, axis=axis, title=y_title), y2=f"{measure}_hi:Q", color=color
        ),
        base.mark_line(point=True).encode(
            x=x,
            y=y,
            color=color,
            strokeWidth=alt.condition("datum.mine", alt.value(3.5), alt.value(1.5)),
            opacity=alt.condition("datum.mine", alt.value(1.0), alt.value(0.5)),
            strokeDash=alt.condition(
                f"datum.setting == '{NAMES['unscaled_sqrt_dk']}'", alt.value([6, 4]), alt.value([1, 0])
            ),
            tooltip=["setting:N", alt.Tooltip("d_k:Q", format="d"), alt.Tooltip(f"{measure}:Q", format=".4g")],
        ),
    ]
    if theory:
        layers.append(
            alt.Chart(th)
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
    layers.append(
        alt.Chart(pd.DataFrame({"d_k": [float(now.d_k)]})).mark_rule(color="#333", strokeDash=[3, 3]).encode(x=x)
    )
    layers.append(
        alt.Chart(marks)
        .mark_point(size=170, shape="diamond", stroke="black")
        .encode(
            x=x,
            y=y,
            color=color,
            fillOpacity=alt.condition("datum.mine", alt.value(1.0), alt.value(0.0)),
            fill=color,
            tooltip=[
                alt.Tooltip("setting:N"),
                alt.Tooltip("d_k:Q", format="d"),
                alt.Tooltip(f"{measure}:Q", format=".4g"),
            ],
        )
    )
    return alt.layer(*layers).properties(title=title, height=230).to_dict()
