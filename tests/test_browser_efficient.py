"""Real browser: the Efficient attention page loads in headless Chromium with no error; a link's page settings open;
page controls keep their values across page switches."""

import pytest

from harness.server import wait_for_address, wait_for_app
from tests.test_browser import assert_no_errors, opened

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("query", ["", "?seq_len=64&kv=1&tile=7&window=5&layers=4&llm=Mistral-7B+(v0.1)&ctx=32768"])
def test_efficient_page_loads_without_error(browser_and_base, query, tmp_path):
    browser, base = browser_and_base
    with opened(browser, base + "/Efficient_attention" + query) as (page, dialogs):
        assert_no_errors(page)
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        body = page.inner_text('[data-testid="stMainBlockContainer"]')
        assert "They agree." in body
        if query:
            assert "rolling cache of the last 4,096 tokens" in body and "10 tiles" in body
            assert page.locator('[data-testid="stAlertContentWarning"]').count() == 0
        page.screenshot(path=str(tmp_path / "efficient.png"))
        assert not dialogs


def slider(page, label: str):
    return page.locator(
        f'[data-testid="stMainBlockContainer"] [data-testid="stSlider"] input[aria-label^="{label}"]'
    ).first


def press_right(page, label: str, url_part: str) -> None:
    """Move a page slider one step right with the keyboard and wait until the URL carries ``url_part``."""
    slider(page, label).focus()
    page.keyboard.press("ArrowRight")
    wait_for_address(page, f"**{url_part}**", timeout=60000)
    wait_for_app(page)


def go(page, link: str, path: str) -> None:
    page.locator(f'[data-testid="stSidebar"] a:has-text("{link}")').first.click()
    wait_for_address(page, f"**{path}**")
    wait_for_app(page)


def test_page_controls_survive_switches_between_pages(browser_and_base):
    """A page control moved in the browser keeps its value (widget and URL) after a switch to another page and back:
    the widgets' state is put back from the kept values on each page visit (ui/skeleton/page_params.py)."""
    browser, base = browser_and_base
    with opened(browser, base + "/Efficient_attention") as (page, _):
        assert slider(page, "window w").input_value() == "3"
        press_right(page, "window w", "window=4")
        go(page, "Positions", "/Positions")
        assert slider(page, "trained length L").input_value() == "6"
        press_right(page, "trained length L", "train_len=7")
        go(page, "Efficient attention", "/Efficient_attention")
        assert slider(page, "window w").input_value() == "4" and "window=4" in page.url
        assert "w = 4" in page.inner_text('[data-testid="stMainBlockContainer"]')
        go(page, "Positions", "/Positions")
        assert slider(page, "trained length L").input_value() == "7" and "train_len=7" in page.url
        assert "Beyond the trained length L = 7" in page.inner_text('[data-testid="stMainBlockContainer"]')
        assert_no_errors(page)
