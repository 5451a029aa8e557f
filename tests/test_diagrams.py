"""ui/draw/diagrams.py: the encoder block's diagram as SVG: every node once, top to bottom in the order the data meets
it, an arrow between neighbours, each residual edge dashed and labelled, no two lines drawn over each other, no label
over a line or past the picture, labels at least 12 px, the text written as text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_core.block_run import encoder_flow
from ui.draw.diagrams import CHAR_PX, LABEL_PX, flow_column_svg

NS = {"s": "http://www.w3.org/2000/svg"}


def _parse(svg: str):
    root = ET.fromstring(svg)
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    return root, width, height


def _texts(root) -> list[tuple[str, float, float, float]]:
    """(text, x, y, font size) of every text."""
    return [
        (t.text, float(t.get("x")), float(t.get("y")), float(t.get("font-size")))
        for t in root.iter(f"{{{NS['s']}}}text")
    ]


def _segments(d: str) -> list[tuple[float, float, float, float]]:
    """The straight pieces of an SVG path made of M, H and V commands: (x0, y0, x1, y1)."""
    out, x, y = [], 0.0, 0.0
    for cmd, a, b in re.findall(r"([MHV])([\d.]+)(?:,([\d.]+))?", d):
        if cmd == "M":
            x, y = float(a), float(b)
        elif cmd == "H":
            out.append((x, y, float(a), y))
            x = float(a)
        else:
            out.append((x, y, x, float(a)))
            y = float(a)
    return out


def _overlap(s, t) -> bool:
    """Whether two axis-parallel segments lie on one line and share more than a point."""
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = s, t
    if ay0 == ay1 == by0 == by1:  # both horizontal at one height
        return min(max(ax0, ax1), max(bx0, bx1)) - max(min(ax0, ax1), min(bx0, bx1)) > 0.5
    if ax0 == ax1 == bx0 == bx1:  # both vertical at one x
        return min(max(ay0, ay1), max(by0, by1)) - max(min(ay0, ay1), min(by0, by1)) > 0.5
    return False


def _crosses_box(seg, box) -> bool:
    """Whether a segment passes through the inside of a box (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = seg
    bx0, by0, bx1, by1 = box
    return min(x0, x1) < bx1 and max(x0, x1) > bx0 and min(y0, y1) < by1 and max(y0, y1) > by0


def assert_drawn_apart(svg: str) -> None:
    """No two edges on top of each other, no label over a line, a box or another label, nothing outside."""
    root, width, height = _parse(svg)
    paths = [p for p in root.findall("s:path", NS) if p.get("d").startswith("M") and "z" not in p.get("d")]
    segs = [(i, s) for i, p in enumerate(paths) for s in _segments(p.get("d"))]
    for i, s in segs:
        for j, t in segs:
            assert i == j or not _overlap(s, t), (paths[i].get("d"), paths[j].get("d"))
    labels = [(x, y - px, x + len(text) * px * CHAR_PX, y + 3) for text, x, y, px in _texts(root) if text == "residual"]
    rects = [
        (
            float(r.get("x")),
            float(r.get("y")),
            float(r.get("x")) + float(r.get("width")),
            float(r.get("y")) + float(r.get("height")),
        )
        for r in root.findall("s:rect", NS)
    ]
    for k, box in enumerate(labels):
        assert 0 <= box[0] and box[2] <= width and 0 <= box[1] and box[3] <= height, box
        assert not any(_crosses_box(s, box) for _, s in segs), box
        assert not any(_crosses_box((r[0], r[1], r[2], r[1]), box) or _crosses_box((r[0], r[1], r[0], r[3]), box) or _crosses_box((r[2], r[1], r[2], r[3]), box) for r in rects), box  # fmt: skip
        assert not any(_crosses_box((o[0], o[1], o[2], o[1]), box) for m, o in enumerate(labels) if m != k)


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_encoder_diagram_draws_its_flow_as_a_column(norm_first):
    flow, residual = encoder_flow(norm_first)
    svg = flow_column_svg(flow, residual).svg
    root, width, height = _parse(svg)
    texts = _texts(root)
    boxes = [t for t in texts if t[0] != "residual"]
    nodes = []
    for a, b in flow:
        nodes += [n for n in (a, b) if n not in nodes]
    lines = [line for n in nodes for line in n.split("\\n")]
    assert [t[0] for t in boxes] == lines  # every label once, in the order the data meets it
    assert [t[2] for t in boxes] == sorted(t[2] for t in boxes)  # top to bottom
    rects = root.findall("s:rect", NS)
    assert len(rects) == len(nodes)
    paths = root.findall("s:path", NS)
    dashed = [p for p in paths if p.get("stroke-dasharray")]
    solid = [p for p in paths if p.get("marker-end") == "url(#arrow)"]
    assert len(dashed) == len(residual) == 2 and len(solid) == len(flow) - len(residual)
    assert sum(t[0] == "residual" for t in texts) == len(residual)
    for text, x, y, px in boxes:  # inside its own box, at a size a phone reads (drawn at the image's own size)
        box = next(r for r in rects if float(r.get("y")) < y < float(r.get("y")) + float(r.get("height")))
        half = len(text) * px * CHAR_PX / 2
        assert px >= 12 and float(box.get("x")) < x - half and x + half < float(box.get("x")) + float(box.get("width"))
    assert LABEL_PX >= 12
    # a residual edge leaves its box from the right side and ends at the right side of the box it adds into
    box_of = dict(zip(nodes, rects, strict=True))
    for (a, b), p in zip([e for e in flow if e in residual], dashed, strict=True):
        (x0, y0, *_), *_, (_, _, x1, y1) = _segments(p.get("d"))
        ra, rb = box_of[a], box_of[b]
        right = float(ra.get("x")) + float(ra.get("width"))
        assert x0 == pytest.approx(right) and x1 == pytest.approx(right + 1)
        assert float(ra.get("y")) < y0 < float(ra.get("y")) + float(ra.get("height"))
        assert float(rb.get("y")) < y1 < float(rb.get("y")) + float(rb.get("height"))
    assert_drawn_apart(svg)


def test_a_pre_norm_diagrams_two_residual_edges_meeting_at_add1_are_drawn_apart():
    """x -> add₁ arrives where add₁ -> add₂ does not leave, each in a lane of its own: never one line."""
    root, _, _ = _parse(flow_column_svg(*encoder_flow(True)).svg)
    into, out_of = (p.get("d") for p in root.findall("s:path", NS) if p.get("stroke-dasharray"))
    assert _segments(into)[-1][1] != _segments(out_of)[0][1]  # arrives and leaves at two heights of add₁
    assert _segments(into)[1][0] != _segments(out_of)[1][0]  # two lanes
    root, _, _ = _parse(flow_column_svg(*encoder_flow(False)).svg)
    lanes = {_segments(p.get("d"))[1][0] for p in root.findall("s:path", NS) if p.get("stroke-dasharray")}
    assert len(lanes) == 1  # post-norm's two residual edges share no box and no height: one lane


@st.composite
def columns(draw):
    """A chain of 2-9 boxes and residual edges that skip at least one box, at most one out of and into each."""
    n = draw(st.integers(2, 9))
    names = [f"n{i}" for i in range(n)]
    chain = list(zip(names, names[1:], strict=False))
    pairs = [(a, b) for a in range(n) for b in range(a + 2, n)]
    picked = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=4)) if pairs else []
    residual, used_out, used_in = set(), set(), set()
    for a, b in picked:
        if a not in used_out and b not in used_in:
            residual.add((names[a], names[b]))
            used_out.add(a)
            used_in.add(b)
    flow = chain + sorted(residual)
    return flow, residual


