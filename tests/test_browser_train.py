"""The Train page in headless Chromium: the ready experiment and live training load with no error element,
nothing reaches past the window's right edge, and Play trains in the browser (the fragment redraws itself).
Screenshots at 1280x720 and 1400x1000 are saved under the test's temporary folder."""

import re

import pytest

from harness.server import wait_for_app
from tests.page_pool import borrowed_page, load_app
from tests.test_browser import CHART_WARNINGS, assert_no_errors, horizontal_overflow

pytestmark = pytest.mark.browser
# Each Vega chart of the page: its title, its plot's height (the grid lines' extent), for each axis the closest two
# labels centre to centre over the font size (1: a line apart; a label pushed onto its neighbour reads about 0.5),
# and the text marks that cover one another. Labels in a hidden tab have no box and are left out.
MEASURE_CHARTS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => {
  const svg = c.querySelector('svg');
  const title = (c.querySelector('.role-title-text') || {}).textContent || '';
  if (!svg) return {title, svg: false};
  const grids = [...svg.querySelectorAll('.role-axis-grid')].map(g => g.getBoundingClientRect().height);
  // the closest two labels of an axis, centre to centre along the axis, over the font size (1 = a line apart)
  const gaps = [...svg.querySelectorAll('.role-axis')].map(ax => {
    const ts = [...ax.querySelectorAll('.role-axis-label text')].filter(t => t.textContent && t.getBoundingClientRect().width > 0);
    if (ts.length < 2) return null;
    const cs = ts.map(t => { const r = t.getBoundingClientRect(); return [(r.left + r.right) / 2, (r.top + r.bottom) / 2]; });
    const vertical = Math.abs(cs[0][0] - cs[cs.length - 1][0]) < Math.abs(cs[0][1] - cs[cs.length - 1][1]);
    const along = cs.map(p => vertical ? p[1] : p[0]).sort((a, b) => a - b);
    const font = parseFloat(getComputedStyle(ts[0]).fontSize);
    let gap = Infinity;
    for (let i = 1; i < along.length; i++) gap = Math.min(gap, along[i] - along[i - 1]);
    return +(gap / font).toFixed(2);
  }).filter(g => g !== null);
  const marks = [...svg.querySelectorAll('.mark-text.role-mark text')].map(t => { const r = t.getBoundingClientRect(); return {t: t.textContent, r}; });
  let pile = [];
  for (let a = 0; a < marks.length; a++) for (let b = a + 1; b < marks.length; b++) {
    const p = marks[a].r, q = marks[b].r;
    const w = Math.min(p.right, q.right) - Math.max(p.left, q.left), h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
    if (w > 1 && h > 3) pile.push(marks[a].t + '/' + marks[b].t);
  }
  return {title, plot: Math.round(Math.max(0, ...grids)), gaps, pile: pile.slice(0, 5), nmarks: marks.length};
})"""
URL = "/Train"
LIVE = "?mode=live&task=previous&layers=1&heads=2&d_model=16&batch=16&steps=200&context=16&vocab=16"


@pytest.mark.parametrize("size", [(1280, 720), (1400, 1000)])
@pytest.mark.parametrize("query", ["", LIVE])
def test_train_page_loads_without_errors(browser_and_base, size, query, tmp_path):
    browser, base = browser_and_base
    with borrowed_page(browser, viewport={"width": size[0], "height": size[1]}) as page:
        console = []
        page.on("console", lambda m: console.append((m.type, m.text)))
        load_app(page, base + URL + query, lambda ms: wait_for_app(page, timeout_ms=max(ms, 240000)))
        page.screenshot(path=str(tmp_path / f"train{'_live' if query else ''}_{size[0]}x{size[1]}.png"), full_page=True)
        assert_no_errors(page)
        assert page.get_by_text("Every head on the probe at step").count() >= 1
        # the slider's visually hidden range input sits under its thumb, which starts at the last step
        hidden_ranges = page.evaluate("""() => Array.from(document.querySelectorAll(
            '[data-testid="stMainBlockContainer"] input[type=range]')).filter(
            e => e.getBoundingClientRect().right > window.innerWidth + 1).length""")
        overflow = horizontal_overflow(page)
        inputs = [o for o in overflow if o.startswith("INPUT")]
        assert len(inputs) <= hidden_ranges and len(overflow) == len(inputs), overflow
        warnings = [t for kind, t in console if kind == "warning" and any(w in t for w in CHART_WARNINGS)]
        assert warnings == []
        charts = page.evaluate(MEASURE_CHARTS)
        lessons = [c for c in charts if re.match(r"(Loss|Accuracy|.* score of every head)", c["title"])]
        assert len(lessons) >= 3 and all(c["plot"] >= 200 for c in lessons), lessons  # the cliff is seen
        for c in charts:  # labels never pile up: every axis label a line from the next, no text mark on another
            assert all(g >= 0.8 for g in c["gaps"]) and c["pile"] == [], c


def test_play_trains_in_the_browser(browser_and_base, tmp_path):
    browser, base = browser_and_base
    with borrowed_page(browser, viewport={"width": 1400, "height": 1000}) as page:
        load_app(page, base + URL + LIVE, lambda ms: wait_for_app(page, timeout_ms=max(ms, 240000)))
        page.get_by_role("button", name="▶ Play").click()
        page.wait_for_function(
            "() => /Step ([1-9][0-9]*)\\*?\\*? of/.test(document.body.innerText) || "
            "/Step [1-9][0-9]* of/.test(document.body.innerText)",
            timeout=240000,
        )
        text = page.inner_text("body")
        step = int(re.search(r"Step (\d+) of", text).group(1))
        assert step > 0
        assert "step=" in page.url
        assert_no_errors(page)
        page.get_by_role("button", name="⏸ Pause").click()
        wait_for_app(page, timeout_ms=240000)
        page.screenshot(path=str(tmp_path / "train_live_played.png"), full_page=True)
