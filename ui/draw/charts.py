"""Chart builders: heatmaps (drawn by the browser on a canvas, ui/draw/canvas_maps.py), bars, and images for big maps.

Above ``MAX_VECTOR_CELLS`` cells a heatmap is drawn as a PNG (mean-pooled to at most ``max_px``
pixels a side) instead of cell by cell: tooltips go, speed and payload stay small.
Token labels always travel as data (a map's JSON, a bar chart's JSON array in a Vega expression), never as HTML;
a bar chart's labels that count ("1".."64", "t1".."t8") as an expression of the position.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from ui.draw import canvas_maps
from ui.draw.images import heatmap_png
from ui.draw.vega import arrow_rows, digest, with_arrow
from ui.server.cache import ByteLRU, cached, register
from ui.session.state import STRETCH_KEY, kept_value
from ui.text import fmt_arrow

MAX_VECTOR_CELLS = 4096  # 64 x 64
MAX_VECTOR_SIDE = 64  # a longer side draws at 3 px a cell or more, wider than a page column: an image instead


PROJECTOR_SCALE = 1.5  # in the projector view maps are this much larger (and their labels up to 15 px)


def projector() -> bool:
    """Whether the session's link asks for the projector view (view=projector)."""
    from ui.session.links import link_options

    return link_options().projector


def projector_scale() -> float:
    """How much larger the session's maps and diagrams are drawn: PROJECTOR_SCALE in the projector view, else 1."""
    return PROJECTOR_SCALE if projector() else 1.0


def _numbered(labels: list[str]) -> tuple[str, int] | None:
    """(prefix, first) when ``labels`` are ``prefix`` followed by the numbers ``first``, ``first`` + 1, ... in
    order ("1".."64" of dim_labels, "0".."n-1" of positions, "t1".."t8" of random tokens), written as Python and
    the browser write whole numbers (no sign, no leading zero), else None."""
    if not labels:
        return None
    digits = re.search(r"[0-9]+$", labels[0])
    if digits is None:
        return None
    prefix, first = labels[0][: digits.start()], int(digits.group())
    if first + len(labels) > 10**15:  # the browser's numbers are exact integers (and written so) only below this
        return None
    return (prefix, first) if labels == [f"{prefix}{first + j}" for j in range(len(labels))] else None


def _label_expr(labels, index: str) -> str:
    """The Vega expression of the label at position ``index`` (an expression) of ``labels``. Labels that count
    (:func:`_numbered`) are written from the index, a prefix joined to a number; others are a JSON array (data,
    never HTML) indexed by position."""
    labels = [str(t) for t in labels]
    numbered = _numbered(labels)
    if numbered is not None:
        prefix, first = numbered
        return f"{json.dumps(prefix)} + ({index} + {first})" if first else f"{json.dumps(prefix)} + {index}"
    return f"{json.dumps(labels)}[{index}]"


def _axis(
    labels: list[str],
    title: str,
    angle: int = -45,
    step: int = 12,
    every: int | None = None,
) -> alt.Axis:
    """A bar chart's axis, labelled as a map's (:func:`canvas_maps.axis`): every label up to MAX_LABELLED while a
    slot is LABEL_PX or more (font sized to the space a label has, never dropped for overlap), else every k-th
    (``every`` sets k), and the axis title says so."""
    n, k = len(labels), every or canvas_maps.stride(len(labels), step)
    label = _label_expr([canvas_maps.short(str(t)) for t in labels], "datum.value")
    expr = label if k == 1 else f"datum.value % {k} == 0 ? {label} : ''"
    step *= k  # the space one drawn label has
    if k > 1:
        title = f"{title} (every {canvas_maps.ordinal(k)} of {n} labelled)"
    return alt.Axis(
        title=title,
        labelExpr=expr,
        labelAngle=angle,
        labelOverlap=False,
        labelFlush=False,  # Streamlit's theme pushes the end labels inward, onto their neighbours' cells
        labelLimit=80,
        labelFontSize=11 if step < 20 else 15,  # 11 px at the least: a subset's labels are k cells apart
        labelPadding=2,
    )


