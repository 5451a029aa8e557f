"""Unit tests of the UI helpers that do not need a running page."""

import io
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from PIL import Image

from attention_core import WhatIf
from ui.draw.images import heatmap_png, pool
from ui.text import fmt, fmt_all, fmt_arrow, md_escape


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


def test_weight_maps_share_one_scale_absolute_unless_the_reader_stretches(monkeypatch):
    """Maps a reader compares share one scale: 0-1 by default; stretched only when the reader asks, and then to
    the whole group's range, so the sharper map still reaches further up the scale."""
    import ui.draw.charts as charts

    soft = np.full((8, 8), 1 / 8)
    soft[:, 0] += 0.01
    soft /= soft.sum(-1, keepdims=True)
    sharp = np.full((8, 8), 0.05)
    sharp[:, 3] = 0.65
    monkeypatch.setattr(charts, "stretching", lambda: False)
    assert charts.weight_scale(soft) == charts.ABSOLUTE == charts.weight_scale(soft, sharp)
    assert charts.weight_axis(soft[0]) == charts.ABSOLUTE and charts.ABSOLUTE.note() == "colour 0–1"

    monkeypatch.setattr(charts, "stretching", lambda: True)
    group = charts.weight_scale(soft, sharp)
    assert group.stretched and group.lo <= 0.05 + 1e-9 and group.hi >= 0.64  # the group's range, not soft's alone
    alone = charts.weight_scale(soft)
    assert alone.hi < 0.14  # the soft map alone would fill the scale with yellow
    position = lambda m, s: float(np.clip((m.max(-1).mean() - s.lo) / (s.hi - s.lo), 0, 1))  # noqa: E731
    assert position(sharp, group) > position(soft, group)  # on one scale the sharper map looks sharper
    assert "stretched to" in group.note() and group.note("axis").startswith("axis stretched")
    allowed = np.ones((8, 8), dtype=bool)
    allowed[:, 3] = False  # masking the sharp column leaves only 0.05s: the group's range ignores masked cells
    assert charts.weight_scale(sharp, allowed=[allowed]) == charts.ABSOLUTE  # one value: nothing to stretch
    axis = charts.weight_axis(soft[0], sharp[0])
    assert axis.lo == 0 and axis.hi == 0.65 and axis.stretched  # bars keep their zero
    assert charts.shared_domain(np.array([1.0, -3.0]), np.array([2.0])) == (-3.0, 2.0)
    assert charts.shared_domain(np.array([1.0, -3.0]), symmetric=True) == (-3.0, 3.0)
    assert charts.shared_domain(np.array([0.5, 2.0])) == (0.0, 2.0)


def test_md_escape():
    assert md_escape(
        "**bold** <b>x</b> [a](javascript:1)"
    ) == r"\*\*bold\*\* \<b\>x\<\/b\> \[a\]\(javascript\:1\)".replace(r"\/", "/")
    assert md_escape("plain") == "plain"


def test_head_view_keeps_both_token_columns_inside_the_chart_on_a_phone_too():
    import pandas as pd

    from ui.lessons.real_model.head_view import LABEL_LIMIT, WIDTH, head_view_chart

    w = np.full((3, 3), 1 / 3)
    spec = head_view_chart(w, ["a", "b", "c"]).to_dict()
    assert spec["width"] == "container"  # as wide as its box: WIDTH px on a wide screen, less on a phone
    rules, left, right = spec["layer"]
    data = {name: pd.DataFrame(rows) for name, rows in spec["datasets"].items()}
    at = {}
    for name, layer in (("left", left), ("right", right)):
        enc = layer["encoding"]["x"]
        assert enc["scale"]["domain"] == [0, 1] and enc["type"] == "quantitative"
        (at[name],) = set(data[layer["data"]["name"]][enc["field"]])
        assert layer["mark"]["limit"] == LABEL_LIMIT  # a long token ends in an ellipsis, inside the chart
    assert rules["encoding"]["x"]["scale"]["domain"] == [0, 1]
    lines = data[rules["data"]["name"]]
    assert set(lines[rules["encoding"]["x"]["field"]]) == {at["left"]}
    assert set(lines[rules["encoding"]["x2"]["field"]]) == {at["right"]}
    for width in (358, WIDTH):  # a phone's main area (390 px less its margins), and the widest it is drawn
        room_left, room_right = at["left"] * width, (1 - at["right"]) * width
        assert min(room_left, room_right) >= LABEL_LIMIT + 6, (width, room_left, room_right)  # label and its gap


