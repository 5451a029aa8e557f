"""Every student in the room, checked in Chromium (issue 25).

- axe-core's WCAG 2.0/2.1/2.2 A and AA rules find nothing: every page at both test sizes at the default
  (tests/test_browser.py runs axe in the pages it opens anyway) and at a large setting (128 tokens, 8 heads, here),
  in classroom mode before and after the reveal, in the projector view, and after a keyboard walk redrew a page.
- With every axe run (tests/a11y_util.assert_accessible), what axe does not check: Vega's SVG text reaches AA
  contrast, and every chart and image has a text alternative of its own (not Vega's default "Vega visualization").
- Everything a mouse does a keyboard does: Tab reaches every control of the Playground in page order, each shows a
  visible focus, and the arrows, Enter and Space change the maps and the setting.
- The colour scales stay readable with the common colour-vision deficiencies: the viridis ramp and the blue-red
  scale, cut from a screenshot, are put through the Machado (2009) simulations of protanopia, deuteranopia and
  tritanopia; viridis keeps rising in lightness, and the diverging scale's two signs stay far apart.
- Students see the app, not Streamlit's developer chrome, and the page icons are drawn (Material Symbols, not
  emoji boxes): checked in the DOM and in a screenshot.
"""

import io
import re

import numpy as np
import pytest
from PIL import Image

from harness.server import wait_for_address, wait_for_app
from tests.a11y_util import assert_accessible
from tests.apptest_util import PAGES
from tests.test_browser import assert_no_errors, full_screenshot, opened, page_url
from ui.draw.images import BLANK, HATCH
from ui.skeleton.registry import predicting

pytestmark = pytest.mark.browser
LARGE = "seq_len=128&d_model=512&heads=8"


def _shots(tmp_path_factory):
    shots = tmp_path_factory.getbasetemp() / "screenshots"
    shots.mkdir(exist_ok=True)
    return shots


def _resize(page, size) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_timeout(500)
    wait_for_app(page)


@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_no_axe_violation_at_a_large_setting(browser_and_base, path):
    """128 tokens, 8 heads (d_model 512): maps become images and grids; at 1280x720, then at 1400x1000."""
    browser, base = browser_and_base
    url = base + ("/" if path == "streamlit_app.py" else page_url(path)) + "?" + LARGE
    with opened(browser, url, (1280, 720)) as (page, _):
        assert_no_errors(page)
        assert_accessible(page, f"{path} at 128 x 8, 1280x720")
        _resize(page, (1400, 1000))
        assert_accessible(page, f"{path} at 128 x 8, 1400x1000")


def _pick_second_with_the_keyboard(page) -> None:
    """Choose the prediction's second answer with the keyboard: a radio group (up to four answers) moves its
    choice with an arrow; a select box (more) opens with an arrow, one down, Enter."""
    main = page.locator('[data-testid="stMain"]')
    radio = main.locator('[data-testid="stRadio"]').filter(has_text="Your prediction")
    if radio.count():
        radio.locator("input").first.focus()
        page.keyboard.press("ArrowRight")
        second = radio.locator("input").nth(1)
        second.wait_for(state="attached")
        for _ in range(100):
            if second.is_checked():
                return
            page.wait_for_timeout(100)
        raise AssertionError("the arrow key did not move the prediction to its second answer")
    choice = main.locator('[data-testid="stSelectbox"]').filter(has_text="Your prediction").locator("input")
    choice.focus()
    page.keyboard.press("ArrowDown")
    page.locator('[role="option"]').first.wait_for()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")


@pytest.mark.parametrize("path", [page_url(p.path) for p in predicting()])
def test_no_axe_violation_in_classroom_mode_before_and_after_the_reveal(browser_and_base, path):
    """Every page that asks a question to predict (ui/skeleton/registry.predicting), before and after its reveal."""
    browser, base = browser_and_base
    with opened(browser, base + path + "?classroom=lock", (1280, 720)) as (page, _):
        main = page.locator('[data-testid="stMain"]')
        assert "Predict first" in main.inner_text()
        assert_accessible(page, f"{path}, classroom, before the reveal, 1280x720")
        _resize(page, (1400, 1000))
        assert_accessible(page, f"{path}, classroom, before the reveal, 1400x1000")
        _pick_second_with_the_keyboard(page)
        page.locator('button:has-text("Reveal the answer")').click()
        page.get_by_text("you predicted").first.wait_for(timeout=90000)
        wait_for_app(page)
        assert_no_errors(page)
        assert_accessible(page, f"{path}, classroom, after the reveal, 1400x1000")
        _resize(page, (1280, 720))
        assert_accessible(page, f"{path}, classroom, after the reveal, 1280x720")


# ---- the keyboard

