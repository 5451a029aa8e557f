"""Block diagrams drawn as SVG by the server, shown as an image (``st.image`` takes SVG text) with their flow in words
as the alternative text.

The Transformer block's encoder diagram was an ``st.graphviz_chart``: the browser then loads Graphviz compiled to
WebAssembly (0.8 MB) and lays the graph out itself: about 0.75 s of that page's opening from the sidebar with
Chromium's CPU throttled 4x (one run, medians of 3; docs/BENCHMARKS.md). Its layout is a column of boxes with
residual edges beside it: simple enough to place here. Imports only the standard library.
"""

from __future__ import annotations

import re
from html import escape
from typing import NamedTuple

FONT_PX = 13  # a box's label; the edges' "residual" is LABEL_PX. Drawn at the image's own size (a11y.css): never
LABEL_PX = 12  # under 11 px on a screen (tests/device_util.SMALL_CHART_TEXT)
CHAR_PX = 0.62  # a label's width per character, in font sizes: sans-serif's average over these labels (a measured
# "ReLU(xW₁+b₁)W₂+b₂" runs 135 px at 13 px, 137 by this estimate); the boxes have PAD_X to spare on each side
LINE_PX = 17  # a label line's height
PAD_X, PAD_Y = 12, 6  # inside a box
GAP = 24  # between two boxes of the column (an arrow)
LANE = 34  # between the boxes and a residual edge, and between two edges whose heights overlap or that meet at a box
OUT_AT, IN_AT = 0.7, 0.3  # where on a box's side a residual edge leaves it and arrives (fractions of its height):
# an edge arriving at a box another one leaves is never drawn over it
MARGIN = 4
INK, BOX, DASH = "#0e1117", "#f3f5f9", "#4a4f5c"  # the theme's text, its secondary background; 8.2:1 on white
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # no XML 1.0 document holds them


class Diagram(NamedTuple):
    """A diagram's SVG text and the width it is drawn at, in CSS px (``st.image``'s ``width``: the image keeps it;
    a11y.css lets it pass the column's width rather than shrink its labels)."""

    svg: str
    width: int


def _text_width(line: str, px: int) -> float:
    return len(line) * px * CHAR_PX


def _text(line: str) -> str:
    """A label line as SVG text: escaped, a tab or a line break as a space (XML reads a lone carriage return as a
    line feed), and a character no XML document may hold shown as U+FFFD."""
    return escape(_NOT_XML.sub("\ufffd", re.sub("[\t\n\r]", " ", line)))