def test_metric_row_needs_metrics_and_equally_tall_stacks():
    from ui.draw.metrics import Metric, metric_row

    with pytest.raises(ValueError, match="at least one"):
        metric_row([])
    a, b = Metric("a", "1"), Metric("b", "2")
    with pytest.raises(ValueError, match=r"equally tall to line up; got \[2, 1\]"):
        metric_row([(a, b), (a,)])


@pytest.mark.parametrize("scheme", ["viridis", "diverging"])
def test_heatmap_png_is_a_palette_image_that_follows_the_colour_scale(scheme):
    from ui.draw.images import _LUTS

    values = np.linspace(0.0, 1.0, 256)
    png, _ = heatmap_png(values[None, :], 0.0, 1.0, scheme)
    img = Image.open(io.BytesIO(png))
    assert img.mode == "P" and img.size[0] == 256  # one byte a pixel; 256 columns, rows enlarged
    got = np.asarray(img.convert("RGB"))[0].astype(int)  # (256, 3)
    lut = _LUTS[scheme].astype(int)
    want = lut[np.round(values * 255).astype(int)]
    step = np.abs(np.diff(lut, axis=0)).max()  # the palette has 254 levels: at most one step of the scale off
    assert np.abs(got - want).max() <= step
    np.testing.assert_array_equal(got[[0, -1]], lut[[0, -1]])


def test_bar_charts_share_a_skeleton_whatever_their_titles():
    from ui.draw.charts import _bar_skeleton, bar_chart

    labels = ["a", "b", "c"]
    before = _bar_skeleton.cache.misses
    one = bar_chart([0.2, 0.5, 0.3], labels, title="head 1, query 1")
    two = bar_chart([0.1, 0.1, 0.8], labels, title="head 2, query 3")
    assert (one["title"], two["title"]) == ("head 1, query 1", "head 2, query 3")
    assert _bar_skeleton.cache.misses - before <= 1  # the second chart reused the first one's layout
    assert "title" not in bar_chart([0.2, 0.5, 0.3], labels)


def test_a_long_bar_chart_is_painted_on_a_canvas_with_readable_axis_text():
    """Over CANVAS_BARS bars (Softmax saturation's rows at 512 keys) Vega paints a canvas: a new setting redraws it
    faster than one SVG element per bar. ui/skeleton/a11y.css cannot reach a canvas, so the spec colours its axis text with
    AA contrast; a short chart stays SVG (the stylesheet's colours)."""
    from tests.a11y_util import contrast
    from ui.draw.charts import AXIS_TEXT, CANVAS_BARS, bar_chart

    n = CANVAS_BARS + 1
    long = bar_chart(np.full(n, 1 / n), [f"k{j}" for j in range(n)])
    assert long["usermeta"]["embedOptions"] == {"renderer": "canvas"}
    axis = long["config"]["axis"]
    assert axis["labelColor"] == axis["titleColor"] == AXIS_TEXT
    hexrgb = "rgb(" + ", ".join(str(int(AXIS_TEXT[i : i + 2], 16)) for i in (1, 3, 5)) + ")"
    assert contrast(hexrgb, "rgb(255, 255, 255)") >= 4.5
    short = bar_chart(np.full(CANVAS_BARS, 1 / CANVAS_BARS), [f"k{j}" for j in range(CANVAS_BARS)])
    assert "embedOptions" not in short["usermeta"]


def _run_script(script) -> list:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(script).run()
    assert not at.exception, at.exception
    return at


def test_own_domain_follows_the_colour_rule():
    from ui.draw.charts import own_domain, shared_domain

    m = np.array([[0.5, -2.0], [1.0, 3.0]])
    assert own_domain(m, diverging=True) == (-3.0, 3.0)  # signed: centred on 0
    assert own_domain(np.abs(m)) == (0.0, 3.0)  # non-negative: from 0, not from its smallest value (0.5)
    assert own_domain(m, blank=m > 2, diverging=True) == (-2.0, 2.0)  # blank cells left out
    assert own_domain(np.zeros((2, 2))) == (0.0, 1.0) and own_domain(np.zeros((2, 2)), diverging=True) == (-1.0, 1.0)
    assert shared_domain(m, 2 * m, symmetric=True) == (-6.0, 6.0) and shared_domain(np.abs(m) + 24) == (0.0, 27.0)


