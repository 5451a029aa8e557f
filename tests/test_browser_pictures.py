"""Pictures and tables in headless Chromium, measured by their boxes: what a reader must read is whole and uncovered.

- Implementations: every implementation's name (the first check question asks which of them return no weights) is
  visible text, whole, at 1280x720 and 1366x768 (Streamlit's grid painted them on a canvas and cut them at its
  column's width).
- The toolbar Streamlit shows over a chart, an image or a grid (its data, download, full screen) covers no heading
  and no text: on a page reached by the previous page's "next" link, where the pointer rests after the click (it
  sat over Softmax saturation's and Positional encoding's first heading), and over every element that has one.
"""

import json
import math

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif
from attention_core.implementations import compare_implementations
from harness.server import wait_for_address, wait_for_app
from tests.test_browser import assert_no_errors, opened, page_url
from ui.skeleton.registry import PAGES

pytestmark = pytest.mark.browser
DESKTOPS = [(1280, 720), (1366, 768)]

# the text a reader sees of every table drawn as text, cell by cell: its text (without the zero-width break points),
# whether it is shown (not display: none), and whether it fits its cell and the window
TABLE_CELLS = """() => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] [data-testid="stTable"] td')]
    .map(td => { const r = td.getBoundingClientRect();
        return {text: td.innerText.replaceAll('\\u200b', '').trim(), shown: td.checkVisibility() && r.width > 0,
                fits: td.scrollWidth <= td.clientWidth + 1 && r.right <= window.innerWidth + 1}; })"""