class Axes(NamedTuple):
    """What a heatmap's rows, columns and colour stand for: the y and x axis titles (also the tooltip's label
    fields) and the name of the value (legend and tooltip)."""

    rows: str = "query"
    cols: str = "key"
    value: str = "weight"


WEIGHT_AXES = Axes()  # query x key -> weight: an attention map
MASK_AXES = Axes(value="allowed")  # query x key -> may attend (1) or not (0)


_PNGS = register(ByteLRU("ui.draw.charts.pngs", 32 * 2**20))  # encoded image heatmaps, by content digest


def _png(m: np.ndarray, lo: float, hi: float, lut: str, max_px: int) -> tuple[bytes, tuple[int, int]]:
    """heatmap_png, cached by a digest of the numbers and the colour range (the encoder runs once per map)."""
    key = (digest(m), lo, hi, lut, max_px)
    return _PNGS.get_or_compute(key, lambda: heatmap_png(m, lo, hi, lut, max_px=max_px))


class Scale(NamedTuple):
    """One colour scale (or bar axis) shared by every map or bar chart a reader compares: the maps drawn side by
    side, one grid of heads, A and B, a scaled/unscaled twin. ``stretched`` says the reader chose to fit it to the
    group's weights (the sidebar's toggle); otherwise it is the absolute 0-1 scale of attention weights."""

    lo: float = 0.0
    hi: float = 1.0
    stretched: bool = False
    group: str = ""  # the maps drawn on it (a chart's usermeta: the tests check that a group shares its scale)

    @property
    def domain(self) -> tuple[float, float]:
        return (self.lo, self.hi)

    def note(self, kind: str = "colour") -> str:
        """What a chart says about its ``kind`` of scale (colour, axis) under its key axis or in its title."""
        if self.stretched:
            return f"{kind} stretched to {self.lo:.3g}–{self.hi:.3g}"
        return f"{kind} {self.lo:.3g}–{self.hi:.3g}"


ABSOLUTE = Scale()  # attention weights: 0 (dark purple) to 1 (yellow), the default wherever weights are compared


def stretching() -> bool:
    """Whether the reader chose to stretch the colours of weight maps (the sidebar's toggle; off by default)."""
    return bool(kept_value(STRETCH_KEY, False))


def weight_scale(*maps, allowed=None, group: str = "") -> Scale:
    """The one scale of a group of weight maps (or weight rows) drawn together.

    The absolute 0-1 scale, unless the reader switched stretching on: then the 1st-99th percentile of all the
    group's values together (their minimum and maximum below 100 values), so every map of the group is stretched
    by the same amount and a sharper map still looks sharper. ``allowed`` (one bool mask per map, True = may
    attend, broadcastable to the map, or None) leaves masked cells out. ``group`` names the maps drawn on it."""
    if not stretching():
        return ABSOLUTE._replace(group=group)
    allowed = allowed if allowed is not None else [None] * len(maps)
    parts = []
    for m, ok in zip(maps, allowed):
        m = np.asarray(m, dtype=np.float64)
        parts.append(m[np.broadcast_to(np.asarray(ok, dtype=bool), m.shape)] if ok is not None else m.ravel())
    vals = np.concatenate(parts) if parts else np.zeros(0)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return ABSOLUTE._replace(group=group)
    lo, hi = (float(x) for x in np.quantile(vals, [0.01, 0.99])) if vals.size >= 100 else (vals.min(), vals.max())
    if hi - lo < 1e-6:
        return ABSOLUTE._replace(group=group)
    return Scale(float(lo), float(hi), True, group)


def shared_domain(*arrays, symmetric: bool = False) -> tuple[float, float]:
    """One domain for quantities a reader compares that have no absolute scale (logits, outputs): their joint
    range, from 0 when all are positive, symmetric about 0 when ``symmetric`` (see :func:`own_domain`)."""
    return own_domain(np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays]), diverging=symmetric)


