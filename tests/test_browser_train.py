"""The Train page in headless Chromium: the ready experiment and live training load with no error element,
nothing reaches past the window's right edge, and Play trains in the browser (the fragment redraws itself).
Screenshots at 1280x720 and 1400x1000 are saved under the test's temporary folder."""

import re

import pytest

from tests.server_util import wait_for_app
from tests.test_browser import CHART_WARNINGS, assert_no_errors, horizontal_overflow

pytestmark = pytest.mark.browser
URL = "/Train"
LIVE = "?mode=live&task=previous&layers=1&heads=2&d_model=16&batch=16&steps=200&context=16&vocab=16"


@pytest.mark.parametrize("size", [(1280, 720), (1400, 1000)])
@pytest.mark.parametrize("query", ["", LIVE])
def test_train_page_loads_without_errors(browser_and_base, size, query, tmp_path):
    browser, base = browser_and_base
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    console = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    try:
        page.goto(base + URL + query)
        wait_for_app(page, timeout_ms=240000)
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
    finally:
        ctx.close()


def test_play_trains_in_the_browser(browser_and_base, tmp_path):
    browser, base = browser_and_base
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(base + URL + LIVE)
        wait_for_app(page, timeout_ms=240000)
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
    finally:
        ctx.close()
