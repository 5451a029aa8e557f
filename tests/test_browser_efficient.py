"""Real browser: the Efficient attention page loads in headless Chromium with no error; a link's page settings open."""

import pytest

from tests.test_browser import assert_no_errors, browser_and_base, opened  # noqa: F401 - browser_and_base is a fixture

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("query", ["", "?seq_len=64&kv=1&tile=7&window=5&layers=4&llm=Mistral-7B+(v0.1)&ctx=32768"])
def test_efficient_page_loads_without_error(browser_and_base, query, tmp_path):  # noqa: F811
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
