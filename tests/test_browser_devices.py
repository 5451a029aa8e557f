"""Every device in the room: each page on a phone (390x844) and a tablet (768x1024), touch on, in Chromium.

- Nothing cut and nothing hidden sideways (tests/device_util.cut_elements, measured in the page): formulas break
  into lines, tables are text that wraps below 1024 px (ui/tables.show_table), code wraps, tabs wrap, columns too
  narrow for their charts wrap, labels wrap instead of ending in an ellipsis (ui/a11y.css).
- Chart text at least 11 px as drawn (tests/device_util.small_chart_text).
- axe-core finds nothing (WCAG 2.x A and AA, tests/a11y_util.assert_accessible), as at desktop sizes.

Screenshots of every page at both sizes land beside the others (pytest's temporary folder, ``screenshots/``).
"""

import contextlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.a11y_util import assert_accessible
from tests.apptest_util import PAGES
from tests.device_util import PHONE, TOUCH_SIZES, cut_elements, small_chart_text, touch_context
from tests.server_util import wait_for_app
from tests.test_browser import assert_no_errors, full_screenshot, page_url

pytestmark = pytest.mark.browser

# What is still cut, by page and screen width, and why; each entry names its elements, and the test fails when
# one of them is no longer cut (take it out) or anything else is.
KNOWN_CUT = {
    ("/Train", PHONE[0]): (
        # two head maps side by side of T tokens at 12 px a cell (every token labelled) are wider than a phone
        "stVegaLiteChart div.stVegaLiteChart 'layer 1 head 1",
        "stVegaLiteChart div.stVegaLiteChart 'layer 1 head 2",
    ),
    ("/Real_model", PHONE[0]): ("stSelectbox input",),  # the model's name is longer than a phone's select box
    ("/Efficient_attention", PHONE[0]): ("stTable",),  # KV memory's eight columns in its closed expander, 12 px
}


CHUNK_FAILED = "Failed to fetch dynamically imported module"


@contextlib.contextmanager
def on_device(browser, url: str, size):
    """``url`` in a fresh touch context of ``size``; yields the page and always closes the context.

    On a machine busy with other work, Chromium now and then failed to fetch one of Streamlit's script chunks (the
    page shows "Failed to fetch dynamically imported module") or drew nothing in 45 s; that is the machine's load,
    not the page's layout, so the page is loaded once more (a second failure fails the test)."""
    ctx = touch_context(browser, size)
    try:
        page = ctx.new_page()
        page.goto(url)
        try:
            wait_for_app(page, timeout_ms=45000)
            failed = page.get_by_text(CHUNK_FAILED).count() > 0
        except PlaywrightTimeout:
            failed = True
        if failed:
            page.reload()
            wait_for_app(page)
        yield page
    finally:
        ctx.close()


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
        cut = cut_elements(page)
        known = KNOWN_CUT.get((page_url(path) if path != "streamlit_app.py" else "/", size[0]), ())
        assert [c for c in cut if not c.startswith(known)] == [], cut
        assert all(any(c.startswith(k) for c in cut) for k in known), f"no longer cut, take it out: {known}"
        assert small_chart_text(page) == []
        full_screenshot(page, shots / f"{path.replace('/', '_')}_{size[0]}x{size[1]}_touch.png")
        assert_accessible(page, f"{path} at {size[0]}x{size[1]}, touch")  # axe-core, WCAG 2.x A and AA
