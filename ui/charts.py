"""Chart builders: Altair heatmaps with token labels and tooltips, and an image fallback for big ones.

Above ``MAX_VECTOR_CELLS`` cells a heatmap is drawn as a PNG (mean-pooled to at most ``max_px``
pixels a side) instead of one vector mark per cell: tooltips go, speed and payload stay small.
Token labels always travel as data or as a JSON array in a Vega expression, never as HTML.
"""

from __future__ import annotations

import functools
import json

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.images import _LUTS, heatmap_png, pool  # noqa: F401 - re-exported for the pages

MAX_VECTOR_CELLS = 4096  # 64 x 64
def _axis(labels: list[str], title: str, show_labels: bool, angle: int = -45) -> alt.Axis:
    if not show_labels:
        return alt.Axis(title=title, labels=False, ticks=False)
    # labels as a JSON array indexed by position: duplicates stay separate, text is never HTML
    return alt.Axis(title=title, labelExpr=f"{json.dumps(labels)}[datum.value]", labelAngle=angle, labelLimit=90)


def _step(n: int, size: int) -> int:
    """Pixels per cell so that n cells fill about ``size`` pixels (Streamlit 1.67 draws ordinal
    heatmaps reliably with step sizes, not with a fixed width/height)."""
    return int(max(3, min(24, size // max(n, 1))))


def _heatmap_frame(m: np.ndarray, row_labels, col_labels, row_title: str, col_title: str, blank=None) -> pd.DataFrame:
    n_r, n_c = m.shape
    ii, jj = np.meshgrid(np.arange(n_r), np.arange(n_c), indexing="ij")
    keep = np.ones_like(m, dtype=bool) if blank is None else ~np.asarray(blank, dtype=bool)
    return pd.DataFrame({"r": ii[keep], "c": jj[keep], "v": np.round(m[keep], 4),
                         row_title: np.asarray(row_labels, dtype=object)[ii[keep]],
                         col_title: np.asarray(col_labels, dtype=object)[jj[keep]]})


def _heatmap_altair(df, shape, row_labels, col_labels, title, row_title, col_title, value_name, domain, scheme, size,
                    legend) -> alt.Chart:
    """One rect per cell, tooltips with both tokens and the value (cells missing from ``df`` stay blank)."""
    n_r, n_c = shape
    show = max(n_r, n_c) <= 40
    if scheme == "viridis":
        color_scale = alt.Scale(scheme="viridis", domain=list(domain)) if domain else alt.Scale(scheme="viridis")
    else:
        color_scale = alt.Scale(scheme="redblue", reverse=True, domainMid=0, **({"domain": list(domain)} if domain else {}))
    chart = alt.Chart(df, title=title or alt.Undefined).mark_rect().encode(
        x=alt.X("c:O", axis=_axis(list(col_labels), col_title, show), scale=alt.Scale(domain=list(range(n_c)))),
        y=alt.Y("r:O", axis=_axis(list(row_labels), row_title, show, angle=0), scale=alt.Scale(domain=list(range(n_r)))),
        color=alt.Color("v:Q", scale=color_scale, title=value_name, legend=alt.Legend() if legend else None),
        tooltip=[alt.Tooltip(f"{row_title}:N"), alt.Tooltip(f"{col_title}:N"), alt.Tooltip("v:Q", title=value_name, format=".4f")],
    ).properties(width=alt.Step(_step(n_c, size)), height=alt.Step(_step(n_r, size)))
    return chart


@functools.lru_cache(maxsize=512)
def heatmap_spec(shape, row_labels, col_labels, title, row_title, col_title, value_name, domain, scheme, size,
                 legend) -> str:
    """The Vega-Lite spec of a heatmap without its data, as JSON text, built by Altair once per layout.

    Altair validates every chart it serialises (tens of ms for a layered chart); the pages redraw the
    same layouts with new numbers, so the skeleton is cached and only the data changes."""
    empty = pd.DataFrame({"r": [0], "c": [0], "v": [0.0], row_title: [""], col_title: [""]})
    spec = _heatmap_altair(empty, shape, row_labels, col_labels, title, row_title, col_title, value_name, domain,
                           scheme, size, legend).to_dict()
    spec.pop("datasets", None)
    spec.pop("data", None)
    return json.dumps(spec)


def show_heatmap(m, row_labels, col_labels, *, title: str = "", key: str | None = None, container=None,
                 max_px: int = 256, max_cells: int = MAX_VECTOR_CELLS, **kw) -> str:
    """Draw ``m`` as an Altair heatmap, or as an image above ``max_cells``; returns "vector" or "image"."""
    box = container or st
    m = np.asarray(m)
    if m.size <= max_cells:
        row_title, col_title = kw.get("row_title", "query"), kw.get("col_title", "key")
        domain = kw.get("domain")
        spec = heatmap_spec(m.shape, tuple(map(str, row_labels)), tuple(map(str, col_labels)), title, row_title,
                            col_title, kw.get("value_name", "weight"), None if domain is None else tuple(map(float, domain)),
                            kw.get("scheme", "viridis"), kw.get("size", 260), kw.get("legend", True))
        df = _heatmap_frame(m.astype(np.float64), row_labels, col_labels, row_title, col_title, kw.get("blank"))
        box.vega_lite_chart(df, json.loads(spec), key=key, width="content")
        return "vector"
    if kw.get("blank") is not None:
        m = np.where(np.asarray(kw["blank"], dtype=bool), np.nan, m.astype(np.float64))
    finite = m[np.isfinite(m)] if np.isfinite(m).any() else np.zeros(1)
    domain = kw.get("domain") or (float(finite.min()), float(finite.max()))
    scheme = kw.get("scheme", "viridis")
    if scheme != "viridis":
        lim = max(abs(domain[0]), abs(domain[1])) or 1.0
        domain = (-lim, lim)
    png, f = heatmap_png(m, domain[0], domain[1], "viridis" if scheme == "viridis" else "diverging", max_px=max_px)
    pooled = f" mean-pooled {f[0]}x{f[1]} to fit" if f != (1, 1) else ""
    grey = "; grey = masked" if kw.get("blank") is not None else ""
    box.image(png, output_format="PNG", caption=f"{title} ({m.shape[0]} x {m.shape[1]}, shown as an image{pooled}; "
                           f"colour {domain[0]:.3g} to {domain[1]:.3g}{grey})")
    return "image"


def bar_chart(values, labels: list[str], *, title: str = "", value_name: str = "weight",
              highlight: int | None = None, domain: tuple[float, float] | None = None) -> alt.Chart:
    """Bars in token order with the token as tooltip; ``highlight`` colours one bar."""
    values = np.asarray(values, dtype=np.float64)
    df = pd.DataFrame({"i": np.arange(len(values)), "token": list(labels), "v": np.round(values, 4)})
    df["top"] = df["i"] == (int(np.argmax(values)) if highlight is None else highlight)
    y = alt.Y("v:Q", title=value_name, scale=alt.Scale(domain=list(domain)) if domain else alt.Undefined)
    return alt.Chart(df, title=title or alt.Undefined).mark_bar().encode(
        x=alt.X("i:O", axis=_axis(list(labels), "key", len(values) <= 64)),
        y=y,
        color=alt.Color("top:N", legend=None, scale=alt.Scale(domain=[False, True], range=["#8aa1c1", "#e45756"])),
        tooltip=[alt.Tooltip("token:N"), alt.Tooltip("v:Q", title=value_name, format=".4f")],
    ).properties(height=220)


def matrix_frame(m: np.ndarray, row_labels: list[str], col_prefix: str = "") -> pd.DataFrame:
    """A small matrix as a labelled DataFrame for st.dataframe / st.table."""
    m = np.asarray(m)
    cols = [f"{col_prefix}{j}" for j in range(m.shape[1])]
    return pd.DataFrame(m, index=pd.Index(list(row_labels), dtype=object), columns=cols)


SETTING_COLORS = {"scaled": "#4c78a8", "unscaled": "#e45756", "unscaled, τ·√d_k": "#54a24b"}


def sweep_chart(df: pd.DataFrame, measure: str, title: str, marker_d_k: int, marker: pd.DataFrame,
                log_y: bool = False, theory: pd.DataFrame | None = None, y_title: str | None = None) -> alt.LayerChart:
    """Curves of ``measure`` over d_k (log2 x axis), a band from ``measure_lo`` to ``measure_hi`` per
    setting, a rule and points at the current d_k (``marker`` has one row per setting), and optional
    dashed theory lines (columns d_k, value, setting)."""
    yscale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    color = alt.Color("setting:N", scale=alt.Scale(domain=list(SETTING_COLORS), range=list(SETTING_COLORS.values())),
                      legend=alt.Legend(orient="bottom", title=None))
    x = alt.X("d_k:Q", scale=alt.Scale(type="log", base=2), title="d_k (log scale)")
    base = alt.Chart(df)
    band = base.mark_area(opacity=0.2).encode(x=x, y=alt.Y(f"{measure}_lo:Q", scale=yscale, title=y_title or measure),
                                              y2=f"{measure}_hi:Q", color=color)
    dash = alt.condition("datum.setting == 'unscaled, τ·√d_k'", alt.value([6, 4]), alt.value([1, 0]))
    line = base.mark_line(point=True).encode(x=x, y=alt.Y(f"{measure}:Q", scale=yscale), color=color, strokeDash=dash,
                                             tooltip=["setting:N", "d_k:Q", alt.Tooltip(f"{measure}:Q", format=".4g")])
    layers = [band, line]
    if theory is not None:
        layers.append(alt.Chart(theory).mark_line(strokeDash=[2, 2], color="#555").encode(
            x=x, y=alt.Y("value:Q", scale=yscale), detail="setting:N",
            tooltip=[alt.Tooltip("setting:N", title="theory"), "d_k:Q", alt.Tooltip("value:Q", format=".4g")]))
    layers.append(alt.Chart(pd.DataFrame({"d_k": [marker_d_k]})).mark_rule(color="#333", strokeDash=[3, 3]).encode(x=x))
    layers.append(alt.Chart(marker).mark_point(size=160, filled=True, shape="diamond", stroke="black").encode(
        x=x, y=alt.Y(f"{measure}:Q", scale=yscale), color=color,
        tooltip=[alt.Tooltip("setting:N", title="current setting"), "d_k:Q", alt.Tooltip(f"{measure}:Q", format=".4g")]))
    return alt.layer(*layers).properties(title=title, height=230)