def test_a_heatmap_option_that_does_not_exist_is_an_error_not_ignored():
    from ui.draw.charts import show_heatmap, show_token_dims, show_weights

    with pytest.raises(TypeError, match="row_title"):
        show_heatmap(np.ones((2, 2)), "ab", "ab", row_title="rows")
    with pytest.raises(TypeError, match="value_name"):
        show_weights(np.ones((2, 2)), "ab", value_name="w")
    with pytest.raises(TypeError, match="sets \\['scheme'\\] itself"):
        show_token_dims(np.ones((2, 2)), ["a", "b"], title="t", scheme="viridis")


def test_head_grid_caption_speaks_of_one_head_or_of_several():
    def script():
        import numpy as np
        import streamlit as st

        from ui.draw.head_grid import show_head_grid

        causal = np.tril(np.ones((512, 512), dtype=bool))
        st.markdown(show_head_grid(np.full((1, 512, 512), 1 / 512), [f"t{i}" for i in range(512)], allowed=causal))
        st.markdown(show_head_grid(np.full((3, 100, 100), 0.01), [f"t{i}" for i in range(100)]))

    one, several = (m.value for m in _run_script(script).markdown)
    assert one.startswith("The head's 512 x 512 map as an image, mean-pooled 4 x 4 to 128 x 128 pixels")
    assert "grey cells are masked" in one and "heads" not in one
    assert several.startswith("Heads in reading order") and "each tile is one head's 100 x 100 map" in several
    assert "grey lines separate the heads" in several and "masked" not in several


@pytest.mark.parametrize(
    "value, shown",
    [(0.0008, "0.0008"), (0.00012, "0.00012"), (0.00004, "4e-05"), (-0.00004, "-4e-05"), (0.4, "0.4"),
     (0.99746, "0.997"), (0.99751, "0.998"), (12.3456, "12.3"), (-3.14159, "-3.14"), (999.4, "999"),
     (999.6, "1e+03"), (1234.5, "1.23e+03"), (0.0, "0"), (-0.0, "0"), (4.4e-16, "4.4e-16"), (5e-324, "4.94e-324")],
)  # fmt: skip
def test_one_formatter_writes_three_significant_digits_rounded_once(value, shown):
    """The one number formatter of sentences, tables, map cells and tooltips: 3 significant digits, rounded once
    (0.99746 is 0.997, not 0.9975 rounded again to 0.998), no "-0"."""
    assert fmt(value) == shown and fmt_all([value]) == [shown]


def test_the_fast_formatter_writes_what_python_writes():
    """Arrow writes the positional numbers of a map's cells; they read exactly as Python's format writes them."""
    rng = np.random.default_rng(0)
    values = np.concatenate([np.geomspace(1e-30, 1e30, 2001), -np.geomspace(1e-9, 1e9, 501), rng.random(2000)])
    values = np.concatenate([values, np.round(values, 4), np.round(values, 2), [0.0, -0.0, 1.0, 100.0, 1e-4, 1e3]])
    assert fmt_all(values) == [f"{v + 0.0:.3g}" for v in values]  # + 0.0: "0", never "-0"
    assert fmt_all(values, digits=2) == [f"{v + 0.0:.2g}" for v in values]


def test_a_text_table_breaks_long_names_not_numbers():
    """ui.draw.tables' text tables (narrow screens, the projector view) wrap in a phone's column: a zero-width space
    after a dot, underscore or slash before a letter and inside CamelCase; a number keeps its digits together (its
    hyphen a non-breaking one); a link stays a link."""
    from ui.draw.tables import _wrap_cell

    zw = "\u200b"
    assert _wrap_cell("1.19e-07") == "1.19e\u201107" and _wrap_cell("0.175") == "0.175"
    assert _wrap_cell("torch.nn.functional.scaled_dot_product_attention") == zw.join(
        ["torch.", "nn.", "functional.", "scaled_", "dot_", "product_", "attention"]
    )
    assert _wrap_cell("MultiHeadSelfAttention, from scratch") == f"Multi{zw}Head{zw}Self{zw}Attention, from scratch"
    assert _wrap_cell("https://huggingface.co/gpt2 config.json") == f"https://huggingface.co/gpt2 config.{zw}json"


