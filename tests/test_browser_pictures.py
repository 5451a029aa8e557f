"""Pictures and tables in headless Chromium, measured by their boxes: what a reader must read is whole and uncovered.

- Implementations: every implementation's name (the first check question asks which of them return no weights) is
  visible text, whole, at 1280x720 and 1366x768 (Streamlit's grid painted them on a canvas and cut them at its
  column's width).
- The toolbar Streamlit shows over a chart, an image or a grid (its data, download, full screen) covers no heading
  and no text: on a page reached by the previous page's "next" link, where the pointer rests after the click (it
  sat over Softmax saturation's and Positional encoding's first heading), and over every element that has one.
"""

import json

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
        assert frames.count() >= 4
        covered = []
        for i in range(frames.count()):
            frame = frames.nth(i)
            frame.scroll_into_view_if_needed()
            frame.hover(position={"x": 20, "y": 20})
            page.wait_for_timeout(400)
            assert page.evaluate(SHOWN_TOOLBARS) == 1
            covered += page.evaluate(COVERED_TEXT)
        assert covered == []


# hover one cell of the Vega heatmap titled ``title``, by its place among the rect marks (Vega draws them in the
# data's order: row by row); returns the tooltip's text
def _hover_cell(page, title: str, index: int) -> str:
    chart = page.locator('[data-testid="stVegaLiteChart"]').filter(
        has=page.locator(f"g[aria-label=\"Title text '{title}'\"]")
    )
    chart.scroll_into_view_if_needed()
    cell = chart.locator("g.mark-rect path").nth(index)
    cell.hover(force=True)
    tip = page.locator("#vg-tooltip-element")
    tip.wait_for(state="visible", timeout=10000)
    return tip.inner_text()


def _cells_drawn(page, title: str, nth: int = 0):
    """The n-th heatmap titled ``title``: its cells' paths and their fill colours (in data order)."""
    chart = (
        page.locator('[data-testid="stVegaLiteChart"]')
        .filter(has=page.locator(f"g[aria-label=\"Title text '{title}'\"]"))
        .nth(nth)
    )
    chart.scroll_into_view_if_needed()
    cells = chart.locator("g.mark-rect.role-mark path")  # the cells, not the legend's gradient
    return chart, cells, cells.evaluate_all("ps => ps.map(p => p.getAttribute('fill'))")


def _rgb(fill: str) -> tuple[int, int, int]:
    fill = fill.strip()
    if fill.startswith("#"):
        return tuple(int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(int(float(x)) for x in fill[fill.index("(") + 1 : fill.index(")")].split(",")[:3])


def test_a_heatmap_with_blank_cells_draws_the_others_where_they_belong_coloured_by_their_value(browser_and_base):
    """A heatmap's cells travel as one row of texts, "" for a blank one; the spec splits them and gives each cell its
    row and column from its place and its colour from its text (ui.draw.charts._cell_transform). On Masks, each
    mask's "masked scores" map draws exactly its allowed cells; hovering the k-th drawn cell names the k-th allowed
    (query, key) in reading order with its score as the page writes it; the largest score is red and the smallest
    blue (a value the browser failed to read would leave its cell undrawn or grey)."""
    from harness.apptest import app
    from ui.compute import cached_mask_lab
    from ui.text import fmt

    at = app("pages/Masks.py")
    at.run()
    cfg = at.session_state["whatif"]
    lab = cached_mask_lab(cfg, 0)
    tokens = [str(t) for t in run_whatif(cfg.replace(mask="none")).tokens]
    browser, base = browser_and_base
    with opened(browser, base + "/Masks", (1400, 1000)) as (page, _):
        assert_no_errors(page)
        for n, r in enumerate(lab.runs):
            chart, cells, fills = _cells_drawn(page, "masked scores (blank = blocked)", n)
            allowed = list(zip(*np.nonzero(r.mask)))  # row-major, as the cells travel
            assert len(fills) == len(allowed), (r.name, len(fills), len(allowed))
            for k in (0, len(allowed) // 2, len(allowed) - 1):
                cells.nth(k).hover(force=True)
                tip = page.locator("#vg-tooltip-element")
                tip.wait_for(state="visible", timeout=10000)
                i, j = allowed[k]
                words = tip.inner_text().split()
                assert words[-1] == fmt(float(lab.logits[i, j])), (r.name, k, words)
                assert tokens[i] in words and tokens[j] in words, (r.name, k, words)
            scores = np.array([lab.logits[i, j] for i, j in allowed])
            hi, lo = _rgb(fills[int(np.argmax(scores))]), _rgb(fills[int(np.argmin(scores))])
            assert hi[0] > hi[2] and lo[2] > lo[0], (
                r.name,
                fills[int(np.argmax(scores))],
                fills[int(np.argmin(scores))],
            )


def test_a_stretched_maps_colours_keep_the_weights_apart_that_three_digits_would_merge(browser_and_base):
    """On a stretched scale a near-uniform map's weights differ in the fourth digit: the colour then comes from a
    second row of texts with the digits the scale needs (ui.draw.charts.colour_digits). Cross-attention at
    temperature 10, the scales stretched: the browser draws more distinct colours than the map has distinct
    3-digit texts (the tooltips' numbers), which it could not if the colour came from those texts."""
    from harness.apptest import app
    from tests.apptest_util import chart_datasets

    at = app("pages/Cross-attention.py", {"temperature": "10"})
    at.run()
    next(t for t in at.sidebar.get("toggle") if t.label == "stretch the colour scales").set_value(True)
    at.run()
    chart = next(c for c in at.get("vega_lite_chart") if "head 1: " in json.loads(c.proto.spec).get("title", ""))
    title = json.loads(chart.proto.spec)["title"]
    assert any(t.get("flatten") == ["t", "u"] for t in json.loads(chart.proto.spec)["transform"]), "not precise"
    texts = chart_datasets(chart)[0]["t"]
    browser, base = browser_and_base
    with opened(browser, base + "/Cross-attention?temperature=10", (1400, 1000)) as (page, _):
        assert_no_errors(page)
        page.get_by_text("stretch the colour scales").click()
        page.wait_for_timeout(500)
        wait_for_app(page)
        page.wait_for_function(
            "t => [...document.querySelectorAll('g[aria-label]')].some(g => (g.getAttribute('aria-label') || '')"
            ".includes(t)) && document.body.innerText.includes('stretched')",
            arg=title,
            timeout=30000,
        )
        _, _, fills = _cells_drawn(page, title)
        assert len(fills) == len(texts)
        assert len(set(fills)) > len(set(texts)), (len(set(fills)), len(set(texts)))


def test_a_heatmaps_tooltip_names_its_cell_and_writes_its_value_as_the_page_does(browser_and_base):
    """A heatmap's cells travel as their texts; each cell's row and column come from its place and the row and
    column labels are looked up in the spec by index (ui.draw.charts._skeleton). Hovering a cell of the Playground's
    X and Z maps (static charts, at the default setting: with the live maps off, else the browser draws them) shows
    that cell's token, its dimension and its value as ui.text.fmt writes it."""
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
            for r, c in ((0, 0), (run.T - 1, d - 1), (3, 17)):
                text = _hover_cell(page, title, r * d + c)
                words = text.split()  # "token t1 dim 1 x 1.12": each field's name, then its value
                shown = dict(zip(words[::2], words[1::2]))
                value = "x" if title == "X input" else "z"
                expected = {"token": run.tokens[r], "dim": str(c + 1), value: fmt(float(m[r, c]))}
                assert shown == expected, (title, r, c, text)
