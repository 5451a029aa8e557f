"""Every head's weight map in one grid with one caption (Playground, Multi-head).

Small maps are drawn as vector heatmaps without legends, in one row that wraps (as many to a line as the
width holds). Maps too large for vector marks would each become an image with its own caption, repeated for every head; instead each
head is mean-pooled (ui.draw.images.pool) to at most ``tile_px`` pixels a side and the tiles go into one image,
separated by grey lines, with one caption for the grid.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.draw.charts import MAX_VECTOR_CELLS, Scale, is_vector, show_heatmap, show_weights, weight_scale
from ui.draw.images import pool
from ui.text import fmt, head_name


def show_head_grid(
    weights,
    labels: list[str],
    allowed=None,
    per_row: int = 4,
    size: int = 170,
    max_cells: int = MAX_VECTOR_CELLS,
    tile_px: int = 128,
    scale: Scale | None = None,
) -> str:
    """Draw ``weights`` (H, T_q, T_k) on one colour scale (``scale``, default :func:`ui.draw.charts.weight_scale` of all
    the heads together), blank where the bool mask ``allowed`` (True = may attend) blocks; return a sentence about
    how the grid is drawn (for the page's caption)."""
    weights = np.asarray(weights)
    blank = None if allowed is None else ~np.asarray(allowed, dtype=bool)
    H, T_q, T_k = weights.shape
    if scale is None:
        scale = weight_scale(weights, allowed=[allowed])
    colours = f"dark purple = {scale.lo:.3g}, yellow = {scale.hi:.3g}, " + (
        "stretched by your choice and shared by every head" if scale.stretched else "the same scale for every head"
    )
    per_row = max(1, min(per_row, H))
    if is_vector((T_q, T_k), max_cells):
        # One wrapping row for every head (one block; st.columns sends 1 + per_row blocks a row, and the body
        # that draws the grid reruns at every change): the maps fill the width in reading order.
        row = st.container(horizontal=True, gap="small")
        for h in range(H):
            show_weights(
                weights[h],
                labels,
                title=head_name(h),
                allowed=allowed,
                scale=scale,
                group="heads",
                container=row,
                size=size,
                legend=False,
                max_cells=max_cells,
            )
        return f"One map per head ({colours}); hover a cell for its tokens and weight."
    tiles, factor = [], (1, 1)
    for h in range(H):
        m = weights[h].astype(np.float64)
        if blank is not None:
            m = np.where(np.asarray(blank, dtype=bool), np.nan, m)
        pooled, factor = pool(m, tile_px)
        tiles.append(pooled)
    th, tw = tiles[0].shape
    rows = -(-H // per_row)
    gutter = max(1, th // 32)
    grid = np.full((rows * th + (rows - 1) * gutter, per_row * tw + (per_row - 1) * gutter), np.nan)
    for h, tile in enumerate(tiles):
        r, c = divmod(h, per_row)
        grid[r * (th + gutter) : r * (th + gutter) + th, c * (tw + gutter) : c * (tw + gutter) + tw] = tile
    title = f"heads 1–{H}, {per_row} per row" if H > 1 else "head 1"
    show_heatmap(
        grid,
        [""] * grid.shape[0],
        [""] * grid.shape[1],
        title=title,
        domain=scale.domain,
        note=scale.note() if scale.stretched else "",
        group="heads",
        max_cells=0,
        max_px=max(grid.shape),
        blank=np.isnan(grid),
        blank_label="gutters between heads"
        + (" and masked cells" if blank is not None and np.asarray(blank).any() else ""),
        alt_text=describe_heads(weights, labels, scale),
    )
    pooled = f", each mean-pooled {factor[0]} x {factor[1]} to {th} x {tw} pixels" if factor != (1, 1) else ""
    masked = " and hatched grey cells are masked" if blank is not None and np.asarray(blank).any() else ""
    colours = f" Colours: {colours}."
    if H == 1:
        grey = "; hatched grey cells are masked" if masked else ""
        return f"The head's {T_q} x {T_k} map as an image{pooled.replace('each ', '')}{grey}.{colours}"
    return (
        f"Heads in reading order, left to right and top to bottom; each tile is one head's {T_q} x {T_k} map"
        f"{pooled}; grey lines separate the heads{masked}.{colours}"
    )


def describe_heads(weights, labels: list[str], scale: Scale) -> str:
    """The grid image's text alternative, from the weights drawn (H, T_q, T_k): how many maps of what size, which
    head is the sharpest (the mean over rows of each row's largest weight, as the pages' saturation figures, fully
    masked rows left out) and where the largest weight of all is."""
    w = np.asarray(weights, dtype=np.float64)
    H, T_q, T_k = w.shape
    row_max = w.max(axis=-1)  # (H, T_q)
    valid = w.sum(axis=-1) > 0.5  # (H, T_q) rows that may attend somewhere
    sharp = np.array([row_max[h][valid[h]].mean() if valid[h].any() else 0.0 for h in range(H)])
    h, i, j = np.unravel_index(int(np.argmax(w)), w.shape)
    what = f"{H} attention maps, one per head" if H > 1 else "head 1's attention map"
    sharpest = f"the sharpest is head {int(np.argmax(sharp)) + 1}, whose rows" if H > 1 else "its rows"
    return (
        f"{what}, {T_q} x {T_k} weights each (queries by keys), colour {fmt(scale.lo)} to {fmt(scale.hi)}; "
        f"{sharpest} put on average {fmt(float(sharp.max()))} of their weight on one key; the largest weight, "
        f"{fmt(float(w[h, i, j]))}, is {head_name(h)}'s from query {labels[i]!r} to key {labels[j]!r}."
    )