DEEP_ACTIVE = """() => { let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; }"""
# What marks the focused element: outline or box-shadow of it or of the three boxes around it (Streamlit draws the
# focus ring of a slider on its thumb, of a toggle on its track), read focused and again with the focus gone.
FOCUS_STYLE = """(a) => { const out = []; let e = a;
    for (let k = 0; k < 4 && e && e.nodeType === 1; k++, e = e.parentElement) {
        const s = getComputedStyle(e);
        out.push([s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor, s.backgroundColor]);
        for (const c of e.children) { const t = getComputedStyle(c); out.push([t.boxShadow, t.outlineStyle]); }
    }
    return JSON.stringify(out); }"""
NAME = """(a) => a.tagName + ' ' + (a.getAttribute('type') || a.getAttribute('role') || '') + ': ' +
    (a.getAttribute('aria-label') || (a.labels && a.labels[0] && a.labels[0].innerText) || a.innerText || '')
        .replace(/\\s+/g, ' ').slice(0, 60)"""


def _url_temperature(url: str) -> float:
    return float(re.search(r"temperature=([\d.]+)", url)[1])


def _focused(page):
    return page.evaluate_handle(DEEP_ACTIVE).as_element()


def _tab_walk(page, stop, limit: int = 120) -> list[str]:
    """Press Tab until ``stop(name)`` holds for the focused element; check that each stop shows its focus (its look
    changes when the focus leaves). Returns the names passed."""
    seen, hidden = [], []
    for _ in range(limit):
        page.keyboard.press("Tab")
        el = _focused(page)
        name = el.evaluate(NAME)
        seen.append(name)
        if not name.startswith(("BODY", "MAIN")):
            focused = el.evaluate(FOCUS_STYLE)
            el.evaluate("e => e.blur()")
            blurred = el.evaluate(FOCUS_STYLE)
            el.evaluate("e => e.focus()")
            if focused == blurred:
                hidden.append(name)
        if stop(name):
            assert hidden == [], f"no visible focus on {hidden}"
            return seen
    raise AssertionError(f"Tab never reached the element; it passed {seen}")


def test_a_keyboard_alone_walks_the_playground_and_changes_the_maps(browser_and_base):
    """From the top of the page: Tab passes the page links, every sidebar control, the pickers and the live maps'
    controls in page order, each with a visible focus; the arrows move the live temperature (the maps redraw, and
    on release the sentences and URL follow), Enter on a map picks its head, the arrows pick a query, Space turns the
    maps' scaling off. axe still finds nothing on the redrawn page."""
    browser, base = browser_and_base
    url = base + "/Playground?seq_len=6&d_model=32&heads=2&temperature=1.0"
    with opened(browser, url) as (page, _):
        live = page.locator(".ae-live").first
        live.wait_for()
        seen = _tab_walk(page, lambda n: n.startswith("INPUT range: temperature τ"))
        for wanted in ("A : home Home", "INPUT range: seq_len", "INPUT range: temperature", "INPUT text: head"):
            assert any(s.startswith(wanted) for s in seen), (wanted, seen)
        frames = int(live.get_attribute("data-frames"))
        bars = page.locator(".ae-bars canvas").first
        before = bars.get_attribute("aria-label")
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        wait_for_address(page, lambda u: _url_temperature(u) > 1.0, timeout=60000)  # released: the page's setting
        assert int(live.get_attribute("data-frames")) > frames and float(live.get_attribute("data-temperature")) > 1
        wait_for_app(page)
        assert bars.get_attribute("aria-label") != before  # the weights drawn changed
        # on to head 2's map: Enter picks the head, ArrowDown the next query
        _tab_walk(page, lambda n: n.startswith("CANVAS img: head 2"))
        page.keyboard.press("Enter")
        page.locator(".ae-bars .ae-title").filter(has_text="in head 2").wait_for(timeout=30000)
        page.keyboard.press("ArrowDown")
        page.locator(".ae-bars .ae-title").filter(has_text="query #2").wait_for(timeout=30000)
        wait_for_app(page)
        # released: Python took the pick (the page's own sentence names query 2)
        page.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"]').filter(
            has_text="Query t2 attends most to"
        ).wait_for(timeout=60000)
        # Space on the maps' scaling checkbox (the Playground's only scaling control): the setting changes (the URL
        # says scaled=0)
        toggle = page.locator('.ae-live input[type="checkbox"][aria-label^="scale by"]').first
        toggle.focus()
        assert "scale" in _focused(page).evaluate(NAME)
        page.keyboard.press("Space")
        wait_for_address(page, "**scaled=0**", timeout=60000)
        wait_for_app(page)
        assert_no_errors(page)
        assert_accessible(page, "Playground after the keyboard walk")


# ---- colour-vision deficiencies, simulated on screenshots

# Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
}


