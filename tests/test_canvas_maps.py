"""Heatmaps drawn by the browser on a canvas (ui/draw/canvas_maps.py, ui/draw/heatmap.js): what a map's element
carries, decided in Python (labels as drawn, the cells' texts, the colour domain, the legend's ticks). The browser's
half (the cells' colours, the labels, the tooltip) is checked in Chromium in tests/test_browser_pictures.py."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from hypothesis.extra import numpy as hnp
from streamlit.testing.v1 import AppTest

from attention_core import WhatIf
from tests.apptest_util import heatmaps
from ui.draw import canvas_maps
from ui.draw.canvas_maps import cell_px, colour_digits, heatmap_data, legend_ticks, read_cells, scale_position, stride
from ui.text import fmt


def _data(m, rows, cols, **kw) -> dict:
    args = dict(
        title="t",
        row_name="query",
        col_name="key",
        value="weight",
        domain=(0.0, 1.0),
        scheme="viridis",
        size=260,
        legend=True,
        note="",
        blank=None,
        description="a map",
        group="g",
    )
    return heatmap_data(np.asarray(m, dtype=float), rows, cols, **(args | kw))


def _run_script(script) -> AppTest:
    at = AppTest.from_function(script).run()
    assert not at.exception, at.exception
    return at


def test_a_maps_labels_are_data_not_html():
    """Labels travel as JSON strings and heatmap.js writes them with textContent: markup stays text. An axis
    shortens a long label; the tooltip's labels are whole."""
    labels = ("<img src=x onerror=alert(1)>", '"quoted"', "it")
    d = _data(np.eye(3), labels, labels)
    assert d["colShown"] == d["rowShown"] == ["<img src=…", '"quoted"', "it"]
    assert d["rows"] == d["cols"] == list(labels)
    assert d["rowName"] == "query" and d["colName"] == "key" and d["value"] == "weight"
    assert json.loads(json.dumps(d)) == d  # plain JSON: no HTML, no code
    js = (canvas_maps.HERE / "heatmap.js").read_text()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "textContent" in js


def test_every_label_up_to_40_then_a_regular_subset():
    """Every label while there are at most 40 and a cell has 12 px or more; else every k-th, and the axis title
    says so; a map keeps to the size its column gives it."""
    for n, size in ((1, 260), (11, 260), (21, 260), (40, 480)):
        labels = tuple(f"tok{i}" for i in range(n))
        d = _data(np.zeros((n, n)), labels, labels, size=size)
        assert d["colShown"] == list(labels) and d["rowShown"] == list(labels)
        assert d["cw"] >= 12 and d["colTitle"] == "key" and d["rowTitle"] == "query"
    assert canvas_maps.label_every(41) == 3 and canvas_maps.label_every(512) == 26
    labels = tuple(f"tok{i}" for i in range(64))
    d = _data(np.zeros((64, 64)), labels, labels)
    assert d["colShown"][:5] == ["tok0", "", "", "", "tok4"] and d["colTitle"] == "key (every 4th of 64 labelled)"
    labels = tuple(f"tok{i}" for i in range(40))  # 40 tokens in 260 px: 6 px cells, every 2nd labelled
    d = _data(np.zeros((40, 40)), labels, labels)
    assert d["cw"] == 6 and d["colShown"][:3] == ["tok0", "", "tok2"]
    assert d["rowTitle"] == "query (every 2nd of 40 labelled)"


@settings(max_examples=80, deadline=None)
@given(
    labels=hst.lists(hst.text(min_size=0, max_size=14), min_size=1, max_size=70),
    rows=hst.integers(1, 64),
    size=hst.sampled_from([120, 220, 260, 390]),
)
def test_the_axes_draw_the_labels_they_are_given(labels, rows, size):
    """Any labels: the axis draws each one shortened (at most 10 characters) at every k-th position, "" between,
    k as large as keeps drawn labels 12 px apart; the tooltip has every whole label; labels of 20 px or more of
    room are drawn at 15 px, others at 11 (never smaller)."""
    row_labels = [f"r{i}" for i in range(rows)]
    d = _data(np.zeros((rows, len(labels))), row_labels, labels, size=size)
    k = stride(len(labels), cell_px(len(labels), size))
    assert d["cols"] == labels
    for j, (t, shown) in enumerate(zip(labels, d["colShown"], strict=True)):
        expected = (t if len(t) <= 10 else t[:9] + "…") if j % k == 0 else ""
        assert shown == expected
    assert k * d["cw"] >= 12 or len(labels) == 1
    assert d["colFont"] == (15 if k * d["cw"] >= 20 else 11) and d["rowFont"] >= 11
    assert ("every" in d["colTitle"]) == (k > 1)


