"""Every device in the room: each page on a phone (390x844) and a tablet (768x1024), touch on, in Chromium; and
nothing cut on a large tablet (820 px) and a small laptop (1100 px) with the sidebar open.

- Nothing cut and nothing hidden sideways (tests/device_util.cut_elements, measured in the page): formulas break
  into lines, tables are text that wraps where the page is narrower than 760 px (ui/draw/tables.show_table), code wraps, tabs wrap, columns too
  narrow for their charts wrap, labels wrap instead of ending in an ellipsis (ui/skeleton/a11y.css).
- Chart text at least 11 px as drawn (tests/device_util.small_chart_text).
- axe-core finds nothing (WCAG 2.x A and AA, tests/a11y_util.assert_accessible), as at desktop sizes.
- The sidebar closes after a page is chosen in it (ui/skeleton/page_list.js); classroom mode hides a heading with what it
  hides; the live maps fit a phone, a tap reads a cell, a touch drag redraws them.

Screenshots of every page at both sizes land beside the others (pytest's temporary folder, ``screenshots/``).
"""

import contextlib
import re

import pytest

from harness.server import wait_for_address, wait_for_app
from tests.a11y_util import assert_accessible
from tests.apptest_util import PAGES
from tests.device_util import PHONE, TOUCH_SIZES, cut_elements, small_chart_text, touch_options
from tests.page_pool import borrowed_page, load_app
from tests.test_browser import LONG_PAGES, assert_no_errors, full_screenshot, page_url

pytestmark = pytest.mark.browser


@contextlib.contextmanager
def on_device(browser, url: str, size):
    """``url`` in a clean touch page of ``size`` (tests/page_pool.py: loaded once more if the machine's load kept it
    from drawing); yields the page."""
    with borrowed_page(browser, **touch_options(size)) as page:
        load_app(page, url)
        yield page


def _url(base: str, path: str) -> str:
    return base + ("/" if path == "streamlit_app.py" else page_url(path))


