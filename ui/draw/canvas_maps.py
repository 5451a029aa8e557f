"""Heatmaps drawn by the browser on a canvas (``heatmap.js``): one small element per map, its drawing sent once.

A Vega-Lite heatmap cost the browser a Vega view per map (parse, compile, a dataflow, one SVG path a cell): a page of
eleven maps took seconds to open on a slow laptop. Here a map is a canvas of cells with its labels, titles and legend
as text around it (the page's own font, read by axe-core like any text), a tooltip on hover, and a reading cell by
cell from the keyboard. What is drawn is decided here, in Python: the cells' texts (as every sentence writes a number,
:func:`ui.text.fmt`), the labels as drawn (shortened, a regular subset of long axes), the colour domain and the
legend's ticks; the browser only places them and colours each cell from its text on the server's colour tables
(``ui/draw/images.lut``, the live maps' and the image maps' too).

What travels: the module (``heatmap.js`` with the colour tables) as an element of its own whose bytes never change,
sent once per session and then as a reference; each map as its data and a stub of a few lines
(``heatmap_mount.js``) that hands it to the module.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.draw.images import lut
from ui.draw.vega import digest
from ui.server.cache import ByteLRU, register
from ui.text import fmt, fmt_arrow

HERE = Path(__file__).parent
CELL_SEP = " "  # between two cells' texts in a map's data (fmt never writes a space)
MAX_LABELLED = 40  # up to this many tokens every label is drawn while a cell is LABEL_PX or more; else a subset
LABEL_PX = 12  # px from one drawn label to the next, at least
LABEL_CHARS = 10  # longer labels are shortened on the axis (the tooltip has the whole label)
FONT_PX = 13  # a map's title and axis titles (in em of it); larger in the projector view


def lean(js: str) -> str:
    """A module as sent (the heatmaps', the live maps'): without its whole-line comments and blank lines (a live feed
    carries its module on every change, and sync.js was two thirds comments). Only lines that are nothing but a ``//``
    comment or a one-line ``/** ... */`` go: no string or template literal of these files spans lines."""
    out = []
    for line in js.splitlines():
        bare = line.strip()
        if not bare or bare.startswith("//") or (bare.startswith("/*") and bare.endswith("*/")):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


LUTS = {name: lut(name).tolist() for name in ("viridis", "diverging")}
CSS = (HERE / "heatmap.css").read_text(encoding="utf-8")
MODULE_JS = (
    f"const LUTS = {json.dumps(LUTS, separators=(',', ':'))};\n"
    f"const HM_CSS = {json.dumps(CSS)};\n"  # adopted by each map's shadow root: sent once, not with every map
    + lean((HERE / "heatmap.js").read_text(encoding="utf-8"))
    + "export default function () {}\n"
)
_MODULE = st.components.v2.component("attention_explorer.heatmap_module", js=MODULE_JS)
_MAP = st.components.v2.component(
    "attention_explorer.heatmap", js=lean((HERE / "heatmap_mount.js").read_text(encoding="utf-8"))
)
_CELLS = register(ByteLRU("ui.draw.canvas_maps.cells", 16 * 2**20))  # a map's cells as text, by its numbers


def short(label: str) -> str:
    """An axis label as drawn: at most LABEL_CHARS characters (the tooltip has the whole label)."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def label_every(n: int) -> int:
    """1 when all ``n`` labels are drawn, else the stride of the regular subset (about 20 labels)."""
    return 1 if n <= MAX_LABELLED else int(math.ceil(n / 20))


def stride(n: int, step: int) -> int:
    """Every how many cells of ``step`` px a label is drawn: every one up to MAX_LABELLED cells of LABEL_PX or
    more, else a regular subset (about 20 labels, and never closer than LABEL_PX)."""
    return max(label_every(n), math.ceil(LABEL_PX / max(step, 1)))


def ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 < 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def cell_px(n: int, size: int) -> int:
    """Pixels per cell: about ``size`` pixels in all (the page's column), 3 to 28 px a cell; a map whose cells are
    under LABEL_PX labels a subset (:func:`stride`)."""
    return int(max(3, min(28, size // max(n, 1))))


def axis(labels, title: str, step: int) -> tuple[list[str], str, int]:
    """An axis as drawn: its labels (shortened; "" where a regular subset skips one), its title (saying so) and its
    labels' font px (11 at the least; 15 where a drawn label has 20 px or more)."""
    n = len(labels)
    k = stride(n, step)
    shown = [short(str(t)) if i % k == 0 else "" for i, t in enumerate(labels)]
    if k > 1:
        title = f"{title} (every {ordinal(k)} of {n} labelled)"
    return shown, title, 11 if step * k < 20 else 15


def colour_digits(m: np.ndarray, domain: tuple[float, float]) -> int:
    """Significant digits a map's colour needs: enough that a value's text is within half of one 256th of the colour
    domain of it (3, the text's own, on the pages' usual scales: 0-1 weights, scores and outputs on their range;
    more on a stretched one, where a near-uniform row's weights differ in the fourth digit)."""
    lo, hi = float(domain[0]), float(domain[1])
    vals = np.abs(np.asarray(m, dtype=np.float64))
    vals = vals[np.isfinite(vals)]
    if not vals.size or not hi > lo or vals.max() == 0:
        return 3
    k = math.floor(math.log10(vals.max())) + 1 + math.ceil(math.log10(256 / (hi - lo)))
    return min(max(k, 3), 12)


def cell_texts(m: np.ndarray, blank=None, digits: int = 3) -> str:
    """Every cell's text (as sentences and tables write it, ui.text.fmt, with ``digits``) in row-major order, joined
    by spaces, "" for a blank cell; cached by a digest of the numbers and the blank cells (a rerun that draws the
    same map again writes nothing)."""
    blank = None if blank is None else np.asarray(blank, dtype=bool)
    key = (digest(m, blank), digits)

    def write() -> str:
        values = fmt_arrow(m, digits)
        if blank is not None:
            values = pc.if_else(pa.array(~blank.ravel()), values, "")
        return CELL_SEP.join(values.to_pylist())

    return _CELLS.get_or_compute(key, write)


def read_cells(data: dict) -> tuple[list[str | None], np.ndarray]:
    """The cells of a map's data as the browser reads them (``hmCells``): each cell's text (None for a blank one) and
    the number its colour is read from (NaN for a blank one, or a text that is no number)."""
    texts = data["cells"].split(CELL_SEP)
    colour = data["colour"].split(CELL_SEP) if "colour" in data else texts
    with np.errstate(invalid="ignore"):
        values = np.array([float(t) if t else np.nan for t in colour], dtype=np.float64)
    values[~np.isfinite(values)] = np.nan
    return [t or None for t in texts], values


def scale_position(v: float, lo: float, hi: float, diverging: bool) -> float:
    """Where ``v`` falls on the colour scale, 0..1, as heatmap.js's ``hmPosition`` places it: linear from lo to hi;
    on a diverging scale that spans 0, each side of 0 on its own half (white at 0)."""
    if diverging and lo < 0 < hi:
        t = 0.5 * (v - lo) / -lo if v <= 0 else 0.5 + 0.5 * v / hi
    else:
        t = (v - lo) / ((hi - lo) or 1)
    return min(1.0, max(0.0, t))


def legend_ticks(lo: float, hi: float, diverging: bool) -> list[list]:
    """The legend's ticks: [position 0..1 on the ramp, the number as the page writes it] at both ends and between
    them (0 on a diverging scale that spans 0)."""
    mid = 0.0 if diverging and lo < 0 < hi else (lo + hi) / 2
    return [[round(scale_position(v, lo, hi, diverging), 4), fmt(v)] for v in (lo, mid, hi)]


def heatmap_data(
    m,
    rows,
    cols,
    *,
    title: str,
    row_name: str,
    col_name: str,
    value: str,
    domain: tuple[float, float],
    scheme: str,
    size: int,
    legend: bool,
    note: str,
    blank,
    description: str,
    group: str,
    font: int = FONT_PX,
) -> dict:
    """What one map's element carries (the fields heatmap.js reads; see its header)."""
    m = np.asarray(m)
    n_r, n_c = m.shape
    cw, ch = cell_px(n_c, size), cell_px(n_r, size)
    lo, hi = float(domain[0]), float(domain[1])
    row_shown, row_title, row_font = axis(rows, row_name, ch)
    col_shown, col_title, col_font = axis(cols, col_name, cw)
    digits = colour_digits(m if blank is None else np.where(blank, np.nan, m), domain)
    data = {
        "title": title,
        "rows": [str(t) for t in rows],
        "cols": [str(t) for t in cols],
        "rowShown": row_shown,
        "colShown": col_shown,
        "rowName": row_name,
        "colName": col_name,
        "rowTitle": row_title,
        "colTitle": f"{col_title} · {note}" if note else col_title,
        "value": value,
        "cells": cell_texts(m, blank),
        "lo": lo,
        "hi": hi,
        "scheme": "viridis" if scheme == "viridis" else "diverging",
        "cw": cw,
        "ch": ch,
        "rowFont": row_font,
        "colFont": col_font,
        "legend": legend_ticks(lo, hi, scheme != "viridis") if legend else None,
        "description": description,
        "group": group,
        "font": font,
    }
    if digits > 3:  # the colour needs more digits than the text shows (a stretched scale)
        data["colour"] = cell_texts(m, blank, digits)
    return data


def _free_key(ctx, stem: str) -> str:
    """``stem`` numbered by how many maps this run has drawn before (their keys stay the same from run to run)."""
    n = 0
    while f"{stem}{n}" in ctx.shared.widget_user_keys_this_run:
        n += 1
    return f"{stem}{n}"


def draw(box, data: dict, key: str | None = None) -> None:
    """Draw one map in ``box`` (None: the page itself); the module first, once a run. A body-only rerun (a fragment)
    draws its own, under keys of its own: the full run's elements outside the body stay as they are."""
    ctx = get_script_run_ctx()
    place = contextlib.nullcontext() if box is None or box is st else box
    stem = "ae_hm_body_" if ctx is not None and ctx.fragment_ids_this_run else "ae_hm_"
    with place:
        if ctx is not None and stem + "module" not in ctx.shared.widget_user_keys_this_run:
            _MODULE(key=stem + "module", height=0)
        if key is None and ctx is not None:
            key = _free_key(ctx, stem)
        _MAP(key=key, data=json.dumps(data, separators=(",", ":"), ensure_ascii=False), height="content")
