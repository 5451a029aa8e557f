"""Accessibility without a browser (issue 25): the theme's contrast, the page-wide stylesheet, the text alternatives
of charts and images (they say what is drawn for the setting on screen, from the numbers the sentences use, and
change with it), hatched masked cells and readable numbers in the server's images.

The browser side (axe-core on every page, the keyboard, colour-vision simulation) is tests/test_browser_a11y.py.
"""

import io
import json
import re
import tomllib

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.apptest_util import ROOT, app, heatmaps, run_ok, texts
from ui.draw.chart_text import describe_spec
from ui.draw.images import _LEVELS, BLANK, HATCH, _ink, _luminance, heatmap_png, lut


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float64)


def test_the_theme_reaches_aa_contrast_for_body_text_captions_and_the_primary_colour():
    """Streamlit draws captions, help text and slider ends in textColor at 60% opacity (its ``fadedText60``), and
    the primary colour as text (a slider's value): each must reach 4.5:1 on the page and on the sidebar's
    background. The classroom sees the app without the developer toolbar."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    theme = config["theme"]
    text, primary = _rgb(theme["textColor"]), _rgb(theme["primaryColor"])
    for background in (_rgb(theme["backgroundColor"]), _rgb(theme["secondaryBackgroundColor"])):
        caption = 0.6 * text + 0.4 * background
        assert _contrast(text, background) >= 4.5
        assert _contrast(caption, background) >= 4.5, (caption, background)
        assert _contrast(primary, background) >= 4.5
    assert config["client"]["toolbarMode"] == "minimal"


def test_the_page_stylesheet_is_sent_whole_on_every_page():
    """ui/skeleton/a11y.css goes out in a style-only st.html on every page's top; Streamlit's sanitiser drops a style
    element whose text holds an angle bracket (seen in Chromium: a comment naming an HTML tag removed it all)."""
    from ui.skeleton.page import A11Y_CSS

    css = (ROOT / "ui" / "skeleton" / "a11y.css").read_text()
    assert "<" not in css and ">" not in css
    for path in ("streamlit_app.py", "pages/Masks.py"):
        at = run_ok(app(path))
        assert [h.proto.body for h in at.get("html")].count(A11Y_CSS) == 1


def test_the_grid_or_its_text_twin_is_chosen_at_the_width_the_tables_module_names():
    """ui/skeleton/a11y.css hides a grid's text twin from GRID_MIN_PAGE_PX of page width on and the grid below it, by
    a container query on the page (the sidebar's room counted), with no width where both or neither show."""
    from ui.draw.tables import GRID_MIN_PAGE_PX

    css = (ROOT / "ui" / "skeleton" / "a11y.css").read_text()
    assert '[data-testid="stMainBlockContainer"] { container: ae-page / inline-size; }' in css
    below = re.findall(r"@container ae-page \(max-width: ([\d.]+)px\)", css)
    above = re.findall(r"@container ae-page \(min-width: ([\d.]+)px\)", css)
    assert above == [str(GRID_MIN_PAGE_PX)]
    assert below and {float(b) for b in below} == {GRID_MIN_PAGE_PX - 0.02}
    assert "@media (min-width: 1024px)" not in css and "max-width: 1023.98px" not in css


def _alts(at) -> list[str]:
    return [img.alt for el in at.get("image") for img in el.proto.imgs]


def _descriptions(at) -> list[str]:
    """The text alternatives of the page's charts: every heatmap's drawn on a canvas (its canvas's aria-label), then
    every Vega-Lite chart's (the spec's description, which Vega makes the chart's aria-label: lines, bars)."""
    maps = [h["description"] for h in heatmaps(at)]
    return maps + [json.loads(el.proto.spec).get("description", "") for el in at.get("vega_lite_chart")]


def test_the_home_pages_image_says_the_sentences_numbers():
    at = run_ok(app("streamlit_app.py"))
    (alt,) = _alts(at)
    shown = re.search(r"puts \*\*(0\.\d{4})\*\* of its weight on B3 and only (0\.\d{4})", texts(at))
    assert shown and f"puts {shown[1]} of its weight on B3 and {shown[2]} on each A" in alt


@pytest.mark.parametrize("temperature", ["0.1", "10"])
def test_the_head_grid_images_text_alternative_is_the_captions_numbers_and_follows_the_setting(temperature):
    """At 128 tokens x 8 heads the heads are one image; its alt text names the sharpest head and its mean largest
    weight exactly as the caption under it does, and both move with the temperature."""
    at = run_ok(
        app("pages/Playground.py", {"seq_len": "128", "d_model": "512", "heads": "8", "temperature": temperature})
    )
    alt = next(a for a in _alts(at) if "attention maps, one per head" in a)
    caption = re.search(r"Head (\d+) is the sharpest: its rows put on average ([\d.e-]+) of their weight", texts(at))
    assert caption, texts(at)[:500]
    assert f"the sharpest is head {caption[1]}, whose rows put on average {caption[2]} of their weight" in alt
    assert "8 attention maps" in alt and "128 x 128 weights each" in alt


def test_text_alternatives_change_with_the_setting():
    """The same page at two settings: every map's description and every image's alt text follow what is drawn."""
    low = run_ok(app("pages/Multi-head.py", {"temperature": "0.1", "seq_len": "6"}))
    high = run_ok(app("pages/Multi-head.py", {"temperature": "10", "seq_len": "6"}))
    d_low, d_high = _descriptions(low), _descriptions(high)
    assert d_low and all(d_low) and all(d_high)
    assert d_low != d_high
    head_maps = [d for d in d_low if d.startswith("head 1:")]
    assert head_maps and "6 x 6 map of weight (query by key)" in head_maps[0]
    big = run_ok(app("pages/Transformer_block.py", {"seq_len": "64", "d_model": "512", "seed": "1"}))
    other = run_ok(app("pages/Transformer_block.py", {"seq_len": "64", "d_model": "512", "seed": "2"}))
    assert _alts(big) and all(_alts(big)) and _alts(big) != _alts(other)


def test_line_charts_describe_their_rows_for_the_setting():
    """Charts without a map of their own (sweeps, curves) are described from their rows (ui/draw/chart_text.py): the
    Softmax saturation sweeps name the reader's setting, and its values move with the temperature."""
    cool = _descriptions(run_ok(app("pages/Softmax_saturation.py", {"temperature": "0.5"})))
    warm = _descriptions(run_ok(app("pages/Softmax_saturation.py", {"temperature": "4"})))
    sweep = [d for d in cool if d.startswith("mean largest weight of a row")]
    assert sweep and "scaled by 1/√d_k (your setting):" in sweep[0] and " at 1024" in sweep[0]
    assert all(cool) and cool != warm


def test_describe_spec_reads_lines_and_bars_from_their_rows():
    rows = pd.DataFrame({"d_k": [1, 4, 16, 1, 4, 16], "v": [0.5, 0.7, 0.9, 0.5, 0.4, 0.2], "s": list("aaabbb")})
    lines = {"title": "T", "mark": "line", "data": {"name": "r"},
             "encoding": {"x": {"field": "d_k", "type": "quantitative"}, "y": {"field": "v", "title": "weight"},
                          "color": {"field": "s", "type": "nominal"}}}  # fmt: skip
    assert describe_spec(lines, {"r": rows}) == (
        "T: weight against d_k, 2 lines. a: 0.5 at 1, 0.9 at 16, largest 0.9 at 16; b: 0.5 at 1, 0.2 at 16, "
        "largest 0.5 at 1."
    )
    bars = {"mark": "bar", "encoding": {"x": {"field": "s", "type": "nominal"}, "y": {"field": "v"}}}
    assert describe_spec(bars, {"r": rows}) == "6 bars of v by s; the largest, 0.9, at a; the smallest, 0.2, at b."


def test_masked_cells_of_an_image_are_hatched_not_only_grey():
    """A causal map as an image: every masked cell is grey crossed by darker diagonal lines (the pattern, not the
    grey, tells it from a weight of 1 with tritanopia); no unmasked cell carries either grey."""
    T = 8
    m = np.where(np.tril(np.ones((T, T), dtype=bool)), 1.0, np.nan)  # (T, T): weight 1 where allowed
    png, _ = heatmap_png(m, 0.0, 1.0)
    img = Image.open(io.BytesIO(png))
    idx = np.asarray(img)  # (h, w) palette indices
    cell = idx.shape[0] // T
    masked = np.kron(np.triu(np.ones((T, T), dtype=bool), 1), np.ones((cell, cell), dtype=bool))
    assert set(np.unique(idx[masked])) == {_LEVELS, _LEVELS + 1}  # BLANK and HATCH
    assert not np.isin(idx[~masked], [_LEVELS, _LEVELS + 1]).any()
    palette = np.asarray(img.getpalette()[: 3 * 256]).reshape(256, 3)
    assert tuple(palette[_LEVELS]) == BLANK and tuple(palette[_LEVELS + 1]) == HATCH


def test_numbers_written_on_cells_reach_aa_contrast_on_every_colour():
    """The home page's labelled map writes each weight in black or white, whichever contrasts more: at least
    4.5:1 on every colour of the scale (the old rule, white below 0.6, gave 3.9:1 around the middle)."""
    worst = min(_contrast(np.array(_ink(c), dtype=float), c.astype(float)) for c in lut("viridis"))
    assert worst >= 4.5


def test_a_masked_maps_text_alternative_counts_its_masked_cells():
    """Colour is not the only sign of a masked cell: the text alternative counts them (a causal 6 x 6 map blanks the
    15 cells above its diagonal)."""
    descriptions = _descriptions(run_ok(app("pages/Masks.py", {"seq_len": "6", "mask": "causal"})))
    assert any("15 of 36 cells masked" in d for d in descriptions), descriptions