def own_domain(m, blank=None, diverging: bool = False) -> tuple[float, float]:
    """The colour domain of a map drawn on its own range, by the colour rule: symmetric about 0 on a diverging
    scale (signed quantities), from 0 to the largest value on a sequential one (non-negative quantities; a
    sequential map with negative values starts at its smallest). ``blank`` cells are left out."""
    m = np.asarray(m, dtype=np.float64)
    vals = m[~np.asarray(blank, dtype=bool)] if blank is not None else m.ravel()
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return (-1.0, 1.0) if diverging else (0.0, 1.0)
    if diverging:
        lim = float(np.abs(vals).max()) or 1.0
        return (-lim, lim)
    lo, hi = min(0.0, float(vals.min())), max(0.0, float(vals.max()))
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def is_vector(shape: tuple[int, int], max_cells: int = MAX_VECTOR_CELLS) -> bool:
    """Whether :func:`show_heatmap` draws a map of ``shape`` as vector cells (True) or as an image (False)."""
    return shape[0] * shape[1] <= max_cells and max(shape) <= MAX_VECTOR_SIDE


def show_heatmap(
    m,
    row_labels,
    col_labels,
    *,
    title: str = "",
    axes: Axes = WEIGHT_AXES,
    size: int = 260,
    scheme: str = "viridis",
    domain: tuple[float, float] | None = None,
    note: str = "",
    legend: bool = True,
    blank=None,
    blank_label: str = "masked",
    group: str = "",
    key: str | None = None,
    container=None,
    max_px: int = 256,
    max_cells: int = MAX_VECTOR_CELLS,
    alt_text: str | None = None,
) -> str:
    """Draw ``m`` as an Altair heatmap about ``size`` px a side, or as an image (at most ``max_px`` a side) above
    ``max_cells`` cells or ``MAX_VECTOR_SIDE`` rows or columns; returns "vector" or "image". ``scheme`` is
    "viridis", else red-blue centred on 0; ``domain`` fixes the colour range (else the data's): maps a reader
    compares are given one domain (:func:`weight_scale`, :func:`shared_domain`), never one each.

    A heatmap without a legend states its colour range under its key axis; ``note`` (a stretched scale's
    :meth:`Scale.note`) replaces that statement and is written under the axis even with a legend. ``blank`` cells
    (a bool array) are left out (grey in an image, which its caption names ``blank_label``). ``group`` names the
    maps drawn together on one scale (the map's data's ``group``; the tests check that a group shares its domain).
    The map's text alternative (its canvas's ``aria-label``, or an image's ``alt``) says what it shows, from the
    numbers drawn (:func:`describe_map`, or ``alt_text``)."""
    box = container or st
    m = np.asarray(m)
    if domain is None:  # a map on its own range says so in its title
        domain = own_domain(m, blank, diverging=scheme != "viridis")
        title = f"{title} (own range)" if title else "own range"
    if projector():  # the class reads the maps from the back of the room
        size, max_px = int(size * PROJECTOR_SCALE), int(max_px * PROJECTOR_SCALE)
    if is_vector(m.shape, max_cells):
        rows, cols = tuple(map(str, row_labels)), tuple(map(str, col_labels))
        if not note and not legend:  # a map without a legend states its colour range under its key axis
            note = f"colour {domain[0]:.3g}–{domain[1]:.3g}"
        data = canvas_maps.heatmap_data(
            m,
            rows,
            cols,
            title=title,
            row_name=axes.rows,
            col_name=axes.cols,
            value=axes.value,
            domain=domain,
            scheme=scheme,
            size=size,
            legend=legend,
            note=note,
            blank=blank,
            description=alt_text or describe_map(m, rows, cols, title, axes, blank),
            group=group or title,
            font=round(canvas_maps.FONT_PX * projector_scale()),
        )
        canvas_maps.draw(box, data, key=key)
        return "vector"
    image = heatmap_image(m, row_labels, col_labels, title, axes, scheme, domain, note, blank, blank_label, max_px)
    box.image(image.png, output_format="PNG", caption=image.caption, alt=alt_text or image.alt)
    return "image"


class MapImage(NamedTuple):
    """A heatmap drawn as an image: the PNG, its caption and its text alternative."""

    png: bytes
    caption: str
    alt: str