@pytest.mark.parametrize("size", DESKTOPS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_implementations_names_are_whole_at_desktop_sizes(browser_and_base, size):
    browser, base = browser_and_base
    run = run_whatif(WhatIf())
    rows = compare_implementations(run.x, *run.w, n_heads=4, mask=run.mask, scaled=True, temperature=1.0, repeat=1)
    with opened(browser, base + "/Implementations", size) as (page, _):
        assert_no_errors(page)
        cells = [c for c in page.evaluate(TABLE_CELLS) if c["shown"]]
        for r in rows:
            found = [c for c in cells if c["text"] == r.name]
            assert found, f"{r.name!r} is not shown whole at {size}: {[c['text'] for c in cells][:10]}"
            assert all(c["fits"] for c in found), f"{r.name!r} is cut at {size}"
        assert all(c["fits"] for c in cells), [c["text"] for c in cells if not c["fits"]]


# Every toolbar shown (opacity over a half) and every text the main area shows (headings, paragraphs, list items,
# formulas, captions, widget labels, table cells, a chart's SVG text) whose text's box (its element's padding left
# out) overlaps it by more than a pixel.
COVERED_TEXT = """() => {
    const TEXT = 'h1, h2, h3, h4, h5, h6, p, li, label, .katex, [data-testid="stCaptionContainer"], td, th, svg text';
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const texts = [...main.querySelectorAll(TEXT)].filter(e => !e.closest('[data-testid="stElementToolbar"]')
        && e.checkVisibility() && (e.innerText || e.textContent || '').trim());
    const out = [];
    for (const bar of main.querySelectorAll('[data-testid="stElementToolbar"]')) {
        if (parseFloat(getComputedStyle(bar).opacity) < 0.5) continue;
        const b = bar.getBoundingClientRect();
        for (const t of texts) {
            const range = document.createRange();  // the text itself, not its element's padding
            range.selectNodeContents(t);
            const r = range.getBoundingClientRect();
            const w = Math.min(b.right, r.right) - Math.max(b.left, r.left);
            const h = Math.min(b.bottom, r.bottom) - Math.max(b.top, r.top);
            if (w > 1 && h > 1)
                out.push(`${t.tagName.toLowerCase()} "${(t.innerText || t.textContent).trim().slice(0, 50)}" under `
                         + `the toolbar at (${Math.round(b.left)}, ${Math.round(b.top)})`);
        }
    }
    return out;
}"""
SHOWN_TOOLBARS = """() => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] [data-testid="stElementToolbar"]')]
    .filter(b => parseFloat(getComputedStyle(b).opacity) >= 0.5).length"""


def _previous(path: str) -> str:
    i = [p.path for p in PAGES].index(path)
    return "/" if i == 0 else page_url(PAGES[i - 1].path)


@pytest.mark.parametrize("size", DESKTOPS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("path", ["pages/Softmax_saturation.py", "pages/Positional_encoding.py"])
def test_a_charts_toolbar_covers_no_text(browser_and_base, path, size):
    browser, base = browser_and_base
    label = next(p.label for p in PAGES if p.path == path)
    with opened(browser, base + _previous(path), size) as (page, _):
        # as a reader goes on: the previous page's "next" link, clicked with the pointer, which then rests there
        link = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stPageLink"] a', has_text=label).last
        link.scroll_into_view_if_needed()
        link.click()
        wait_for_address(page, f"**{page_url(path)}*")
        wait_for_app(page)
        page.wait_for_timeout(500)  # the toolbar fades in (150 ms after 100 ms)
        assert_no_errors(page)
        assert page.evaluate(COVERED_TEXT) == []
        # and over every element that has a toolbar, as the pointer moves over it
        frames = page.locator(
            '[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]:has([data-testid="stElementToolbar"])'
        )
        assert frames.count() >= 2  # Vega charts (the heatmaps, drawn on a canvas, have no toolbar)
        covered = []
        for i in range(frames.count()):
            frame = frames.nth(i)
            frame.scroll_into_view_if_needed()
            frame.hover(position={"x": 20, "y": 20})
            page.wait_for_timeout(400)
            assert page.evaluate(SHOWN_TOOLBARS) == 1
            covered += page.evaluate(COVERED_TEXT)
        assert covered == []


# A heatmap drawn on a canvas (ui/draw/heatmap.js) lives in its component's shadow root: locators pierce it.
def _map(page, title: str, nth: int = 0):
    """The n-th canvas heatmap titled ``title``, scrolled into view, and its canvas."""
    fig = page.locator("figure.ae-hm").filter(has=page.locator(f"figcaption.ae-hm-title:text-is({json.dumps(title)})"))
    fig = fig.nth(nth)
    fig.wait_for(timeout=30000)
    fig.scroll_into_view_if_needed()
    return fig, fig.locator("canvas.ae-hm-cells")


# every cell's colour as drawn, [r, g, b, alpha] at its centre, row by row (alpha 0: not drawn)
CELL_COLOURS = """(c, [nr, nc]) => { const ctx = c.getContext('2d'); const out = [];
    for (let i = 0; i < nr; i++) for (let j = 0; j < nc; j++)
        out.push([...ctx.getImageData(Math.floor((j + 0.5) * c.width / nc), Math.floor((i + 0.5) * c.height / nr),
                                      1, 1).data]);
    return out; }"""


def _cells_drawn(page, title: str, shape, nth: int = 0) -> list[list[int]]:
    _, canvas = _map(page, title, nth)
    return canvas.evaluate(CELL_COLOURS, list(shape))


def _hover_cell(page, title: str, i: int, j: int, shape, nth: int = 0) -> str:
    """Hover cell (i, j) of the map titled ``title``; returns the tooltip's text."""
    fig, canvas = _map(page, title, nth)
    box = canvas.bounding_box()
    canvas.hover(position={"x": (j + 0.5) * box["width"] / shape[1], "y": (i + 0.5) * box["height"] / shape[0]})
    tip = fig.locator(".ae-hm-tip")
    tip.wait_for(state="visible", timeout=10000)
    return tip.inner_text()


def test_a_heatmap_with_blank_cells_draws_the_others_where_they_belong_coloured_by_their_value(browser_and_base):
    """A heatmap's cells travel as their texts, "" for a blank one (ui.draw.canvas_maps.heatmap_data); heatmap.js
    gives each cell its row and column from its place and its colour from its text. On Masks, each mask's "masked
    scores" map draws exactly its allowed cells; hovering an allowed cell names its query and key with its score as
    the page writes it, and a blocked one shows nothing; the largest score is red and the smallest blue."""
    from harness.apptest import app
    from ui.compute import cached_mask_lab
    from ui.text import fmt

    at = app("pages/Masks.py")
    at.run()
    cfg = at.session_state["whatif"]
    lab = cached_mask_lab(cfg, 0)
    tokens = [str(t) for t in run_whatif(cfg.replace(mask="none")).tokens]
    browser, base = browser_and_base
    title = "masked scores (blank = blocked)"
    with opened(browser, base + "/Masks", (1400, 1000)) as (page, _):
        assert_no_errors(page)
        for n, r in enumerate(lab.runs):
            shape = r.mask.shape
            colours = _cells_drawn(page, title, shape, n)
            drawn = np.array([c[3] == 255 for c in colours]).reshape(shape)
            assert (drawn == r.mask).all() and not any(0 < c[3] < 255 for c in colours), r.name
            allowed = list(zip(*np.nonzero(r.mask)))
            for i, j in (allowed[0], allowed[len(allowed) // 2], allowed[-1]):
                lines = _hover_cell(page, title, i, j, shape, n).splitlines()
                assert lines == [f"query {tokens[i]}", f"key {tokens[j]}", f"score {fmt(float(lab.logits[i, j]))}"]
            blocked = list(zip(*np.nonzero(~r.mask)))
            if blocked:
                fig, canvas = _map(page, title, n)
                i, j = blocked[0]
                box = canvas.bounding_box()
                canvas.hover(
                    position={"x": (j + 0.5) * box["width"] / shape[1], "y": (i + 0.5) * box["height"] / shape[0]}
                )
                page.wait_for_timeout(200)
                assert not fig.locator(".ae-hm-tip").is_visible(), (r.name, "a blocked cell has no reading")
            scores = np.array([lab.logits[i, j] for i, j in allowed])
            hi = colours[int(np.ravel_multi_index(allowed[int(np.argmax(scores))], shape))]
            lo = colours[int(np.ravel_multi_index(allowed[int(np.argmin(scores))], shape))]
            assert hi[0] > hi[2] and lo[2] > lo[0], (r.name, hi, lo)
        # every map drawn: none still waits for the module (ui/draw/heatmap_mount.js)
        assert page.locator(".ae-hm-wait").count() == 0  # a mask and its masked scores a run (the weights are live)
        assert page.locator("figure.ae-hm").count() == 2 * len(lab.runs)


def test_every_cell_is_the_colour_its_number_has_on_the_servers_colour_table(browser_and_base):
    """Parity: each cell of a viridis map (the Playground's weights, live maps off) and of a diverging one (its Z
    output) is exactly the colour Python puts at the cell's number (canvas_maps.scale_position on the lookup table
    of ui/draw/images.lut, the one the image maps and the live maps use)."""
    from harness.apptest import app
    from tests.apptest_util import heatmap_titled
    from ui.draw.canvas_maps import scale_position
    from ui.draw.images import lut
    from ui.session.state import LIVE_KEY

    at = app("pages/Playground.py")
    at.session_state[LIVE_KEY] = False
    at.run()
    browser, base = browser_and_base
    with opened(browser, base + "/Playground", (1400, 1000)) as (page, _):
        page.get_by_text("live maps (redraw").first.click()
        wait_for_app(page)
        assert_no_errors(page)
        for part in ("head 1", "Z output"):
            d = heatmap_titled(at, part)
            shape = (len(d["rows"]), len(d["cols"]))
            table = lut(d["scheme"])
            expected = [[0, 0, 0, 0]] * (shape[0] * shape[1])  # a blank cell is not drawn
            for r, c, v in zip(d["cells"]["r"], d["cells"]["c"], d["cells"]["v"]):
                at_ = scale_position(v, d["lo"], d["hi"], d["scheme"] == "diverging")
                expected[r * shape[1] + c] = [*map(int, table[math.floor(at_ * 255 + 0.5)]), 255]  # as JS rounds
            assert _cells_drawn(page, d["title"], shape) == expected, part


def test_a_stretched_maps_colours_keep_the_weights_apart_that_three_digits_would_merge(browser_and_base):
    """On a stretched scale a near-uniform map's weights differ in the fourth digit: the colour then comes from a
    second text of every cell with the digits the scale needs (ui.draw.canvas_maps.colour_digits). Cross-attention
    at temperature 10, the scales stretched: the browser draws more distinct colours than the map has distinct
    3-digit texts (the tooltips' numbers), which it could not if the colour came from those texts."""
    from harness.apptest import app
    from tests.apptest_util import heatmaps

    at = app("pages/Cross-attention.py", {"temperature": "10"})
    at.run()
    next(t for t in at.sidebar.get("toggle") if t.label == "stretch the colour scales").set_value(True)
    at.run()
    d = next(h for h in heatmaps(at) if "head 1: " in h["title"])
    assert "colour" in d, "not precise"
    texts = list(d["cells"]["t"])
    browser, base = browser_and_base
    with opened(browser, base + "/Cross-attention?temperature=10", (1400, 1000)) as (page, _):
        assert_no_errors(page)
        page.get_by_text("stretch the colour scales").click()
        page.wait_for_timeout(500)
        wait_for_app(page)
        page.locator("figure.ae-hm .ae-hm-xtitle", has_text="stretched").first.wait_for(timeout=30000)
        colours = _cells_drawn(page, d["title"], (len(d["rows"]), len(d["cols"])))
        assert len(colours) == len(texts)
        assert len({tuple(c) for c in colours}) > len(set(texts)), (len({tuple(c) for c in colours}), len(set(texts)))


def test_a_heatmaps_tooltip_names_its_cell_and_writes_its_value_as_the_page_does(browser_and_base):
    """Hovering a cell of the Playground's X and Z maps (static maps, at the default setting: with the live maps
    off, else the browser draws them) shows that cell's token, its dimension and its value as ui.text.fmt writes
    it; the keyboard reads the same cells (a focused map: the arrow keys move from cell to cell)."""
    from harness.server import wait_for_app
    from ui.text import fmt

    browser, base = browser_and_base
    run = run_whatif(WhatIf())
    with opened(browser, base + "/Playground", (1400, 1000)) as (page, _):
        page.get_by_text("live maps (redraw").first.click()
        wait_for_app(page)
        assert_no_errors(page)
        d = run.x.shape[1]
        for title, m in (("X input", run.x), ("Z output", run.output)):
            value = "x" if title == "X input" else "z"
            for r, c in ((0, 0), (run.T - 1, d - 1), (3, 17)):
                text = _hover_cell(page, title, r, c, m.shape)
                assert text.splitlines() == [f"token {run.tokens[r]}", f"dim {c + 1}", f"{value} {fmt(float(m[r, c]))}"]
            fig, canvas = _map(page, title)
            canvas.focus()
            for key in ("ArrowRight", "ArrowRight", "ArrowDown"):  # the first key reads the first cell
                page.keyboard.press(key)
            tip = fig.locator(".ae-hm-tip")
            assert tip.inner_text().splitlines() == [
                f"token {run.tokens[1]}",
                "dim 2",
                f"{value} {fmt(float(m[1, 1]))}",
            ]
            page.keyboard.press("Escape")
            assert not tip.is_visible()


MOUNT = """d => { const el = document.createElement('div'); document.body.appendChild(el);
    window.__attentionExplorerHeatmapMounts = [{component: {data: JSON.stringify(d), parentElement: el}}];
    window.__attentionExplorerHeatmapMount(); return document.querySelectorAll('canvas.ae-hm-cells').length; }"""


def test_the_module_colours_any_map_as_python_places_its_numbers(browser_and_base):
    """heatmap.js alone, in a blank page, on maps no page draws today: a diverging scale that is not symmetric about
    0 (white at 0, each side on its own half), one all above 0, numbers past the ends (clamped), blank cells and a
    text that is no number (not drawn). Every cell is the colour canvas_maps.scale_position puts its number at."""
    from ui.draw.canvas_maps import MODULE_JS, heatmap_data, read_cells, scale_position
    from ui.draw.images import lut

    rng = np.random.default_rng(3)
    cases = [
        ("viridis", (0.0, 1.0), rng.random((5, 7)) * 1.2 - 0.1),
        ("diverging", (-1.0, 3.0), rng.normal(size=(6, 4)) * 2),
        ("diverging", (0.5, 3.0), rng.random((3, 9)) * 4),
        ("diverging", (-2.0, 2.0), np.array([[-5.0, np.nan, 0.0], [np.inf, 1.0, 5.0]])),
    ]
    browser, _ = browser_and_base
    page = browser.new_page(viewport={"width": 800, "height": 600})
    try:
        page.set_content("<!doctype html><body></body>")
        page.add_script_tag(content=MODULE_JS, type="module")
        page.wait_for_function("() => !!window.__attentionExplorerHeatmapMount")
        for n, (scheme, domain, m) in enumerate(cases):
            blank = np.zeros(m.shape, bool)
            blank[0, -1] = True
            d = heatmap_data(
                m, [f"r{i}" for i in range(m.shape[0])], [f"c{j}" for j in range(m.shape[1])], title=f"case {n}",
                row_name="row", col_name="col", value="v", domain=domain, scheme=scheme, size=200, legend=True,
                note="", blank=blank, description=f"case {n}", group="g",
            )  # fmt: skip
            assert page.evaluate(MOUNT, d) == n + 1
            canvas = page.locator("canvas.ae-hm-cells").nth(n)
            drawn = canvas.evaluate(CELL_COLOURS, list(m.shape))
            _, values = read_cells(d)
            table = lut(scheme)
            expected = [
                [*map(int, table[math.floor(scale_position(v, *domain, scheme == "diverging") * 255 + 0.5)]), 255]
                if np.isfinite(v)
                else [0, 0, 0, 0]
                for v in values
            ]
            assert drawn == expected, (scheme, domain)
            assert canvas.get_attribute("aria-label") == f"case {n}"
    finally:
        page.close()