def test_a_dimensions_label_is_its_number_and_every_4th_of_64_is_drawn():
    """The Playground's Z (8 tokens x 64 dims): column j is labelled str(j + 1) in the tooltip, the axis draws
    every 4th ("1", "5", ..., "61"); the map's data stays small."""

    def script():
        from attention_core import WhatIf, run_whatif
        from ui.draw.charts import show_token_dims

        run = run_whatif(WhatIf())
        show_token_dims(run.output, run.tokens, title="Z output", domain=(-3.4, 3.4))

    from attention_core import run_whatif

    run = run_whatif(WhatIf())
    (d,) = heatmaps(_run_script(script))
    assert d["cols"] == [str(j + 1) for j in range(64)]
    assert d["colShown"] == [str(j + 1) if j % 4 == 0 else "" for j in range(64)]
    assert d["colShown"][60] == "61" and d["rows"] == d["rowShown"] == list(map(str, run.tokens))
    assert d["colTitle"] == "dim (every 4th of 64 labelled)" and d["rowName"] == "token" and d["value"] == "z"
    assert d["scheme"] == "diverging" and (d["lo"], d["hi"]) == (-3.4, 3.4)
    assert list(d["cells"]["t"]) == [fmt(x) for x in run.output.ravel()]
    assert len(json.dumps({k: v for k, v in d.items() if k != "cells"})) < 6000


def test_heatmap_axes_name_the_rows_the_columns_and_the_value():
    def script():
        import numpy as np

        from ui.draw.charts import Axes, show_heatmap, show_mask, show_token_dims

        m = np.arange(6.0).reshape(2, 3) / 6
        axes = Axes("query position i", "key j", "score")
        show_heatmap(m, ["a", "b"], ["x", "y", "z"], title="named", axes=axes, domain=(0, 1))
        show_heatmap(m, ["a", "b"], ["x", "y", "z"], title="default", domain=(0, 1))
        show_mask(np.tril(np.ones((2, 2), dtype=bool)), ["a", "b"], title="mask")
        show_token_dims(m - 0.5, ["a", "b"], title="dims", value_name="z")  # on its own range
        big = np.zeros((80, 80))
        show_heatmap(
            big, range(80), range(80), title="big", domain=(0, 1), blank=np.eye(80, dtype=bool), blank_label="padding"
        )

    at = _run_script(script)
    maps = {d["title"]: d for d in heatmaps(at)}
    seen = {t: (d["rowTitle"], d["colTitle"].split(" · ")[0], d["value"]) for t, d in maps.items()}
    assert seen == {
        "named": ("query position i", "key j", "score"),
        "default": ("query", "key", "weight"),
        "mask": ("query", "key", "allowed"),
        "dims (own range)": ("token", "dim", "z"),
    }
    assert (maps["named"]["rowName"], maps["named"]["colName"]) == ("query position i", "key j")  # the tooltip's
    # a map given no domain is drawn on its own range by the colour rule and says so in its title
    assert (maps["dims (own range)"]["lo"], maps["dims (own range)"]["hi"]) == (-0.5, 0.5)
    # a mask has no legend: its key axis states the colour range
    assert maps["mask"]["legend"] is None and maps["mask"]["colTitle"] == "key · colour 0–1"
    assert maps["named"]["legend"] == [[0.0, "0"], [0.5, "0.5"], [1.0, "1"]]
    (image,) = at.get("image")
    assert "big (80 x 80 as an image" in image.proto.imgs[0].caption and "grey = padding" in image.proto.imgs[0].caption


