"""Real browser: headless Chromium (Debian's) driven by Playwright against `streamlit run` on 127.0.0.1.

Every page loads at 1280x720 and 1400x1000 with no exception or error element, no horizontal overflow and
no console warning from our charts and no axe-core (WCAG 2.x A and AA) violation; a link with parameters opens with those values; switching pages and the
back button keep the settings; a preset link shows its question; classroom=lock hides the weights until a
prediction; a typed sentence with HTML in it stays text. Screenshots of every page at both sizes are saved
under the test's temporary folder (pytest prints it with -rA; look at them).
"""

import contextlib
import re
from urllib.parse import quote

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.server import wait_for_address, wait_for_app
from tests.a11y_util import assert_accessible
from tests.apptest_util import PAGES
from tests.device_util import cut_elements, small_chart_text
from tests.page_pool import borrowed_page, load_app
from ui.skeleton.registry import PAGES as REGISTRY

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (1400, 1000)]
# Vega / Vega-Lite log their warnings through console.warn with these words (e.g. "WARN Infinite extent for
# field ...", "WARN Dropping fit because spec has discrete size"); any of them is a defect of our specs.
CHART_WARNINGS = ("WARN", "Infinite extent", "Dropping", "vega", "Vega")


def page_url(path: str) -> str:
    """The URL path Streamlit gives a legacy page file: pages/Softmax_saturation.py -> /Softmax_saturation."""
    return "/" + path.split("/")[-1][:-3]


@contextlib.contextmanager
def opened(browser, url: str, size=(1400, 1000)):
    """A clean page of ``size`` on ``url`` (tests/page_pool.py: a page an earlier test left blank, or a new context;
    loaded once more if the machine's load kept it from drawing); yields (page, dialogs), the page's console
    messages in ``page.console``."""
    with borrowed_page(browser, viewport={"width": size[0], "height": size[1]}) as page:
        dialogs, console = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("console", lambda m: console.append((m.type, m.text)))
        load_app(page, url)
        page.console = console
        yield page, dialogs


def assert_no_errors(page):
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]'
    ).all_inner_texts()
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, page.locator(
        '[data-testid="stAlertContentError"]'
    ).all_inner_texts()


def live_maps_off(page) -> None:
    """Turn the live maps off (kept for the session): the page's temperature, scaling and mask are then widgets of
    the page's, drawn above the server's maps."""
    page.get_by_text("live maps (redraw").first.click()
    page.locator('[data-testid="stMain"] [data-testid="stSlider"]').filter(has_text="temperature").first.wait_for()
    wait_for_app(page)


def horizontal_overflow(page) -> list[str]:
    """Streamlit elements of the main area (charts, images, tables, text blocks...) that reach past the
    window's right edge, and the page or main area if it scrolls sideways. Graphics inside a chart (SVG
    paths, canvas) are the chart's business: its element box is what must fit."""
    return page.evaluate("""() => {
        const out = [];
        if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('page scrolls sideways');
        const main = document.querySelector('[data-testid="stMain"]');
        if (main && main.scrollWidth > main.clientWidth + 1) out.push('main area scrolls sideways');
        document.querySelectorAll('[data-testid="stMainBlockContainer"] [data-testid]').forEach(e => {
            if (e.closest('svg') || e.closest('.katex-mathml')) return;
            const r = e.getBoundingClientRect();
            if (r.width > 0 && r.height > 0 && r.right > window.innerWidth + 1)
                out.push(e.getAttribute('data-testid') + ' ends at ' + Math.round(r.right));
        });
        return out.slice(0, 8);
    }""")


def projector_tables(page) -> list[dict]:
    """The main area's tables drawn as text (st.table, and a Markdown table: ui.draw.tables.show_matrix's): the type
    size of their cells, and whether each fits its box (a table wider than its box scrolls sideways inside it, out
    of a projector's reach)."""
    return page.evaluate("""() => [...document.querySelectorAll(
            '[data-testid="stMainBlockContainer"] :is([data-testid="stTable"], [data-testid="stMarkdownContainer"] table)')]
        .filter(t => t.checkVisibility()).map(t => {
        const td = t.querySelector('td') || t.querySelector('th');
        const cell = td && (td.querySelector('p') || td);  // a text cell holds its text in a paragraph
        const wide = [t, ...t.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1
            && getComputedStyle(e).overflowX !== 'visible');
        return {size: cell ? parseFloat(getComputedStyle(cell).fontSize) : 0, fits: !wide,
                text: t.innerText.slice(0, 40)};
    })""")