@pytest.mark.parametrize("size", TOUCH_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_every_page_fits_a_phone_and_a_tablet(browser_and_base, path, size, tmp_path_factory):
    browser, base = browser_and_base
    shots = tmp_path_factory.getbasetemp() / "screenshots"
    shots.mkdir(exist_ok=True)
    with on_device(browser, _url(base, path), size) as page:
        assert_no_errors(page)
        assert cut_elements(page) == []
        assert small_chart_text(page) == []
        full_screenshot(page, shots / f"{path.replace('/', '_')}_{size[0]}x{size[1]}_touch.png")
        assert_accessible(page, f"{path} at {size[0]}x{size[1]}, touch")  # axe-core, WCAG 2.x A and AA


# the sidebar is on screen (Streamlit 1.67 slides it out to the left when closed; it carries no aria-expanded)
SIDEBAR_SHOWN = """() => { const r = document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect();
    return r.width > 0 && r.right > 1; }"""

# Between the walks' sizes, with the sidebar open: a large tablet (820 px wide, a 520 px page beside the sidebar) and a
# small laptop (1100 px, a 640 px page). There Step by step's three weight grids scrolled sideways, the Playground's
# and Multi-head's grids hid their last columns, drop-downs cut "Llama-2-70B" and "head 1", and the Home page's link
# "15. Sinks and linear attention" ended in an ellipsis.
BETWEEN = {"820x1180_touch": touch_options((820, 1180)), "1100x800": {"viewport": {"width": 1100, "height": 800}}}


@pytest.mark.parametrize("options", BETWEEN.values(), ids=BETWEEN.keys())
def test_every_page_fits_between_a_tablet_and_a_laptop_with_the_sidebar_open(browser_and_base, options):
    browser, base = browser_and_base
    problems = []
    with borrowed_page(browser, **options) as page:
        for path in ["streamlit_app.py", *PAGES]:
            load_app(page, _url(base, path))
            assert_no_errors(page)
            assert page.evaluate(SIDEBAR_SHOWN), path
            problems += [f"{path}: cut {c}" for c in cut_elements(page)]
            problems += [f"{path}: small {c}" for c in small_chart_text(page)]
    assert problems == []


@pytest.mark.parametrize("size", [*TOUCH_SIZES, (1280, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_choosing_a_page_closes_the_sidebar_where_it_covers_the_page(browser_and_base, size):
    """The sidebar covers most of a phone or a tablet: a tap on a page in it opens that page with the sidebar
    closed (ui/skeleton/page_list.js), and it opens again when asked. At 1280 px it stands beside the page and stays open."""
    browser, base = browser_and_base
    narrow = size[0] <= 768
    with on_device(browser, base + "/Playground", size) as page:
        assert page.evaluate(SIDEBAR_SHOWN) is not narrow  # Streamlit's "auto": closed on a narrow screen
        for target in ("Masks", "Step by step"):
            if narrow:
                page.locator('[data-testid="stExpandSidebarButton"]').tap()
                page.wait_for_function(SIDEBAR_SHOWN)
            page.locator('[data-testid="stSidebar"] a').filter(has_text=target).first.tap()
            wait_for_address(page, f"**/{target.replace(' ', '_')}**")
            wait_for_app(page)
            page.wait_for_timeout(500)  # the sidebar's slide
            assert page.evaluate(SIDEBAR_SHOWN) is not narrow, target
            assert target in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert_no_errors(page)


@pytest.mark.parametrize(("path", "heading"), [("/Compare", "Attention weights"), ("/Masks", "The weights under")])
def test_before_the_reveal_no_heading_stands_over_nothing(browser_and_base, path, heading):
    """Classroom mode keeps the weights back until the reveal, and their heading and live-maps switch with them."""
    browser, base = browser_and_base
    with on_device(browser, base + path + "?classroom=lock", PHONE) as page:
        main = page.locator('[data-testid="stMain"]')
        assert "Predict first" in main.inner_text()
        assert heading not in main.inner_text() and page.get_by_text("live maps (redraw").count() == 0
        prediction = main.locator('[data-testid="stRadio"]').filter(has_text="Your prediction")
        prediction.locator('[role="radiogroup"] label').first.tap()  # nothing is chosen for a student: choose first
        prediction.locator("input").first.wait_for(state="attached")
        page.wait_for_function(
            '() => [...document.querySelectorAll(\'[data-testid="stMain"] [data-testid="stRadio"] input\')]'
            ".some(i => i.checked)",
            timeout=90000,
        )
        page.locator('button:has-text("Reveal the answer")').tap()
        page.get_by_text(heading).first.wait_for(timeout=90000)
        wait_for_app(page)
        assert page.get_by_text("live maps (redraw").count() == 1


def test_the_live_maps_fit_a_phone_a_tap_reads_a_cell_and_a_touch_drag_redraws(browser_and_base):
    """On a phone the Playground's live maps lie inside the screen; a tap on a cell shows its query, key and
    weight, as a pointer resting on it does (the browser's mouse events after a tap reach ui/live/maps.js's hover);
    a finger dragging the live temperature redraws the maps while it moves (Chromium's touch events, through the
    DevTools protocol), before anything reaches the server."""
    from attention_core import WhatIf, run_whatif
    from tests.test_live_maps import MAPS, REDRAWN, ROW_OF_MAPS, TIP, TIP_TEXT, _cell_point, _frames, shows_weight

    browser, base = browser_and_base
    cfg = WhatIf(seq_len=8, d_model=64, n_heads=4, temperature=1.0)
    run = run_whatif(cfg)
    with on_device(browser, base + "/Playground?seq_len=8&d_model=64&heads=4&temperature=1.0", PHONE) as page:
        maps = page.locator(MAPS).first
        maps.wait_for()
        page.wait_for_function(REDRAWN, arg=maps.element_handle())
        right = page.evaluate("""(root) => Math.max(...[...root.querySelectorAll('canvas, input, select')]
            .map(e => e.getBoundingClientRect().right))""", maps.element_handle())  # fmt: skip
        assert right <= PHONE[0], f"the live maps reach {right} px on a {PHONE[0]} px screen"
        canvas = page.locator(f'{MAPS} .ae-map canvas[data-head="0"]').first
        layout = maps.evaluate(ROW_OF_MAPS)["L"]
        i, j = 2, 5
        page.touchscreen.tap(*_cell_point(canvas, i, j, 8, layout["margin"], layout["cell"]))
        tip = page.locator(TIP).first
        tip.wait_for(state="visible", timeout=5000)
        m = re.search(TIP_TEXT.pattern.lstrip("^"), tip.text_content())
        assert m, tip.text_content()
        head, query, qn, key, kn, weight = m.groups()
        assert (head, query, int(qn), key, int(kn)) == ("1", run.tokens[i], i + 1, run.tokens[j], j + 1)
        assert shows_weight(weight, float(run.weights[0, i, j])), tip.text_content()

        slider = page.locator(f'{MAPS} input[aria-label^="temperature"]').first
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        x0, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = page.context.new_cdp_session(page)
        before = _frames(page)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]})
        for k in range(20):  # a quarter of the slider to the left, 20 moves
            point = {"x": x0 - (k + 1) * box["width"] / 80, "y": y}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
            page.wait_for_timeout(30)
        during = _frames(page) - before
        assert "temperature=1.0" in page.url  # nothing has reached the server yet
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        assert during >= 5, f"the maps were drawn {during} times during the touch drag"
        assert float(maps.get_attribute("data-temperature")) < 1.0


def test_a_tap_on_a_heatmap_reads_its_cell_on_a_phone(browser_and_base):
    """A heatmap drawn on a canvas (ui/draw/heatmap.js) fits a phone's screen (a wide one scrolls in its own box) and
    a tap on a cell shows its row, its column and its value, as a pointer resting on it does: Masks' first mask."""
    from attention_core import WhatIf, run_whatif
    from ui.text import fmt

    browser, base = browser_and_base
    run = run_whatif(WhatIf())
    with on_device(browser, base + "/Masks", PHONE) as page:
        fig = page.locator("figure.ae-hm").filter(has=page.locator('figcaption:text-is("mask (1 = may attend)")'))
        fig = fig.first
        fig.wait_for(timeout=30000)
        fig.scroll_into_view_if_needed()
        box = fig.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE[0], box
        canvas = fig.locator("canvas.ae-hm-cells")
        cells = canvas.bounding_box()
        i, j = 5, 2
        page.touchscreen.tap(cells["x"] + (j + 0.5) * cells["width"] / 8, cells["y"] + (i + 0.5) * cells["height"] / 8)
        tip = fig.locator(".ae-hm-tip")
        tip.wait_for(state="visible", timeout=5000)
        allowed = fmt(float(j <= i))  # the causal mask: a query may attend to itself and before
        assert tip.inner_text().splitlines() == [f"query {run.tokens[i]}", f"key {run.tokens[j]}", f"allowed {allowed}"]


@pytest.mark.parametrize(
    "seq_len, query, paths",
    [
        (64, "seq_len=64", PAGES),
        (512, "seq_len=512&heads=1&mask=none", LONG_PAGES),
    ],
    ids=["64_tokens", "512_tokens"],
)
def test_chart_text_stays_readable_on_a_phone_at_every_length(browser_and_base, seq_len, query, paths):
    """Chart text at least 11 px and nothing cut at the largest settings the pages offer too (where labels cannot
    fit, a regular subset is labelled; a long table's columns fit the phone), with every expander closed and then
    open: one phone walks every page at 64 tokens, and the pages that offer 512 at 512. The default setting is
    above (test_every_page_fits_a_phone_and_a_tablet)."""
    browser, base = browser_and_base
    problems = []
    with on_device(browser, f"{base}/?{query}", PHONE) as page:
        for path in paths:
            page.goto(f"{_url(base, path)}?{query}")
            wait_for_app(page, timeout_ms=120000)
            assert_no_errors(page)
            problems += [f"{path} at {seq_len}: small text {t}" for t in small_chart_text(page)]
            problems += [f"{path} at {seq_len}: cut {c}" for c in cut_elements(page)]
            if _open_expanders(page):  # what a student finds when they open every part (Real model's heads)
                problems += [f"{path} at {seq_len}, opened: cut {c}" for c in cut_elements(page)]
    assert problems == [], "\n".join(problems)


def _open_expanders(page) -> int:
    """Open every closed expander of the main area (one click each, as a student's tap); returns how many."""
    closed = page.locator('[data-testid="stMainBlockContainer"] details:not([open]) > summary')
    n = closed.count()
    for _ in range(n):
        closed.first.click()
    if n:
        page.wait_for_timeout(1500)  # an expander that reruns the page (the reproduce scripts) draws its content
        wait_for_app(page, timeout_ms=120000)
    return n


# the first grid of the main area and the element after it: whether each shows, and the text of the twin's cells
GRID_AND_TWIN = """() => {
    const grid = document.querySelector('[data-testid="stMain"] [data-testid="stDataFrame"]');
    const next = grid.closest('[data-testid="stElementContainer"]').nextElementSibling;
    const table = next && next.querySelector('[data-testid="stMarkdownContainer"] table');
    return {grid: grid.checkVisibility() && grid.getBoundingClientRect().width > 0,
            twin: !!table && table.checkVisibility() && table.getBoundingClientRect().width > 0,
            cells: table ? [...table.rows].map(r => [...r.cells].map(c => c.innerText.trim())) : []};
}"""


@pytest.mark.parametrize("size", [PHONE, (1400, 1000)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_phone_reads_a_grid_as_its_markdown_twin_and_a_laptop_the_grid(browser_and_base, size):
    """ui.draw.tables.show_table draws a readable table twice, the grid and one Markdown table after it
    (ui/skeleton/a11y.css): a phone shows the Markdown table alone, its cells the page's numbers; a laptop shows the
    grid alone. Soft lookup's keys at the default: cat, dog and car with their values 10, 20, 30."""
    browser, base = browser_and_base
    options = touch_options(size) if size == PHONE else {"viewport": {"width": size[0], "height": size[1]}}
    with borrowed_page(browser, **options) as page:
        load_app(page, base + "/Soft_lookup")
        assert_no_errors(page)
        got = page.evaluate(GRID_AND_TWIN)
    assert (got["grid"], got["twin"]) == ((False, True) if size == PHONE else (True, False))
    rows = got["cells"]
    assert rows[0][:3] == ["", "key k", "value v"] and [r[0] for r in rows[1:]] == ["cat", "dog", "car"]
    assert [r[2] for r in rows[1:]] == ["10", "20", "30"]
