"""Real browser: the Positions and the Sinks-and-linear-attention pages in headless Chromium at 1280x720 and
1400x1000: no error element, nothing past the right edge, no Vega warning, the page's numbers and URL settings."""

import contextlib

import pytest

from harness.server import wait_for_address, wait_for_app
from tests.page_pool import borrowed_page, load_app
from tests.test_browser import assert_no_errors

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (1400, 1000)]
PAGES = {
    "/Positions": ["depends **only on the offset**".replace("**", ""), "Beyond the trained length L = 6"],
    "/Positions?method=learned&train_len=4&seq_len=12&mask=causal": ["position 4 has no row", "cannot extrapolate"],
    "/Positions?method=alibi&heads=16&d_model=64": ["ALiBi slope m per head", "depends only on the offset"],
    "/Sinks_and_linear_attention": ["Every row of every head sums to less than 1", "272 vs 64"],
    "/Sinks_and_linear_attention?nosink=1&mask=causal&n_sink=1&window=3": [
        "With no sink every row with an allowed key sums to exactly 1",
        "keeps 4 of 8 keys",
    ],
}


@contextlib.contextmanager
def page_at(browser, url: str, size):
    """A clean page of ``size`` on ``url`` (tests/page_pool.py), with the console messages collected."""
    with borrowed_page(browser, viewport={"width": size[0], "height": size[1]}) as page:
        console = []
        page.on("console", lambda m: console.append((m.type, m.text)))
        load_app(page, url)
        page.wait_for_timeout(500)  # Vega logs while it renders
        yield page, console


def overflowing(page) -> list[str]:
    """Visible elements of the main area that end past the window's right edge and are not clipped by an ancestor
    that hides or scrolls its overflow (KaTeX's square-root tails, code blocks) or by hidden MathML."""
    return page.evaluate("""() => {
        const W = window.innerWidth + 1, out = [];
        const clipped = e => {
            for (let a = e.parentElement; a; a = a.parentElement) {
                if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= W) return true;
            }
            return false;
        };
        document.querySelectorAll('[data-testid="stMainBlockContainer"] *').forEach(e => {
            if (e.closest('.katex-mathml')) return;
            const r = e.getBoundingClientRect();
            if (r.width > 0 && r.height > 0 && r.right > W && !clipped(e))
                out.push((e.getAttribute('data-testid') || e.tagName) + ' ends at ' + Math.round(r.right));
        });
        return out.slice(0, 8);
    }""")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("url", list(PAGES))
def test_modern_pages_load_fit_and_show_their_numbers(browser_and_base, url, size, tmp_path):
    browser, base = browser_and_base
    with page_at(browser, base + url, size) as (page, console):
        assert_no_errors(page)
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        body = page.inner_text('[data-testid="stMainBlockContainer"]')
        for text in PAGES[url]:
            assert text in body, (text, body[:3000])
        assert overflowing(page) == []
        assert [t for kind, t in console if kind in ("warning", "error") and ("WARN" in t or "Vega" in t)] == []
        for key, value in (kv.split("=") for kv in url.partition("?")[2].split("&") if kv):
            assert f"{key}={value}" in page.url  # the page's own settings stay in the address bar
        page.screenshot(path=str(tmp_path / f"{url.strip('/').split('?')[0]}_{size[0]}.png"), full_page=True)


def test_page_control_updates_the_url(browser_and_base):
    browser, base = browser_and_base
    with page_at(browser, base + "/Positions", (1400, 1000)) as (page, _):
        page.locator('[data-testid="stRadio"] label:has-text("ALiBi (biased)")').click()
        wait_for_address(page, "**method=alibi**")
        wait_for_app(page)
        assert "ALiBi slope m per head" in page.inner_text('[data-testid="stMainBlockContainer"]')
        assert_no_errors(page)