def flow_column_svg(flow: list[tuple[str, str]], residual: set[tuple[str, str]], scale: float = 1.0) -> Diagram:
    """A top-to-bottom column of boxes, one per node in the order ``flow`` first meets it, an arrow between
    neighbours, and each edge in ``residual`` (it skips boxes) as a dashed line on the right labelled "residual".
    A node's "\\n" breaks its label. Every edge that is not residual must join neighbours of the column, and a box
    has at most one residual edge out and one in (a transformer block's residual connections). Residual edges
    whose heights overlap, or that meet at a box, run in lanes of their own, and a label is written right of every
    lane that passes its height. ``scale`` enlarges the whole picture (the projector view draws its maps and
    diagrams 1.5 times as large)."""
    nodes: list[str] = []
    for a, b in flow:
        for n in (a, b):
            if n not in nodes:
                nodes.append(n)
    if not nodes:
        raise ValueError("a diagram needs at least one edge")
    at = {n: i for i, n in enumerate(nodes)}
    for k in (0, 1):  # one attachment point a side of a box for edges out, one for edges in
        ends = [e[k] for e in residual]
        if len(set(ends)) < len(ends):
            raise ValueError(f"more than one residual edge {('from', 'into')[k]} one box: this layout draws one")
    for a, b in flow:
        if a == b:
            raise ValueError(f"{a} -> {b} joins a box to itself")
        if (a, b) not in residual and at[b] != at[a] + 1:
            raise ValueError(f"{a} -> {b} is not residual and does not join neighbours of the column")
    lines = {n: n.split("\\n") for n in nodes}
    box_w = round(max(_text_width(line, FONT_PX) for n in nodes for line in lines[n]) + 2 * PAD_X)
    tops, y = {}, MARGIN
    for n in nodes:
        tops[n] = y
        y += len(lines[n]) * LINE_PX + 2 * PAD_Y + GAP
    height = y - GAP + MARGIN
    bottom = {n: tops[n] + len(lines[n]) * LINE_PX + 2 * PAD_Y for n in nodes}
    left, right = MARGIN, MARGIN + box_w
    mid_x = left + box_w / 2

    def side(n: str, where: float) -> float:
        return tops[n] + (bottom[n] - tops[n]) * where

    # residual edges: (from y, to y), a lane each (the lowest free one over its heights), a label beside it
    edges = [(a, b) for a, b in flow if (a, b) in residual]
    span = {e: (side(e[0], OUT_AT), side(e[1], IN_AT)) for e in edges}
    reach = {e: (min(span[e]), max(span[e])) for e in edges}  # the heights its vertical runs over
    lane: dict[tuple[str, str], int] = {}
    for e in edges:
        lo, hi = reach[e]
        taken = {lane[o] for o in lane if (reach[o][0] <= hi and lo <= reach[o][1]) or set(o) & set(e)}
        lane[e] = next(k for k in range(1, len(edges) + 2) if k not in taken)
    lane_x = {e: right + lane[e] * LANE - LANE / 2 for e in edges}
    label_at = {}
    for e in edges:
        label_y = sum(span[e]) / 2 + 4
        # lanes whose edge runs at the label's height (its vertical, or a horizontal into a box)
        passing = [lane_x[o] for o in edges if reach[o][0] <= label_y + 4 and reach[o][1] >= label_y - LABEL_PX - 1]
        label_at[e] = (max([lane_x[e], *passing]) + 4, label_y)
    label_w = _text_width("residual", LABEL_PX)
    width = max([right + MARGIN] + [x + label_w + MARGIN for x, _ in label_at.values()])
    drawn = round(width * scale)  # CSS px
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawn}" height="{round(height * scale)}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">',
        "<defs>"
        f'<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker>'
        f'<marker id="arrow-dashed" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{DASH}"/></marker>'
        "</defs>",
    ]
    for n in nodes:
        h = bottom[n] - tops[n]
        out.append(f'<rect x="{left}" y="{tops[n]}" width="{box_w}" height="{h}" rx="7" fill="{BOX}" stroke="{INK}"/>')
        for k, line in enumerate(lines[n]):
            base = tops[n] + PAD_Y + (k + 1) * LINE_PX - 4
            out.append(
                f'<text x="{mid_x:.1f}" y="{base}" font-size="{FONT_PX}" text-anchor="middle" fill="{INK}">'
                f"{_text(line)}</text>"
            )
    for a, b in flow:
        if (a, b) in residual:
            (y0, y1), x = span[(a, b)], lane_x[(a, b)]
            out.append(
                f'<path d="M{right},{y0:.1f} H{x:.1f} V{y1:.1f} H{right + 1}" fill="none" stroke="{DASH}" '
                f'stroke-width="1.3" stroke-dasharray="5 3" marker-end="url(#arrow-dashed)"/>'
            )
            lx, ly = label_at[(a, b)]
            out.append(f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="{LABEL_PX}" fill="{DASH}">residual</text>')
        else:
            out.append(
                f'<path d="M{mid_x:.1f},{bottom[a]} V{tops[b] - 1}" stroke="{INK}" stroke-width="1.3" '
                f'marker-end="url(#arrow)"/>'
            )
    out.append("</svg>")
    return Diagram("".join(out), drawn)