def test_a_text_table_is_made_once_per_table():
    """The text twin of a grid is converted once while its Arrow table lives (no pandas on every rerun)."""
    import pyarrow as pa

    from ui.draw.tables import _text_table

    table = pa.table({"name": ["a.b"], "x": [1.5]})
    first = _text_table(table, {}, True)
    assert _text_table(table, {}, True) is first
    assert _text_table(table, {"x": {"label": "x!"}}, True) is not first  # another column_config, another table
    assert list(_text_table(table, {"x": {"label": "x!"}}, True).columns) == ["name", "x!"]


def _rendered_cells(markdown: str) -> tuple[list[list[str]], str]:
    """A Markdown table rendered as CommonMark with GitHub's tables: the text of each row's cells, and the HTML."""
    import html as html_lib

    from markdown_it import MarkdownIt

    out = MarkdownIt("commonmark").enable("table").render(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", out, flags=re.S)
    cells = [[html_lib.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S)] for r in rows]
    return cells, out


_CELL_TEXT = hst.text(
    hst.sampled_from(list("\\`*_{}[]()#+-.!|<>~$&: \nab1")) | hst.characters(blacklist_categories=("Cs", "Cc")),
    max_size=30,
).filter(lambda t: "://" not in t)


@settings(max_examples=150, deadline=None)
@given(cells=hst.lists(hst.tuples(_CELL_TEXT, _CELL_TEXT), min_size=1, max_size=4), name=_CELL_TEXT)
def test_a_markdown_twin_shows_every_cell_as_written(cells, name):
    """A grid's text twin for phones is one Markdown table (ui.draw.tables.markdown_table): whatever a cell holds
    (a token a learner typed: markup, math, pipes, HTML, a line break) reads as written, in its own cell, and makes
    no element of its own (no emphasis, link, code or HTML)."""
    import pandas as pd

    from ui.draw.tables import markdown_table

    frame = pd.DataFrame(cells, columns=[name or "a", "b"], index=[f"r{i}" for i in range(len(cells))])
    got, out = _rendered_cells(markdown_table(frame))
    one_line = lambda t: " ".join(str(t).split())  # noqa: E731 (a cell is one line; HTML collapses spaces)
    assert [[one_line(c) for c in row] for row in got] == [
        ["", one_line(name or "a"), "b"],
        *[[f"r{i}", one_line(a), one_line(b)] for i, (a, b) in enumerate(cells)],
    ]
    assert not re.search(r"<(?!/?(table|thead|tbody|tr|th|td)\b)", out), out


def test_a_markdown_twin_writes_numbers_as_the_grid_and_aligns_them_right():
    """Numbers as st.table writes them (a float to 4 decimals, thousands parted), a missing one empty, a column of
    numbers (numbers written as text too) aligned right, a link's word kept as a link, the index left out on
    request."""
    import pandas as pd

    from ui.draw.tables import markdown_table

    frame = pd.DataFrame(
        {"x": [0.5, float("nan")], "n": [1234, 5], "s": ["0.123", "\u20111.5"], "t": ["see https://a.org/x_y", "b"]},
        index=pd.Index(["A", "B"], name="token"),
    )
    md = markdown_table(frame)
    assert md.splitlines()[:2] == ["| token | x | n | s | t |", "|---|---:|---:|---:|---|"]
    assert md.splitlines()[2:] == [
        "| A | 0.5000 | 1,234 | 0.123 | see [https\\:\\/\\/a\\.org\\/x\\_y](https://a.org/x_y) |",
        "| B |  | 5 | \u20111.5 | b |",
    ]
    assert markdown_table(frame) is md  # made once per text table
    assert markdown_table(frame, hide_index=True).splitlines()[0] == "| x | n | s | t |"
    cells, out = _rendered_cells(md)
    assert '<td style="text-align:right">0.5000</td>' in out
    assert cells[1][4] == 'see <a href="https://a.org/x_y">https://a.org/x_y</a>'