def test_one_module_a_run_and_every_map_its_own_key():
    """The module is drawn once a run, before the first map; maps without a key of their own are numbered in the
    order drawn (the same keys from run to run); two maps with the same numbers are two elements."""

    def script():
        import numpy as np
        import streamlit as st

        from ui.draw.charts import show_heatmap

        c1, c2 = st.columns(2)
        for box in (c1, c2, None):
            show_heatmap(np.eye(2), "ab", "ab", title="same", domain=(0, 1), container=box)
        show_heatmap(np.eye(2), "ab", "ab", title="mine", domain=(0, 1), key="my_map")

    at = _run_script(script)
    parts = [c for c in at.get("bidi_component") if c.proto.component_name.startswith("attention_explorer.heatmap")]
    names = [(c.proto.component_name.rsplit(".", 1)[1], c.proto.id.rsplit("-", 1)[1]) for c in parts]
    assert sorted(names) == sorted(
        [("heatmap_module", "ae_hm_module"), ("heatmap", "ae_hm_0"), ("heatmap", "ae_hm_1"), ("heatmap", "ae_hm_2")]
        + [("heatmap", "my_map")]
    )
    module = next(c for c in parts if c.proto.component_name.endswith("module"))
    assert "const LUTS" in module.proto.js_content and len(module.proto.js_content) > 3000
    stub = next(c for c in parts if c.proto.component_name.endswith(".heatmap"))
    assert len(stub.proto.js_content) < 1000  # a map carries its data and a stub, not the module


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=9),
        elements=hst.floats(-1e6, 1e6, allow_nan=False)
        | hst.sampled_from([0.0, -0.0, 1e-9, 0.99746, -4.4e-16, np.nan, np.inf, -np.inf]),
    ),
    hst.data(),
)
def test_a_maps_cells_read_back_as_its_numbers(m, data):
    """The cells travel as their texts (ui.text.fmt's) in reading order, "" for a blank one; read back as the
    browser reads them (read_cells, heatmap.js's hmCells): every cell that is not blank with its text and the
    value its colour is read from (that text, or one with the digits the colour needs; a text that is no finite
    number is not drawn)."""
    blank = data.draw(hnp.arrays(bool, m.shape)) if data.draw(hst.booleans()) else None
    d = _data(m, [f"r{i}" for i in range(m.shape[0])], [f"c{j}" for j in range(m.shape[1])], blank=blank)
    texts, values = read_cells(d)
    keep = np.ones(m.shape, bool) if blank is None else ~blank
    assert [t is not None for t in texts] == list(keep.ravel())
    assert [t for t in texts if t is not None] == [fmt(x) for x in m[keep]]
    digits = colour_digits(m if blank is None else np.where(blank, np.nan, m), (0.0, 1.0))  # the colour's own
    assert ("colour" in d) == (digits > 3)
    said = np.array([float(fmt(x, digits)) for x in m[keep]])
    said[~np.isfinite(said)] = np.nan
    np.testing.assert_allclose(values[keep.ravel()], said)
    assert np.isnan(values[~keep.ravel()]).all()
    finite = np.isfinite(m[keep])
    np.testing.assert_allclose(values[keep.ravel()][finite], m[keep][finite], rtol=5e-3, atol=0)


def test_a_stretched_maps_colour_keeps_the_digits_its_scale_needs():
    """The colour comes from text: 3 significant digits on the usual scales (no second text sent), more on a
    stretched one, where a near-uniform map's weights (0.123 to 0.127) differ in the fourth digit: each cell's colour
    value is then within half of one 256th of the domain of its weight, and the tooltip still reads as the page
    writes it."""
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(8), size=8)
    labels = [f"t{i}" for i in range(8)]
    assert colour_digits(weights, (0.0, 1.0)) == 3 and "colour" not in _data(weights, labels, labels)
    z = rng.normal(size=(8, 64)) * 1.2
    lim = float(np.abs(z).max())
    assert colour_digits(z, (-lim, lim)) == 3  # outputs on their own symmetric range
    flat = 0.123 + 0.004 * rng.random((8, 8))
    lo, hi = float(flat.min()), float(flat.max())
    assert colour_digits(flat, (lo, hi)) >= 5
    d = _data(flat, labels, labels, domain=(lo, hi))
    texts, values = read_cells(d)
    assert np.abs(values - flat.ravel()).max() <= (hi - lo) / 512
    assert texts == [fmt(x) for x in flat.ravel()]
    three = np.array([float(t) for t in texts])  # what 3 digits alone would colour: a few steps
    assert len(set(three)) <= 6 < len(set(values))


@pytest.mark.parametrize(
    "lo, hi, diverging, ticks",
    [
        (0.0, 1.0, False, [[0.0, "0"], [0.5, "0.5"], [1.0, "1"]]),
        (-2.0, 2.0, True, [[0.0, "-2"], [0.5, "0"], [1.0, "2"]]),
        (-1.0, 3.0, True, [[0.0, "-1"], [0.5, "0"], [1.0, "3"]]),  # white at 0, each side on its own half
        (0.5, 3.0, True, [[0.0, "0.5"], [0.5, "1.75"], [1.0, "3"]]),  # a diverging map all on one side of 0
        (0.000761, 0.0943, False, [[0.0, "0.000761"], [0.5, "0.0475"], [1.0, "0.0943"]]),
    ],
)
def test_the_legend_states_the_ends_and_the_middle_of_its_scale(lo, hi, diverging, ticks):
    assert legend_ticks(lo, hi, diverging) == ticks


@given(
    v=hst.floats(-1e3, 1e3),
    lo=hst.floats(-1e3, 1e3),
    width=hst.floats(1e-6, 1e3),
    diverging=hst.booleans(),
)
def test_a_value_falls_on_its_scale_in_order_and_clamped(v, lo, width, diverging):
    """The colour's position is in 0..1 (a text that rounds past an end is clamped), never decreases with the value,
    and is 0.5 at 0 on a diverging scale that spans 0."""
    hi = lo + width
    t = scale_position(v, lo, hi, diverging)
    assert 0.0 <= t <= 1.0
    assert scale_position(min(v + 1.0, 1e3), lo, hi, diverging) >= t
    if diverging and lo < 0 < hi:
        assert scale_position(0.0, lo, hi, diverging) == 0.5