def heatmap_image(
    m,
    row_labels,
    col_labels,
    title: str,
    axes: Axes,
    scheme: str,
    domain,
    note="",
    blank=None,
    blank_label="masked",
    max_px: int = 256,
    ident=None,
) -> MapImage:
    """The image :func:`show_heatmap` draws for ``m`` above its vector sizes, with its caption and text alternative
    (those of the numbers before pooling, masked cells left out), cached by a digest of the numbers and
    everything the words say: a rerun that draws the same map (the side a release left alone) encodes and
    describes nothing. ``ident``: what the numbers are made from, when the caller knows it (a setting: the same
    ident, the same numbers), in place of the digest of a map that is large to read."""
    rows, cols = tuple(row_labels), tuple(col_labels)  # a tuple is taken as it is (a thousand dims' labels)
    lo, hi = float(domain[0]), float(domain[1])
    blank = None if blank is None else np.asarray(blank, dtype=bool)
    made = ("from", ident) if ident is not None else digest(m, blank)
    key = ("image", made, rows, cols, title, axes, scheme, lo, hi, note, blank_label, max_px)

    def draw() -> MapImage:
        rows_, cols_ = tuple(map(str, rows)), tuple(map(str, cols))
        shown = np.asarray(m) if blank is None else np.where(blank, np.nan, np.asarray(m, dtype=np.float64))
        png, f = _png(shown, lo, hi, "viridis" if scheme == "viridis" else "diverging", max_px)
        pooled = f", mean-pooled {f[0]}x{f[1]} to fit" if f != (1, 1) else ""
        grey = f"; hatched grey = {blank_label}" if blank is not None and blank.any() else ""
        how = note or f"{axes.value}: colour {lo:.3g} to {hi:.3g}"
        caption = f"{title} ({shown.shape[0]} x {shown.shape[1]} as an image{pooled}; {how}{grey})"
        return MapImage(png, caption, describe_map(shown, rows_, cols_, title, axes))

    return _PNGS.get_or_compute(key, draw)


def show_images(box, images: list[MapImage]) -> None:
    """Heatmap images side by side (wrapping on a narrow screen), each with its caption and text alternative: one
    element where one each sent an element and a block. Each is drawn at the widest one's own pixel width (a
    PNG's width is in its header): at the width of its caption, the first three took a row each at 1280 px."""
    width = max(int.from_bytes(i.png[16:20], "big") for i in images)
    box.image(
        [i.png for i in images],
        output_format="PNG",
        caption=[i.caption for i in images],
        alt=[i.alt for i in images],
        width=width,
    )


def describe_map(m, rows, cols, title: str, axes: Axes, blank=None) -> str:
    """A map's text alternative, from its numbers: what it is, its size, and where its largest value is."""
    m = np.asarray(m, dtype=np.float64)
    shown = np.where(np.asarray(blank, dtype=bool), np.nan, m) if blank is not None else m
    what = f"{title}: " if title else ""
    if not np.isfinite(shown).any():
        return f"{what}{m.shape[0]} x {m.shape[1]} map of {axes.value}, every cell blank."
    i, j = np.unravel_index(int(np.nanargmax(shown)), shown.shape)
    hidden = int(np.isnan(shown).sum())  # masked cells (blank in a chart, hatched grey in an image)
    masked = f"; {hidden} of {shown.size} cells masked" if hidden else ""
    return (
        f"{what}{m.shape[0]} x {m.shape[1]} map of {axes.value} ({axes.rows} by {axes.cols}); the largest, "
        f"{shown[i, j]:.3g}, at {axes.rows} {rows[i]!r} and {axes.cols} {cols[j]!r}; the smallest "
        f"{float(np.nanmin(shown)):.3g}{masked}."
    )


_DIMS = tuple(str(j + 1) for j in range(4096))  # made once: a rerun asks for a thousand of them


def dim_labels(n: int) -> tuple[str, ...]:
    """The column labels of a map of ``n`` dimensions: "1" to "n" (as the pages' prose counts columns)."""
    return _DIMS[:n] if n <= len(_DIMS) else tuple(str(j + 1) for j in range(n))