@pytest.mark.parametrize(
    "word",
    [
        "[Log in](https://evil.example)",
        "![](https://evil.example/p.png)",
        "**x**://",
        "$x$://",
        "a://\\|",
        "<b>a://</b>",
        "https://a.org/(x)",
        "x:smile:://",
        ":material/home:",
    ],
)
def test_a_typed_word_holding_an_address_is_text_in_a_markdown_twin(word):
    """Only a word that is a web address and nothing else becomes a link; a learner's word that holds "://" among
    markup reads as typed, in its one cell, and makes no link, image, emphasis or math; its slashes are escaped too
    (Streamlit reads ":material/name:" as an icon)."""
    import pandas as pd

    from ui.draw.tables import markdown_table

    md = markdown_table(pd.DataFrame({"key": [word, "b"]}), hide_index=True)
    cells, out = _rendered_cells(md)
    assert [row[0] for row in cells] == ["key", word, "b"], out
    assert not re.search(r"<(?!/?(table|thead|tbody|tr|th|td)\b)", out), out
    assert ":material/" not in md and "$x$" not in md


@given(
    x=hst.floats(allow_nan=True, allow_infinity=True) | hst.floats(min_value=-2e4, max_value=2e4),
    digits=hst.integers(1, 6),
)
def test_one_number_reads_as_it_does_among_many(x, digits):
    """fmt's scalar path (sentences) and fmt_arrow (tables, map cells) write every number alike."""
    assert fmt(x, digits) == fmt_arrow([x], digits)[0].as_py()


def _tooltip_fields(spec: dict) -> list[dict]:
    """Every tooltip entry of a Vega-Lite spec, its layers' included."""
    found = []
    for part in [spec, *spec.get("layer", [])]:
        tip = part.get("encoding", {}).get("tooltip", [])
        found += [t if isinstance(t, dict) else {"field": t.split(":")[0]} for t in tip]
    return found


def test_bar_and_line_tooltips_write_numbers_with_the_one_formatter():
    """A bar chart's tooltip (and the head view's, and the per-head bars' label) shows the value as the page's
    sentences and tables write it: a text field made by ui.text.fmt, never a Vega number format (".4f" wrote 0.9975
    where the sentence wrote 0.997)."""
    import pandas as pd
    from streamlit import dataframe_util

    from ui.draw.charts import bar_chart
    from ui.draw.vega_parts import per_head_bars
    from ui.lessons.real_model.head_view import head_view_chart

    values = np.array([0.99746, 0.0012345, 0.0013055])
    spec = bar_chart(values, ["a", "b", "c"], value_name="weight")
    tips = _tooltip_fields(spec)
    assert not any("format" in t for t in tips)
    field = next(t["field"] for t in tips if t.get("title") == "weight")
    rows = dataframe_util.convert_arrow_bytes_to_pandas_df(spec["datasets"][spec["data"]["name"]])
    assert list(rows[field]) == fmt_all(values) == ["0.997", "0.00123", "0.00131"]

    bars, data = per_head_bars(values, "per head", "weight")
    tips = _tooltip_fields(bars)
    assert not any("format" in t for t in tips)
    assert [data[t["field"]] for t in tips if t.get("title") == "weight"] == [fmt_all(values)]
    label = bars["layer"][1]["encoding"]["text"]
    assert "format" not in label and data[label["field"]] == fmt_all(values)

    weights = np.array([[0.99746, 0.00254], [0.5, 0.5]])
    head = head_view_chart(weights, ["x", "y"]).to_dict()
    tips = [t for layer in head["layer"] for t in _tooltip_fields(layer)]
    assert tips and not any("format" in t for t in tips)
    shown = pd.concat([pd.DataFrame(v) for v in head["datasets"].values()])
    assert sorted(shown["weight"].dropna()) == sorted(fmt_all([0.99746, 0.5, 0.5]))


@pytest.mark.parametrize(
    "cfg",
    [
        WhatIf(temperature=0.3),
        WhatIf(scaled=False, temperature=2.5, mask="causal"),
        WhatIf(seq_len=12, mask="causal+padding", pad_count=3, temperature=0.1, n_heads=2),
    ],
)
def test_the_logits_spread_is_the_raw_spread_times_the_factor(cfg):
    """cached_logit_std computes the spread once per input and mask and scales it for the temperature and the
    scaling: equal to logit_std computed for the setting itself."""
    from attention_core.readout import logit_std
    from ui.compute import cached_logit_std, cached_run

    run = cached_run(cfg)
    direct = logit_std(run.q, run.k, scaled=cfg.scaled, temperature=cfg.temperature, mask=run.mask)
    np.testing.assert_allclose(cached_logit_std(cfg), direct, rtol=1e-12)
