"""Unit tests of the UI helpers that do not need a running page."""

import io
import json

import numpy as np
from PIL import Image

from ui.charts import heatmap_png, heatmap_spec, pool
from ui.text import md_escape


def test_pool_means_and_keeps_blank_blocks_nan():
    m = np.arange(16, dtype=float).reshape(4, 4)
    p, f = pool(m, 2)
    assert f == (2, 2)
    np.testing.assert_array_equal(p, [[2.5, 4.5], [10.5, 12.5]])
    m[:2, :2] = np.nan
    p, _ = pool(m, 2)
    assert np.isnan(p[0, 0]) and p[1, 1] == 12.5
    p, f = pool(np.ones((3, 600)), 256)
    assert f == (1, 3) and p.shape == (3, 200)


def test_heatmap_png_colours_and_size():
    png, f = heatmap_png(np.array([[0.0, 1.0], [np.nan, 0.5]]), 0.0, 1.0)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    w, h = img.size
    assert f == (1, 1) and w == h and w >= 160
    assert img.getpixel((0, 0)) == (68, 1, 84)  # viridis low end
    assert img.getpixel((w - 1, 0)) == (253, 231, 37)  # viridis high end
    assert img.getpixel((0, h - 1)) == (225, 225, 225)  # NaN = blank
    png, _ = heatmap_png(np.zeros((11, 256)), 0, 1)
    w, h = Image.open(io.BytesIO(png)).size
    assert h >= 80  # not a thin strip


def test_heatmap_spec_labels_are_data_not_html():
    labels = ('<img src=x onerror=alert(1)>', '"quoted"', "it")
    spec = json.loads(heatmap_spec((3, 3), labels, labels, "t", "query", "key", "weight", (0.0, 1.0), "viridis", 200, True))
    expr = spec["encoding"]["x"]["axis"]["labelExpr"]
    assert json.loads(expr[: expr.index("[datum.value]")]) == list(labels)  # a JSON array literal, indexed
    assert "data" not in spec and "datasets" not in spec


def test_md_escape():
    assert md_escape("**bold** <b>x</b> [a](javascript:1)") == r"\*\*bold\*\* \<b\>x\<\/b\> \[a\]\(javascript\:1\)".replace(r"\/", "/")
    assert md_escape("plain") == "plain"


def test_head_view_keeps_both_token_columns_inside_the_chart():
    from ui.views import head_view_chart

    w = np.full((3, 3), 1 / 3)
    spec = head_view_chart(w, ["a", "b", "c"]).to_dict()
    left_x, right_x = (layer["encoding"]["x"]["value"] for layer in spec["layer"][1:])
    assert 60 <= left_x < right_x <= spec["width"] - 60  # room for the labels on both sides
    assert spec["layer"][0]["encoding"]["x"]["value"] == left_x and spec["layer"][0]["encoding"]["x2"]["value"] == right_x
