"""ui/draw/diagrams.py: the encoder block's diagram as SVG: every node once, top to bottom in the order the data meets
it, an arrow between neighbours, each residual edge dashed and labelled, every label inside the picture and at least
12 px, the text written as text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_core.block_run import encoder_flow
from ui.draw.diagrams import CHAR_PX, flow_column_svg

NS = {"s": "http://www.w3.org/2000/svg"}


def _parse(svg: str):
    root = ET.fromstring(svg)
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {width:.0f} {height:.0f}"
    return root, width, height


def _texts(root) -> list[tuple[str, float, float, float]]:
    """(text, x, y, font size) of every text."""
    return [
        (t.text, float(t.get("x")), float(t.get("y")), float(t.get("font-size")))
        for t in root.iter(f"{{{NS['s']}}}text")
    ]


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_encoder_diagram_draws_its_flow_as_a_column(norm_first):
    flow, residual = encoder_flow(norm_first)
    root, width, height = _parse(flow_column_svg(flow, residual))
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
    for text, x, y, px in texts:  # inside the picture, at a size a phone reads (drawn at the image's own size)
        assert px >= 12
        half = len(text) * px * CHAR_PX / 2
        left, right = (x - half, x + half) if text != "residual" else (x, x + 2 * half)
        assert 0 <= left and right <= width and px <= y <= height, text
    # the residual edges run right of the boxes and end at the box they add into
    box_right = max(float(r.get("x")) + float(r.get("width")) for r in rects)
    for p in dashed:
        xs = [float(v) for v in re.findall(r"[MH]([\d.]+)", p.get("d"))]
        assert min(xs) >= box_right and max(xs) > box_right + 10


def test_a_pre_norm_diagrams_two_residual_edges_meeting_at_add1_run_in_two_lanes():
    root, _, _ = _parse(flow_column_svg(*encoder_flow(True)))
    lanes = {
        re.search(r"H([\d.]+) V", p.get("d")).group(1) for p in root.findall("s:path", NS) if p.get("stroke-dasharray")
    }
    assert len(lanes) == 2  # one line into add₁, one out of it, side by side rather than on top of each other
    root, _, _ = _parse(flow_column_svg(*encoder_flow(False)))
    lanes = {
        re.search(r"H([\d.]+) V", p.get("d")).group(1) for p in root.findall("s:path", NS) if p.get("stroke-dasharray")
    }
    assert len(lanes) == 1  # post-norm's two residual edges share no box: one lane


def test_the_projector_scale_enlarges_the_whole_picture():
    """Width and height grow, the drawing's own coordinates (its viewBox) stay: labels 1.5 times as large."""
    plain, big = (ET.fromstring(flow_column_svg(*encoder_flow(False), scale=k)) for k in (1.0, 1.5))
    assert plain.get("viewBox") == big.get("viewBox")
    for side in ("width", "height"):
        assert float(big.get(side)) == pytest.approx(1.5 * float(plain.get(side)), abs=1)


def test_an_edge_that_skips_boxes_must_be_residual():
    with pytest.raises(ValueError, match="a -> c"):
        flow_column_svg([("a", "b"), ("b", "c"), ("a", "c")], set())


@given(
    st.lists(
        st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=12).filter(
            lambda t: "\\n" not in t
        ),
        min_size=2,
        max_size=6,
        unique=True,
    )
)
def test_labels_are_written_as_text(labels):
    """Whatever a label holds (markup, ampersands, quotes, any script), the SVG parses and shows it as written."""
    chain = list(zip(labels, labels[1:], strict=False))
    root, _, _ = _parse(flow_column_svg(chain, set()))
    assert [t.text for t in root.iter(f"{{{NS['s']}}}text")] == labels
    assert not root.findall(".//s:script", NS) and not root.findall(".//s:a", NS)