def _linear(rgb: np.ndarray) -> np.ndarray:
    c = rgb / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(lin: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of linear RGB ``(n, 3)``."""
    xyz = (
        np.clip(lin, 0, 1)
        @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
        / np.array([0.95047, 1.0, 1.08883])
    )
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], 1)


def _simulated(ramp: np.ndarray) -> dict[str, np.ndarray]:
    """The ramp's CIELAB as seen with normal vision and with each simulated deficiency."""
    lin = _linear(ramp.astype(np.float64))
    return {"normal": _lab(lin)} | {name: _lab(lin @ np.asarray(m).T) for name, m in CVD.items()}


def _ramp(png: bytes, vertical: bool | None = None) -> np.ndarray:
    """The colours along the middle line of a screenshot of a colour ramp, ``(n, 3)``, low value first. Its
    orientation, unless given, is the screenshot's longer side (a legend under a map lies flat)."""
    a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64)
    if vertical is None:
        vertical = a.shape[0] > a.shape[1]
    line = a[:, a.shape[1] // 2] if vertical else a[a.shape[0] // 2]
    line = line[2:-2]  # the edges may be anti-aliased against the page
    return line[::-1] if vertical else line  # a vertical legend has its largest value on top


def test_colour_scales_stay_readable_with_colour_blindness_and_on_the_projector(browser_and_base, tmp_path_factory):
    """The projector view of the Playground at 1400x1000 (screenshot saved, axe clean). Its live maps' viridis legend:
    lightness rises from 0 to 1 with normal vision and with each simulated deficiency (so order survives), over at
    least 60 L* units. The blue-red legend of X and Z: lightest in the middle, and its two ends (the signs) stay at
    least 25 CIELAB units apart with each deficiency. Masked cells (hatched grey) keep their pattern with each."""
    browser, base = browser_and_base
    with opened(browser, base + "/Playground?view=projector") as (page, _):
        full_screenshot(page, _shots(tmp_path_factory) / "projector_Playground_1400x1000.png")
        assert_accessible(page, "Playground, projector view")
        viridis = _ramp(page.locator(".ae-live canvas[aria-hidden]").first.screenshot(), vertical=False)
        gradient = page.locator(".ae-outputs canvas[aria-hidden]").first  # X and Z, drawn by the browser
        gradient.scroll_into_view_if_needed()
        diverging = _ramp(gradient.screenshot(), vertical=False)
    report = {}
    for vision, lab in _simulated(viridis).items():
        L = np.convolve(lab[:, 0], np.ones(5) / 5, mode="valid")  # screenshot noise of a pixel or two
        assert np.all(np.diff(L) > -0.5), (vision, L.round(1).tolist())
        assert L[-1] - L[0] > 60, (vision, L[0], L[-1])
        report[vision] = (round(float(L[0]), 1), round(float(L[-1]), 1))
    # masked cells of the server's images: grey with darker diagonal lines (ui/draw/images.hatch); the grey alone is as
    # light as viridis' yellow (a weight of 1) and, with tritanopia, nearly as grey, so the pattern must carry it
    greys = np.array([BLANK, HATCH], dtype=np.float64)
    for vision in ("normal", *CVD):
        top, blank, lines = _simulated(np.vstack([viridis[-1:], greys]))[vision]
        assert blank[0] - lines[0] > 20, vision  # the hatch shows against its grey
        assert np.linalg.norm(top - lines) > 20, vision
    for vision, lab in _simulated(diverging).items():
        n = len(lab)
        middle = int(np.argmax(lab[:, 0]))
        assert n // 3 < middle < 2 * n // 3, vision  # white in the middle
        ends = np.linalg.norm(lab[: n // 10].mean(0) - lab[-n // 10 :].mean(0))
        assert ends > 25, (vision, ends)
    print("viridis L* from 0 to 1:", report)


# ---- the classroom server's look


def test_students_see_the_app_without_developer_chrome_and_with_drawn_icons(browser_and_base, tmp_path_factory):
    """client.toolbarMode = "minimal": no Deploy button and no app menu (on 127.0.0.1 the default "auto" shows both).
    Page icons are Material Symbols drawn from Streamlit's font: each is one glyph about as wide as it is tall (an
    icon name the font failed to draw would show as a word), in the sidebar's links and in every page's title."""
    browser, base = browser_and_base
    with opened(browser, base + "/Step_by_step") as (page, _):
        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
        assert page.locator('[data-testid="stMainMenu"]').count() == 0
        assert page.evaluate("() => document.fonts.check('24px \"Material Symbols Rounded\"')")
        icons = page.locator('[data-testid="stSidebar"] nav[aria-label="Pages"] a .icon')  # ui/skeleton/page_list
        assert icons.count() == len(PAGES) + 1
        title_icon = page.locator('[data-testid="stMainBlockContainer"] h1 span[role="img"]')
        assert title_icon.count() == 1 and title_icon.get_attribute("aria-label") == "calculate icon"
        for box in [icons.nth(k).bounding_box() for k in range(icons.count())] + [title_icon.bounding_box()]:
            assert 0 < box["width"] <= 1.3 * box["height"], box
        page.screenshot(path=str(_shots(tmp_path_factory) / "icons_and_toolbar_Step_by_step.png"))
