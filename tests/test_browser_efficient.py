"""Real browser: the Efficient attention page loads in headless Chromium with no error, and a link's page settings open."""

import pytest
from playwright.sync_api import sync_playwright

from tests.server_util import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser_and_base():
    with streamlit_server() as (base, _proc):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            yield browser, base
            browser.close()


def open_page(browser, url: str, width: int = 1400, height: int = 1000):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.goto(url)
    wait_for_app(page)
    return ctx, page


def assert_no_errors(page):
    for test_id in ("stException", "stAlertContentError"):
        loc = page.locator(f'[data-testid="{test_id}"]')
        assert loc.count() == 0, loc.all_inner_texts()


@pytest.mark.parametrize("query", ["", "?seq_len=64&kv=1&tile=7&window=5&layers=4&model=Mistral-7B+(v0.1)&ctx=32768"])
def test_efficient_page_loads_without_error(browser_and_base, query, tmp_path):
    browser, base = browser_and_base
    ctx, page = open_page(browser, base + "/Efficient_attention" + query)
    try:
        assert_no_errors(page)
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        body = page.inner_text('[data-testid="stMainBlockContainer"]')
        assert "They agree." in body
        if query:
            assert "rolling cache of the last 4,096 tokens" in body and "10 tiles" in body
            assert page.locator('[data-testid="stAlertContentWarning"]').count() == 0
        page.screenshot(path=str(tmp_path / "efficient.png"), full_page=True)
    finally:
        ctx.close()
