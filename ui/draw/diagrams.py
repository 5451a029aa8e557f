"""Block diagrams drawn as SVG by the server, shown as an image (``st.image`` takes SVG text) with their flow in words
as the alternative text.

The Transformer block's encoder diagram was an ``st.graphviz_chart``: the browser then loads Graphviz compiled to
WebAssembly (0.8 MB) and lays the graph out itself, 0.7 s of a school laptop's opening of that page (Chromium
throttled 4x, docs/BENCHMARKS.md). Its layout is a column of boxes with two residual edges beside it: simple enough
to place here. Imports only the standard library.
"""

from __future__ import annotations

from html import escape

FONT_PX = 13  # a box's label; the edges' "residual" is LABEL_PX. Drawn at the image's own size (a11y.css): never
LABEL_PX = 12  # under 11 px on a screen (tests/device_util.SMALL_CHART_TEXT)
CHAR_PX = 0.62  # the widest a sans-serif character runs, in font sizes (a label's box is sized from it)
LINE_PX = 17  # a label line's height
PAD_X, PAD_Y = 12, 6  # inside a box
GAP = 24  # between two boxes of the column (an arrow)
LANE = 34  # how far right of the boxes a residual edge runs; two edges that meet at a box run in two lanes
MARGIN = 4
INK, BOX, DASH = "#0e1117", "#f3f5f9", "#4a4f5c"  # the theme's text, its secondary background; 8.2:1 on white


def _text_width(line: str, px: int) -> float:
    return len(line) * px * CHAR_PX


def flow_column_svg(flow: list[tuple[str, str]], residual: set[tuple[str, str]], scale: float = 1.0) -> str:
    """A top-to-bottom column of boxes, one per node in the order ``flow`` first meets it, an arrow between
    neighbours, and each edge in ``residual`` (it skips boxes) as a dashed line on the right labelled "residual".
    A node's "\\n" breaks its label. Every edge that is not residual must join neighbours of the column. ``scale``
    enlarges the whole picture (the projector view draws its maps and diagrams 1.5 times as large)."""
    nodes: list[str] = []
    for a, b in flow:
        for n in (a, b):
            if n not in nodes:
                nodes.append(n)
    at = {n: i for i, n in enumerate(nodes)}
    for a, b in flow:
        if (a, b) not in residual and at[b] != at[a] + 1:
            raise ValueError(f"{a} -> {b} is not residual and does not join neighbours of the column")
    lines = {n: n.split("\\n") for n in nodes}
    box_w = max(_text_width(line, FONT_PX) for n in nodes for line in lines[n]) + 2 * PAD_X
    label_w = _text_width("residual", LABEL_PX)
    tops, y = {}, MARGIN
    for n in nodes:
        tops[n] = y
        y += len(lines[n]) * LINE_PX + 2 * PAD_Y + GAP
    height = y - GAP + MARGIN
    left = MARGIN
    right = left + box_w
    width = right + 2 * LANE + label_w + MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * scale:.0f}" height="{height * scale:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">',
        "<defs>"
        f'<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker>'
        f'<marker id="arrow-dashed" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{DASH}"/></marker>'
        "</defs>",
    ]
    bottom = {n: tops[n] + len(lines[n]) * LINE_PX + 2 * PAD_Y for n in nodes}
    mid_x = left + box_w / 2
    for n in nodes:
        h = bottom[n] - tops[n]
        out.append(
            f'<rect x="{left}" y="{tops[n]}" width="{box_w:.0f}" height="{h}" rx="7" fill="{BOX}" stroke="{INK}"/>'
        )
        for k, line in enumerate(lines[n]):
            base = tops[n] + PAD_Y + (k + 1) * LINE_PX - 4
            out.append(
                f'<text x="{mid_x:.1f}" y="{base}" font-size="{FONT_PX}" text-anchor="middle" fill="{INK}">'
                f"{escape(line)}</text>"
            )
    lane_of: dict[tuple[str, str], int] = {}
    for a, b in flow:
        if (a, b) in residual:  # a second lane when it touches a box another residual edge touches
            touching = [e for e in lane_of if {a, b} & set(e)]
            lane_of[(a, b)] = 1 + (len(touching) % 2)
            x = right + lane_of[(a, b)] * LANE - LANE / 2
            y0, y1 = tops[a] + (bottom[a] - tops[a]) * 0.5, tops[b] + (bottom[b] - tops[b]) * 0.5
            out.append(
                f'<path d="M{right},{y0:.1f} H{x:.1f} V{y1:.1f} H{right + 1}" fill="none" stroke="{DASH}" '
                f'stroke-width="1.3" stroke-dasharray="5 3" marker-end="url(#arrow-dashed)"/>'
            )
            out.append(
                f'<text x="{x + 4:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" font-size="{LABEL_PX}" fill="{DASH}">residual</text>'
            )
        else:
            out.append(
                f'<path d="M{mid_x:.1f},{bottom[a]} V{tops[b] - 1}" stroke="{INK}" stroke-width="1.3" '
                f'marker-end="url(#arrow)"/>'
            )
    out.append("</svg>")
    return "".join(out)
