"""Real browser: headless Chromium (Debian's) driven by Playwright against `streamlit run` on 127.0.0.1.

Every page loads with no exception or error element; a link with parameters opens with those values;
switching pages keeps the settings; a typed sentence with HTML in it stays text. A screenshot of each
page is saved under the test's temporary folder.
"""

import contextlib
from urllib.parse import quote

import pytest
from playwright.sync_api import sync_playwright

from tests.apptest_util import PAGES
from tests.server_util import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app


def page_url(path: str) -> str:
    """The URL path Streamlit gives a legacy page file: pages/3_Softmax_saturation.py -> /Softmax_saturation."""
    name = path.split("/")[-1][:-3]
    return "/" + name.split("_", 1)[1]


@pytest.fixture(scope="module")
def browser_and_base():
    with streamlit_server() as (base, _proc):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            yield browser, base
            browser.close()


def open_page(browser, url: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    wait_for_app(page)
    return ctx, page, dialogs


@contextlib.contextmanager
def opened(browser, url: str):
    """A fresh browser context on ``url``; yields (page, dialogs) and always closes the context."""
    ctx, page, dialogs = open_page(browser, url)
    try:
        yield page, dialogs
    finally:
        ctx.close()


def assert_no_errors(page):
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').all_inner_texts()
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def slider_value(page, label: str) -> str:
    return page.locator(f'[data-testid="stSlider"] input[type="range"][aria-label^="{label}"]').first.input_value()


@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_every_page_loads_without_error(browser_and_base, path, tmp_path):
    browser, base = browser_and_base
    url = base + ("/" if path == "streamlit_app.py" else page_url(path))
    with opened(browser, url) as (page, dialogs):
        assert_no_errors(page)
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        page.screenshot(path=str(tmp_path / (path.replace("/", "_") + ".png")), full_page=True)
        assert not dialogs


def test_link_parameters_open_and_survive_page_switch(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=5&d_model=32&heads=2&temperature=2.0") as (page, _):
        assert slider_value(page, "seq_len") == "5"
        assert slider_value(page, "d_model") == "32"
        assert "d_k = d_model / heads = 32 / 2 = 16" in page.inner_text('[data-testid="stSidebar"]')
        page.locator('[data-testid="stSidebar"] a:has-text("Step by step")').click()
        page.wait_for_url("**/Step_by_step**")
        wait_for_app(page)
        assert "temperature=2.0" in page.url and "seq_len=5" in page.url
        page.locator('[data-testid="stSidebar"] a:has-text("Playground")').click()
        page.wait_for_url("**/Playground**")
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "5"
        assert slider_value(page, "d_model") == "32"
        assert "seq_len=5" in page.url and "heads=2" in page.url
        assert_no_errors(page)


def test_bad_link_shows_notice(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=-3&heads=abc&temperature=nan") as (page, _):
        text = page.inner_text('[data-testid="stMain"]')
        assert "seq_len=-3 is outside 1 to 512; using 1" in text
        assert slider_value(page, "seq_len") == "1"
        assert_no_errors(page)


def test_html_in_sentence_is_shown_as_text(browser_and_base):
    browser, base = browser_and_base
    sentence = "hello <img src=x onerror=alert(1)> <b>bold</b>"
    with opened(browser, base + "/Playground?input=sentence&sentence=" + quote(sentence)) as (page, dialogs):
        page.wait_for_timeout(1000)
        assert not dialogs
        assert page.locator('img[src="x"]').count() == 0
        assert page.locator('[data-testid="stMain"] b:has-text("bold")').count() == 0
        assert page.locator('[data-testid="stSidebar"] textarea').input_value() == sentence
        page.locator('[data-testid="stSelectbox"]:has-text("query token")').click()
        options = page.locator('[role="option"]').all_inner_texts()
        assert "<img (#2)" in options and "<b>bold</b> (#5)" in options  # tokens exactly as typed
        page.keyboard.press("Escape")
        assert_no_errors(page)


def test_preset_link_opens_right_page_with_settings(browser_and_base):
    from ui.presets import load_presets

    browser, base = browser_and_base
    presets = {p.slug: p for p in load_presets()[0]}
    with opened(browser, presets["2_why_scale"].link(base)) as (page, _):
        assert "Compare" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert slider_value(page, "seq_len (tokens) (A)") == "16"
        assert slider_value(page, "d_model (B)") == "512"
        assert "b_scaled=0" in page.url and "a_scaled=1" in page.url
        assert_no_errors(page)
    with opened(browser, presets["3_causal_decoder"].link(base)) as (page, _):
        assert "Playground" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert page.locator('[data-testid="stSidebar"] textarea').input_value() == "the model writes one word at a time"
        assert "mask=causal" in page.url
        assert_no_errors(page)


def test_gallery_button_opens_preset(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/") as (page, _):
        card = page.locator('[data-testid="stVerticalBlock"]', has_text="Why scale?").filter(
            has=page.locator('button:has-text("Open this experiment")')).last
        card.locator('button:has-text("Open this experiment")').click()
        page.wait_for_url("**/Compare**", timeout=30000)
        wait_for_app(page)
        assert slider_value(page, "d_model (A)") == "512"
        assert_no_errors(page)


def test_real_model_page_with_local_tiny_model(browser_and_base, tmp_path):
    from tests.tiny_models import make_tiny_bert

    browser, base = browser_and_base
    folder = make_tiny_bert(tmp_path / "tiny-bert")
    with opened(browser, base + "/Real_model?model=" + quote(str(folder))) as (page, dialogs):
        main = page.inner_text('[data-testid="stMain"]')
        assert "Could not load" not in main
        assert page.locator('[data-testid="stImage"]').count() >= 1  # the model view
        page.get_by_role("tab", name="Parity").click()
        page.wait_for_timeout(300)
        assert "float rounding" in page.inner_text('[data-testid="stMain"]')
        assert_no_errors(page)
        page.screenshot(path=str(tmp_path / "real_model.png"), full_page=True)
        assert not dialogs