def full_screenshot(page, path) -> None:
    """The whole page: Streamlit scrolls its main area, not the document, so grow the window to fit it."""
    size = page.viewport_size
    height = page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
        return m ? m.scrollHeight : document.body.scrollHeight; }""")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 12000))})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


def chart_warnings(page) -> list[str]:
    page.wait_for_timeout(500)  # Vega logs while it renders
    return [t for kind, t in page.console if kind in ("warning", "error") and any(w in t for w in CHART_WARNINGS)]


def slider_value(page, label: str) -> str:
    return page.locator(f'[data-testid="stSlider"] input[type="range"][aria-label^="{label}"]').first.input_value()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_every_page_loads_fits_and_warns_nothing(browser_and_base, path, size, tmp_path_factory):
    browser, base = browser_and_base
    url = base + ("/" if path == "streamlit_app.py" else page_url(path))
    shots = tmp_path_factory.getbasetemp() / "screenshots"
    shots.mkdir(exist_ok=True)
    with opened(browser, url, size) as (page, dialogs):
        assert_no_errors(page)
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        assert horizontal_overflow(page) == []
        assert cut_elements(page) == []  # nothing cut or scrolled sideways inside the page either
        assert small_chart_text(page) == []  # and no chart or diagram text under 11 px
        assert chart_warnings(page) == []
        full_screenshot(page, shots / f"{path.replace('/', '_')}_{size[0]}x{size[1]}.png")
        assert not dialogs
        assert_accessible(page)  # axe-core, WCAG 2.x A and AA (tests/a11y_util.py)


# the pages whose maps and tables grow with the longest and widest settings (512 tokens, d_model 1024)
LONG_PAGES = [p.path for p in REGISTRY if p.long_settings]


@pytest.mark.parametrize(
    "query",
    ["seq_len=4&d_model=1024&heads=1", "seq_len=64&heads=1", "seq_len=512&heads=1&mask=none"],
    ids=["wide", "64_tokens", "512_tokens"],
)
@pytest.mark.parametrize("path", LONG_PAGES)
def test_wide_and_long_settings_fit_1280(browser_and_base, path, query):
    """4 tokens x 1024 dimensions drew 1024-column vector maps (3000 px and more), at 64 tokens a stretched map's
    key-axis note widened its chart past the column, and at 512 tokens Efficient attention's influence map ran to
    2,260 px and its byte counts were cut ("131,584 b…"): all must fit 1280 px."""
    browser, base = browser_and_base
    with opened(browser, f"{base}{page_url(path)}?{query}", (1280, 720)) as (page, dialogs):
        assert_no_errors(page)
        assert horizontal_overflow(page) == []
        assert chart_warnings(page) == [] and not dialogs
        assert page.evaluate(CUT_METRICS) == []


@pytest.mark.parametrize("seq_len", [17, 24, 40, 64])
def test_every_page_fits_1280x720_at_every_length(browser_and_base, seq_len):
    """Every page at 1280x720 with 17, 24, 40 and 64 tokens (8, the default, is above): no map past the window and
    no sideways scroll (at 40 tokens Masks' maps ended at 1327 px: a map keeps to its column's size now, and labels
    a subset of its tokens when its cells are small). One browser page walks every page of the registry."""
    browser, base = browser_and_base
    problems = []
    with opened(browser, f"{base}/?seq_len={seq_len}", (1280, 720)) as (page, _):
        for path in PAGES:
            load_app(page, f"{base}{page_url(path)}?seq_len={seq_len}")
            assert_no_errors(page)
            problems += [f"{path}: {o}" for o in horizontal_overflow(page)]
    assert problems == []


# metric values Streamlit cut with an ellipsis because their column is too narrow
CUT_METRICS = """() => [...document.querySelectorAll('[data-testid="stMetricValue"] > div')]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""