def _token_map(m, tokens) -> np.ndarray:
    """``m`` as token vectors (T, d) with T = len(tokens), or a ValueError that says what it needs."""
    m = np.asarray(m)
    if m.ndim != 2 or m.shape[0] != len(tokens):
        raise ValueError(f"m has shape {m.shape}; a token map needs (T, d) with T = len(tokens) = {len(tokens)}")
    return m


def show_token_dims(m, tokens, *, title: str, value_name: str = "z", **kw) -> str:
    """Draw token vectors ``m`` (T, d): one row per token, dimensions 1..d as columns, blue (negative) to red
    (positive). Other keyword arguments (container, size, domain, legend, max_px, max_cells) go to
    :func:`show_heatmap`; returns "vector" or "image"."""
    m = _token_map(m, tokens)
    labels = dim_labels(m.shape[1])
    fixed = sorted({"axes", "scheme"} & set(kw))
    if fixed:
        raise TypeError(f"show_token_dims() sets {fixed} itself (token x dim, diverging); got them as arguments")
    kw.update(title=title, axes=Axes("token", "dim", value_name), scheme="diverging")
    return show_heatmap(m, tokens, labels, **kw)


def token_dims_image(
    m, tokens, *, title: str, domain, value_name: str = "z", max_px: int = 256, ident=None
) -> MapImage:
    """The image :func:`show_token_dims` draws for token vectors ``m`` above its vector sizes (for
    :func:`show_images`; ``ident`` as :func:`heatmap_image` takes it)."""
    m = _token_map(m, tokens)
    if projector():
        max_px = int(max_px * PROJECTOR_SCALE)
    axes = Axes("token", "dim", value_name)
    return heatmap_image(
        m, tokens, dim_labels(m.shape[1]), title, axes, "diverging", domain, max_px=max_px, ident=ident
    )


def show_weights(w, rows, cols=None, *, title: str = "", allowed=None, scale: Scale | None = None, **kw) -> str:
    """Draw attention weights ``w`` (T_q, T_k) on ``scale``: the one :func:`weight_scale` of the maps drawn
    together (default: this map's own, which is the absolute 0..1 scale unless the reader stretches), query
    labels ``rows``, key labels ``cols`` (default: ``rows``). Cells that the bool mask ``allowed`` (True = may
    attend) blocks are blank. Other keyword arguments go to :func:`show_heatmap`; returns "vector" or "image"."""
    blank = None if allowed is None else ~np.asarray(allowed, dtype=bool)
    if scale is None:
        scale = weight_scale(w, allowed=[allowed])
    note = scale.note() if scale.stretched else ""
    kw.setdefault("group", scale.group)
    return show_heatmap(
        w, rows, rows if cols is None else cols, title=title, domain=scale.domain, note=note, blank=blank, **kw
    )


def show_mask(allowed, rows, cols=None, *, title: str, axes: Axes = MASK_AXES, legend: bool = False, **kw) -> str:
    """Draw a bool mask (True = may attend) as a 0/1 map, yellow where a query may attend; without a legend unless
    ``legend=True`` (its key axis states the colour range). Other keyword arguments go to :func:`show_heatmap`."""
    m = np.asarray(allowed, dtype=np.float64)
    return show_heatmap(
        m, rows, rows if cols is None else cols, title=title, axes=axes, domain=(0, 1), legend=legend, **kw
    )


