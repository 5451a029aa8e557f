"""The Softmax saturation page in headless Chromium: the part for readers who know derivatives is empty until it is
opened, opens with its charts and sentence, follows a temperature change (a body rerun) while open, and nothing
on the way shows an error, warns from Vega or reaches past the window at 1280 x 720."""

import re

import pytest

from harness.server import wait_for_address, wait_for_app
from tests.test_browser import assert_no_errors, chart_warnings, horizontal_overflow, opened

pytestmark = pytest.mark.browser
EXPANDER = '[data-testid="stExpander"]:has-text("For readers who know derivatives")'
GRADIENT = re.compile(r"gradient reaching a row's scores has mean length ([0-9.e-]+)")


def _charts_in(page, selector: str) -> int:
    """Vega charts and drawn canvas heatmaps (in their components' shadow roots: a locator pierces them) in it."""
    vega = page.locator(f'{selector} [data-testid="stVegaLiteChart"]').count()
    return vega + page.locator(f"{selector} figure.ae-hm canvas.ae-hm-cells").count()


def test_derivatives_part_opens_and_follows_the_temperature(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Softmax_saturation?temperature=1", size=(1280, 720)) as (page, _):
        assert _charts_in(page, EXPANDER) == 0  # closed: nothing drawn in it
        main_charts = page.locator('[data-testid="stVegaLiteChart"]').count()
        assert main_charts == 8  # four sweep charts, four bar charts
        assert page.locator("figure.ae-hm").count() == 0  # the Jacobian maps are in the closed part
        page.locator(EXPANDER).get_by_text("For readers who know derivatives").click()
        page.wait_for_timeout(300)
        wait_for_app(page)
        assert _charts_in(page, EXPANDER) == 3  # the gradient over d_k and two Jacobian maps
        first = GRADIENT.search(page.locator(EXPANDER).inner_text()).group(1)
        slider = page.locator('[data-testid="stSidebar"] input[aria-label^="temperature"]').first
        slider.focus()
        page.keyboard.press("ArrowRight")  # 1 -> 1.259: a leaf control, the body reruns alone
        wait_for_address(page, re.compile(r"temperature=1\.259"), timeout=60000)
        wait_for_app(page)
        assert _charts_in(page, EXPANDER) == 3
        assert GRADIENT.search(page.locator(EXPANDER).inner_text()).group(1) != first
        assert "temperature τ = 1.259" in page.inner_text('[data-testid="stMain"]')
        assert_no_errors(page)
        assert horizontal_overflow(page) == []
        assert chart_warnings(page) == []