def test_settings_survive_page_switches_and_the_back_button(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=5&d_model=32&heads=2&temperature=2.0") as (page, _):
        page.locator('[data-testid="stSidebar"] a:has-text("Masks")').click()
        wait_for_address(page, "**/Masks**")
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "5" and "d_model=32" in page.url
        for _ in range(2):  # Streamlit may add a history entry when the page writes its settings into the URL
            page.go_back()
            try:
                wait_for_address(page, "**/Playground**", timeout=10000)
                break
            except Exception:
                continue
        assert "/Playground" in page.url
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "5" and slider_value(page, "d_model") == "32"
        assert "heads=2" in page.url and "temperature=2.0" in page.url
        assert_no_errors(page)


def test_a_sidebar_change_redraws_the_page_and_survives_a_page_switch(browser_and_base):
    """Moving a sidebar control redraws the page (formula, URL) with the page links still there, and the new
    value is what the next page and the way back show."""
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=5&d_model=32&heads=2") as (page, _):
        thumb = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[aria-label^="seq_len"]').first
        thumb.focus()
        page.keyboard.press("ArrowRight")
        wait_for_address(page, "**seq_len=6**", timeout=60000)
        # the formula in the body, drawn again (KaTeX keeps its source in a hidden annotation)
        page.locator('[data-testid="stMain"] annotation:has-text("T = 6,")').first.wait_for(state="attached")
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "6"
        assert page.locator('[data-testid="stSidebar"] a:has-text("Masks")').count() == 1
        page.locator('[data-testid="stSidebar"] a:has-text("Masks")').click()
        wait_for_address(page, "**/Masks**")
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "6" and "seq_len=6" in page.url
        page.locator('[data-testid="stSidebar"] a:has-text("Playground")').click()
        wait_for_address(page, "**/Playground**")
        wait_for_app(page)
        assert slider_value(page, "seq_len") == "6" and slider_value(page, "d_model") == "32"
        assert_no_errors(page)


COUNT_ELEMENTS = """() => Object.fromEntries(['stVegaLiteChart', 'stImage', 'stHeading', 'stMetric', 'stDataFrame',
    'stSlider', 'stExpander', 'stPageLink'].map(t => [t, document.querySelectorAll(`[data-testid="${t}"]`).length]))"""


@pytest.mark.parametrize(
    "path, toggle, url, before_text, after_text, kept",
    [
        # Compare's scaling is set above its maps (with the live maps off, a toggle of the page's)
        ("/Compare", "scale by 1/√d_k (A)", "a_scaled=0", "A and B differ in one setting", "A and B are the same", ""),
        (
            "/Step_by_step",
            "scale by 1/√d_k",
            "scaled=0",
            "The top score becomes",
            "Scaling is off in the sidebar, so the top score stays",
            "1. Embeddings E",
        ),
    ],
    ids=["Compare", "Step_by_step"],
)
def test_a_leaf_change_redraws_the_body_in_place(browser_and_base, path, toggle, url, before_text, after_text, kept):
    """A scaling toggle reruns only the page's body (ui/session/partial.py): the sentence and the URL change, every
    element is drawn once (no copies beside the old ones), the controls stay, and what the full run drew
    (Step by step's steps 1 to 5) stays on the page."""
    browser, base = browser_and_base
    with opened(browser, base + path) as (page, _):
        if path == "/Compare":
            live_maps_off(page)
        before = page.evaluate(COUNT_ELEMENTS)
        main = page.locator('[data-testid="stMain"]')
        assert before_text in main.inner_text()
        for _ in range(3):  # scaling off, on, off: three body reruns
            page.locator("label").filter(has_text=toggle).first.click()
            page.wait_for_timeout(300)
            wait_for_app(page)
        wait_for_address(page, f"**{url}**", timeout=60000)
        shown = main.inner_text()
        assert after_text in shown
        assert not kept or shown.count(kept) == 1
        assert page.evaluate(COUNT_ELEMENTS) == before
        assert_no_errors(page)


def test_preset_link_shows_its_question(browser_and_base):
    from ui.classroom.presets import load_presets

    browser, base = browser_and_base
    for preset in load_presets()[0]:
        with opened(browser, preset.link(base)) as (page, _):
            main = page.inner_text('[data-testid="stMain"]')
            assert preset.question in main and "What to look for" in main, preset.slug
            assert "preset=" + preset.slug in page.url
            assert_no_errors(page)


def test_locked_classroom_link_hides_the_weights_until_a_prediction(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?classroom=lock&seq_len=6") as (page, _):
        main = page.locator('[data-testid="stMain"]')
        assert "Predict first" in main.inner_text()
        assert "Attention weights, one map per head" not in main.inner_text()
        assert (
            page.locator('[data-testid="stSidebar"] [data-testid="stToggle"]:has-text("Classroom mode")').count() == 0
        )
        page.locator('button:has-text("Reveal the answer")').click()  # nothing chosen: it asks for a choice
        page.get_by_text("Choose one of the answers first").wait_for(timeout=90000)
        assert "Attention weights, one map per head" not in main.inner_text()
        main.locator('[data-testid="stRadio"]').filter(has_text="Your prediction").get_by_text("softer").click()
        page.locator('button:has-text("Reveal the answer")').click()
        # the rerun may not have started when the click returns: wait for what it draws, then for it to finish
        page.get_by_text("Attention weights, one map per head").wait_for(timeout=90000)
        wait_for_app(page)
        assert "Attention weights, one map per head" in main.inner_text()
        assert "classroom=lock" in page.url
        assert_no_errors(page)


def test_link_parameters_open_and_survive_page_switch(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=5&d_model=32&heads=2&temperature=2.0") as (page, _):
        assert slider_value(page, "seq_len") == "5"
        assert slider_value(page, "d_model") == "32"
        assert "d_k = d_model / heads = 32 / 2 = 16" in page.inner_text('[data-testid="stSidebar"]')
        page.locator('[data-testid="stSidebar"] a:has-text("Step by step")').click()
        wait_for_address(page, "**/Step_by_step**")
        wait_for_app(page)
        assert "temperature=2.0" in page.url and "seq_len=5" in page.url
        page.locator('[data-testid="stSidebar"] a:has-text("Playground")').click()
        wait_for_address(page, "**/Playground**")
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
    from ui.classroom.presets import load_presets

    browser, base = browser_and_base
    presets = {p.slug: p for p in load_presets()[0]}
    with opened(browser, presets["2_why_scale"].link(base)) as (page, _):
        assert "Compare" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert slider_value(page, "seq_len (tokens) (A)") == "16"
        assert slider_value(page, "d_model (B)") == "512"
        assert "b_scaled=0" in page.url and "a_scaled=1" in page.url
        # the live B - A map says its signs in words, not in colour alone
        diff = page.locator(".ae-diff canvas[aria-label]").first
        diff.wait_for()
        said = diff.get_attribute("aria-label")
        assert re.search(r"B gains most at query \S+ to key \S+ \(\+[\d.e-]+\), loses most at query \S+ to key \S+ "
                         r"\(−[\d.e-]+\)", said), said  # fmt: skip
        assert_no_errors(page)
    with opened(browser, presets["3_causal_decoder"].link(base)) as (page, _):
        assert "Playground" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert page.locator('[data-testid="stSidebar"] textarea').input_value() == "the model writes one word at a time"
        assert "mask=causal" in page.url
        assert_no_errors(page)


def test_gallery_button_opens_preset(browser_and_base):
    browser, base = browser_and_base
    with opened(browser, base + "/") as (page, _):
        card = (
            page.locator('[data-testid="stVerticalBlock"]', has_text="Why scale?")
            .filter(has=page.locator('button:has-text("Open this experiment")'))
            .last
        )
        card.locator('button:has-text("Open this experiment")').click()
        wait_for_address(page, "**/Compare**", timeout=30000)
        wait_for_app(page)
        assert slider_value(page, "d_model (A)") == "512"
        assert_no_errors(page)


def test_real_model_page_with_local_tiny_model(browser_and_base, tmp_path):
    from harness.tiny_models import make_tiny_bert

    browser, base = browser_and_base
    folder = make_tiny_bert(tmp_path / "tiny-bert")
    with opened(browser, base + "/Real_model?model=" + quote(str(folder))) as (page, dialogs):
        main = page.inner_text('[data-testid="stMain"]')
        assert "Could not load" not in main
        page.wait_for_selector(".mv[data-drawn]", timeout=30000)  # the model view's canvas
        assert_accessible(page)
        assert "float rounding" in page.inner_text('[data-testid="stMain"]')
        assert_no_errors(page)
        page.screenshot(path=str(tmp_path / "real_model.png"), full_page=True)
        assert not dialogs


def test_the_encoder_diagram_is_drawn_at_its_size_and_fills_the_screen_in_full_screen(browser_and_base):
    """Transformer block's diagram (an SVG image, ui/draw/diagrams.py) at 1280x720: drawn at the picture's own width
    in its column, and its full-screen button shows it as tall as the screen (Streamlit's full screen alone drew it
    no larger than in the page)."""
    browser, base = browser_and_base
    with opened(browser, base + "/Transformer_block", size=(1280, 720)) as (page, _):
        diagram = page.locator(".st-key-block_diagram").first
        diagram.scroll_into_view_if_needed()
        read = "el => { const i = el.querySelector('img'); return [i.getBoundingClientRect().width, " \
            "i.getBoundingClientRect().height, i.naturalWidth]; }"  # fmt: skip
        width, _, natural = diagram.evaluate(read)
        assert width == pytest.approx(natural, abs=1)
        diagram.hover()
        diagram.locator("button").first.click()
        page.wait_for_function(
            "el => el.querySelector('img').getBoundingClientRect().height > 0.85 * window.innerHeight",
            arg=diagram.element_handle(),
            timeout=10000,
        )
        assert_no_errors(page)


GRIDS_IN_PROJECTOR_VIEW = {  # tables that stay scrolling grids in the projector view, and why
    "/Step_by_step": 3,  # the three weight editors (edited, not read from afar)
    # every head's figures (where each head looks; how peaked it is), and every head's most-attended word for the
    # picked word: 72 rows each (over ui.draw.tables.PROJECTOR_MAX_ROWS)
    "/Real_model": 3,
}


@pytest.mark.parametrize("path", ["/", *(page_url(p) for p in PAGES), "/Compare?preset=2_why_scale"])
def test_projector_view_fits_1280x720(browser_and_base, path):
    """Every page in the projector view at 1280x720: larger type, the key numbers larger still, nothing cut or
    scrolling sideways, no error, and no axe-core violation."""
    browser, base = browser_and_base
    sep = "&" if "?" in path else "?"
    with opened(browser, base + path + sep + "view=projector", size=(1280, 720)) as (page, _):
        assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0  # collapsed
        size = page.evaluate("""() => parseFloat(getComputedStyle(
            document.querySelector('[data-testid="stMainBlockContainer"] p')).fontSize)""")
        assert size >= 18  # larger type than the default 16 px
        metric = page.evaluate("""() => { const m = document.querySelector('[data-testid="stMetricValue"]');
            return m ? parseFloat(getComputedStyle(m).fontSize) : null; }""")
        if metric is not None:  # the numbers a class reads are the largest text on the page, not smaller than prose
            assert metric >= 2 * size, (metric, size)
        assert horizontal_overflow(page) == []
        tables = projector_tables(page)  # drawn as text (ui/draw/tables.show_table), larger than the prose, not cut
        assert all(t["size"] >= size and t["fits"] for t in tables), tables
        grids = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stDataFrame"]').count()
        assert grids == GRIDS_IN_PROJECTOR_VIEW.get(path, 0), grids
        assert chart_warnings(page) == []
        assert_no_errors(page)
        assert_accessible(page, f"{path}, projector view, 1280x720")  # axe-core (tests/a11y_util.py)


def test_fast_arrow_keys_end_with_the_slider_and_the_url_on_the_last_value(browser_and_base):
    """121 arrow presses on Compare's temperature (A), 30 ms apart, each to the other side: the page stays
    connected and ends with the slider and the URL on the last value. (Before, the URL could stay on an older value
    than the slider: a run that started from the URL the browser sent with its request wrote nothing when that URL
    already named its value, and the run before it had just sent an older one; folded runs that referred to the
    browser's message cache closed the websocket with "Cached ForwardMsg MISS".) Whether the server also paces
    this page depends on who is slower here, the browser redrawing or the server running (on this machine the
    browser: 121 presses take 7-10 s); tests/test_protocol.py floods faster than any run and checks the pacing and
    its notice."""
    browser, base = browser_and_base
    with opened(browser, base + "/Compare?preset=2_why_scale") as (page, _):
        live_maps_off(page)  # A's temperature is then a slider of the page's, above the maps
        thumb = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[aria-label^="temperature (A)"]')
        thumb.first.focus()
        # Playwright's own presses take longer than a held key's 30 a second here, so the page sends them itself;
        # each key goes up 5 ms after it went down, as a finger's does (a keyup in the same task as its keydown
        # makes the slider send the value before the press, a synthetic-event artefact)
        page.evaluate(
            """async () => {
                const el = document.activeElement;
                const pause = (ms) => new Promise(r => setTimeout(r, ms));
                for (let i = 0; i < 121; i++) {
                    const key = i % 2 === 0 ? 'ArrowRight' : 'ArrowLeft';
                    el.dispatchEvent(new KeyboardEvent('keydown', {key, code: key, bubbles: true}));
                    await pause(5);
                    el.dispatchEvent(new KeyboardEvent('keyup', {key, code: key, bubbles: true}));
                    await pause(25);
                }
            }"""
        )
        wait_for_app(page)
        # a paced run may still be waiting for its turn (up to ui/server/fairness.PACE after the last run started, longer on
        # a loaded machine), and between two runs the page reads "notRunning": wait until the URL has caught up
        # with the slider, or 30 s
        try:
            page.wait_for_function(
                """(sel) => {
                    const el = document.querySelector(sel);
                    const v = el && el.getAttribute('aria-valuetext');
                    return v && location.search.includes('a_temperature=' + v);
                }""",
                arg='[data-testid="stMain"] [data-testid="stSlider"] input[aria-label^="temperature (A)"]',
                timeout=30000,
                polling=200,
            )
        except PlaywrightTimeout:
            pass  # the assertion below says what differs
        wait_for_app(page)
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-connection-state")
        assert state == "CONNECTED", [t for _, t in page.console][-5:]
        shown = thumb.first.get_attribute("aria-valuetext")
        url_value = re.search(r"[?&]a_temperature=([^&]*)", page.url)
        assert shown and url_value and url_value[1] == shown, (shown, url_value and url_value[1])
        assert not [t for _, t in page.console if "Cached ForwardMsg MISS" in t or "fatal error" in t]
        assert_no_errors(page)


LEAF_PAGES = {  # pages whose body a sidebar temperature reruns alone, and the label of that temperature (the
    # Playground's and Compare's temperatures are above their maps: tests/test_live_maps.py and the test below
    # release them)
    "/Step_by_step": "temperature",
    "/Softmax_saturation": "temperature",
    "/Multi-head": "temperature",
    "/Masks": "temperature",
    "/Positional_encoding": "temperature",
    "/Cross-attention": "temperature",
    "/Implementations": "temperature",
    "/Transformer_block": "temperature",
}


@pytest.mark.parametrize("path", list(LEAF_PAGES))
def test_body_reruns_keep_the_page_whole(browser_and_base, path):
    """Three arrow keys on the sidebar's temperature, each a body-only rerun: no console error (a body that wrote
    outside itself crashed the page with "Bad delta path"), the page still there, the URL on the last value."""
    browser, base = browser_and_base
    with opened(browser, base + path) as (page, dialogs):
        thumb = page.locator(
            f'[data-testid="stSidebar"] [data-testid="stSlider"] input[aria-label^="{LEAF_PAGES[path]}"]'
        ).first
        thumb.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(400)
            wait_for_app(page)
        shown = thumb.get_attribute("aria-valuetext")
        wait_for_address(page, f"**temperature={shown}**", timeout=60000)
        errors = [t for kind, t in page.console if kind == "error" and "Failed to load resource" not in t]
        assert errors == [], errors
        assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 1
        assert_no_errors(page)
        assert not dialogs
        assert_accessible(page)


def test_a_release_of_compares_live_temperature_reruns_its_body_in_place(browser_and_base):
    """A's temperature is the live maps' own control: three arrow keys move A's maps at once, and the release
    becomes A's setting (the URL, the opening sentence): every element drawn once, the sidebar as it was, no error.
    (That the release reruns only the body is counted at the protocol level: tests/test_live_feed.py.)"""
    from tests.test_live_maps import MAPS, three_steps_right

    browser, base = browser_and_base
    with opened(browser, base + "/Compare") as (page, dialogs):
        page.wait_for_selector(MAPS, timeout=120000)
        page.wait_for_function(
            "el => el.parentNode.__attentionExplorerLive && el.parentNode.__attentionExplorerLive.frames > 0",
            arg=page.locator(MAPS).first.element_handle(),
            timeout=60000,
        )
        before = page.evaluate(COUNT_ELEMENTS)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "temperature (A)" not in sidebar and "seq_len (tokens) (A)" in sidebar
        slider = page.locator(f'{MAPS} input[aria-label^="temperature τ (A)"]').first
        slider.focus()
        three_steps_right(page, slider)  # all three taken before τ is read
        tau = page.locator(MAPS).first.evaluate(
            "el => el.parentNode.__attentionExplorerLive.panels[0].setting.temperature"
        )
        assert tau > 1
        wait_for_address(page, lambda url: f"a_temperature={tau:g}" in url, timeout=60000)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text(f"temperature (A {tau:g}, B 1)").first.wait_for(timeout=60000)
        wait_for_app(page)
        assert page.evaluate(COUNT_ELEMENTS) == before
        assert page.locator('[data-testid="stSidebar"]').inner_text() == sidebar  # not redrawn, nothing moved
        assert_no_errors(page)
        assert not dialogs


def test_a_lent_page_comes_back_clean_and_a_failed_tests_page_is_not_lent_again(browser_and_base):
    """tests/page_pool.py: the next test gets the same page with none of the last test's listeners, storage or
    cookies, on about:blank; a page whose test failed is closed, and the next test gets a new one."""
    from tests.page_pool import borrowed_page

    browser, base = browser_and_base
    heard = []
    size = {"viewport": {"width": 1000, "height": 700}}  # a size of its own: no other test's page
    with borrowed_page(browser, **size) as page:
        page.on("console", lambda m: heard.append(m.text))
        page.goto(base + "/_stcore/health")
        page.evaluate("() => { localStorage.setItem('aexp', '1'); sessionStorage.setItem('aexp', '1'); }")
        page.context.add_cookies([{"name": "aexp", "value": "1", "url": base}])
        page.set_viewport_size({"width": 500, "height": 500})
        first = page
    with borrowed_page(browser, **size) as page:
        assert page is first and page.url == "about:blank"
        assert page.viewport_size == size["viewport"]
        assert page.context.cookies() == []
        page.goto(base + "/_stcore/health")
        assert page.evaluate("() => [localStorage.length, sessionStorage.length]") == [0, 0]
        page.evaluate("() => console.log('after')")
        page.wait_for_timeout(200)
        assert heard == []
    with pytest.raises(RuntimeError), borrowed_page(browser, **size) as page:
        assert page is first
        raise RuntimeError("a failed test")
    assert first.is_closed()
    with borrowed_page(browser, **size) as page:
        assert page is not first and not page.is_closed()