@cached(max_mb=4)
def _bar_skeleton(labels: tuple, value_name: str, has_domain: bool, axis_name: str = "key", every: int = 0) -> str:
    """The Vega-Lite spec of a bar chart without its data, title and y domain, built (and validated) by Altair
    once per labels: the title names the head, the query and a stretched axis's range, which change at every
    setting, and Altair's validation costs about 5 ms."""
    empty = pd.DataFrame({"i": [0], "token": [""], "v": [0.0], "text": [""], "top": [False]})
    y = alt.Y("v:Q", title=value_name, scale=alt.Scale(domain=[0.0, 1.0]) if has_domain else alt.Undefined)
    spec = (
        alt.Chart(empty)
        .mark_bar()
        .encode(
            x=alt.X("i:O", axis=_axis(list(labels), axis_name, every=every or None)),
            y=y,
            color=alt.Color("top:N", legend=None, scale=alt.Scale(domain=[False, True], range=["#8aa1c1", "#e45756"])),
            # the value as ui.text.fmt writes it in the page's sentences and tables (not a Vega number format)
            tooltip=[alt.Tooltip("token:N", title=axis_name), alt.Tooltip("text:N", title=value_name)],
        )
        .properties(height=220)
        .to_dict()
    )
    spec.pop("datasets", None)
    return json.dumps(spec)


def weight_axis(*rows) -> Scale:
    """The one value axis of bar charts of weights a reader compares: 0 to 1, or, when the reader chose to
    stretch, 0 to the largest weight of them all (bars keep their zero, so their lengths still compare)."""
    if not stretching():
        return ABSOLUTE
    vals = np.concatenate([np.asarray(r, dtype=np.float64).ravel() for r in rows])
    vals = vals[np.isfinite(vals)]
    hi = float(vals.max()) if vals.size else 0.0
    return Scale(0.0, hi, True) if 0 < hi < 1 else ABSOLUTE


CANVAS_BARS = 64  # a bar chart of more bars is painted on a canvas (Vega's renderer), not as SVG elements
AXIS_TEXT = "#555867"  # Streamlit's gray80 (7.0:1 on white), as ui/skeleton/a11y.css gives SVG axis text


def bar_chart(
    values,
    labels: list[str],
    *,
    title: str = "",
    value_name: str = "weight",
    highlight: int | None = None,
    domain: tuple[float, float] | None = None,
    note: str = "",
    group: str = "",
    axis_name: str = "key",
    every: int = 0,
) -> dict:
    """A Vega-Lite spec (for st.vega_lite_chart) of bars in token order with the token and its value as tooltip
    (the value written by ui.text.fmt, as the sentences and tables write it);
    ``highlight`` colours one bar (default: the largest). ``domain`` fixes the value axis (bar charts a reader
    compares get one, from :func:`weight_axis` or :func:`shared_domain`); ``note`` (a stretched axis's) is added
    to the title. ``axis_name`` names the bars' axis (and the tooltip's label), ``every`` labels every k-th bar
    (0: every bar up to MAX_LABELLED). The layout is built by Altair once per labels."""
    values = np.asarray(values, dtype=np.float64)
    if note:
        title = f"{title} ({note})"
    names = tuple(map(str, labels))
    top = int(np.argmax(values)) if highlight is None else int(highlight)

    def rows() -> pa.Table:  # straight to Arrow: no DataFrame on a new setting
        i = np.arange(len(values))
        return pa.table(
            {"i": i, "token": list(names), "v": np.round(values, 4), "text": fmt_arrow(values), "top": i == top}
        )

    arrow = arrow_rows(("bars", digest(values), names, top), rows)  # a rerun of the same row: no pandas
    spec = json.loads(_bar_skeleton(names, value_name, domain is not None, axis_name, every))
    if title:
        spec["title"] = title
    if domain is not None:
        spec["encoding"]["y"]["scale"]["domain"] = [float(domain[0]), float(domain[1])]
    spec["usermeta"] = {"group": group or title, "value": value_name}
    if len(values) > CANVAS_BARS:  # one SVG element a bar redraws slowly; a canvas has no CSS, so its colours here
        spec["usermeta"]["embedOptions"] = {"renderer": "canvas"}
        axis = spec.setdefault("config", {}).setdefault("axis", {})
        axis |= {"labelColor": AXIS_TEXT, "titleColor": AXIS_TEXT}
    big = int(np.argmax(values)) if len(values) else 0
    spec["description"] = (
        f"{title or 'bar chart'}: {len(values)} bars of {value_name}; the largest, {values[big]:.3g}, on {names[big]!r}."
        if len(values)
        else f"{title or 'bar chart'}: no bars."
    )
    return with_arrow(spec, arrow)