@given(columns())
def test_any_column_of_boxes_is_drawn_apart(column):
    flow, residual = column
    assert_drawn_apart(flow_column_svg(flow, residual).svg)


def test_the_projector_scale_enlarges_the_whole_picture():
    """Width and height grow, the drawing's own coordinates (its viewBox) stay: labels 1.5 times as large."""
    plain, big = (ET.fromstring(flow_column_svg(*encoder_flow(False), scale=k).svg) for k in (1.0, 1.5))
    assert plain.get("viewBox") == big.get("viewBox")
    for side in ("width", "height"):
        assert float(big.get(side)) == pytest.approx(1.5 * float(plain.get(side)), abs=1)


def test_the_page_draws_the_image_at_the_pictures_own_width():
    for scale in (1.0, 1.5):
        picture = flow_column_svg(*encoder_flow(True), scale=scale)
        assert picture.width == int(ET.fromstring(picture.svg).get("width")) > 0


def test_what_the_layout_cannot_draw_is_refused():
    with pytest.raises(ValueError, match="a -> c"):
        flow_column_svg([("a", "b"), ("b", "c"), ("a", "c")], set())
    with pytest.raises(ValueError, match="from one box"):
        flow_column_svg([("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("a", "d")], {("a", "c"), ("a", "d")})
    with pytest.raises(ValueError, match="into one box"):
        flow_column_svg([("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("b", "d")], {("a", "d"), ("b", "d")})
    with pytest.raises(ValueError, match="at least one edge"):
        flow_column_svg([], set())


@given(
    st.lists(
        st.text(min_size=1, max_size=12).filter(lambda t: "\\n" not in t),
        min_size=2,
        max_size=6,
        unique=True,
    )
)
def test_labels_are_written_as_text(labels):
    """Whatever a label holds (markup, ampersands, quotes, any script), the SVG parses and shows it as written; a
    tab or a line break shows as a space, a character no XML document may hold (another control character, a lone
    surrogate, U+FFFE) as U+FFFD."""
    chain = list(zip(labels, labels[1:], strict=False))
    root, _, _ = _parse(flow_column_svg(chain, set()).svg)
    not_xml = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
    shown = [not_xml.sub("\ufffd", re.sub("[\t\n\r]", " ", label)) for label in labels]
    assert [t.text for t in root.iter(f"{{{NS['s']}}}text")] == shown
    assert not root.findall(".//s:script", NS) and not root.findall(".//s:a", NS)
