"""The Real model page in Chromium on the embedded model: the model view's canvas is drawn, and hovering a cell
names the layer, head, query, key and the weight the page's own sentence states; at 512 tokens too."""

import json
import re
from urllib.parse import quote

import pytest

from attention_core.config import DEFAULT_SENTENCE
from attention_core.embedded import EMBEDDED_ID
from tests.test_browser import assert_no_errors, horizontal_overflow, opened
from ui.compute import cached_attention_run

pytestmark = pytest.mark.browser
LONG = " ".join([DEFAULT_SENTENCE + ", and the street was wide."] * 40)  # 3,480 characters, more than 512 tokens


def hover_cell(page, layer: int, head: int, i: int, j: int) -> str:
    """Move the pointer over cell (query i, key j) of a head's tile in the grid; return the tooltip's text."""
    grid = page.locator(".mv-grid")
    grid.scroll_into_view_if_needed()
    g = json.loads(page.locator(".mv").get_attribute("data-geometry"))
    T = int(page.locator(".mv").get_attribute("data-drawn"))
    box, width = grid.bounding_box(), grid.evaluate("c => c.width")
    scale = box["width"] / width
    x = g["left"] + head * (g["side"] + g["gap"]) + (j + 0.5) * g["side"] / T
    y = g["top"] + layer * (g["side"] + g["gap"]) + (i + 0.5) * g["side"] / T
    page.mouse.move(box["x"] + x * scale, box["y"] + y * scale)
    page.wait_for_timeout(100)
    return page.locator(".mv-tip").text_content()


def test_model_view_hover_names_the_cell_the_sentence_names(browser_and_base):  # noqa: F811
    browser, base = browser_and_base
    with opened(browser, base + "/Real_model") as (page, _):
        page.wait_for_selector('.mv[data-drawn="15"]', timeout=60000)
        assert_no_errors(page)
        assert horizontal_overflow(page) == []
        body = page.inner_text('[data-testid="stMainBlockContainer"]')
        layer, head, weight = re.search(r"in layer (\d+), head (\d+), “it” gives “animal” ([\d.]+)", body).groups()
        tip = hover_cell(page, int(layer) - 1, int(head) - 1, 10, 2)
        assert tip == f"layer {layer}, head {head}: query #11 “it” → key #3 “animal”, weight ≈ {weight}"
        label = page.locator(".mv-label").text_content()
        assert label.startswith(f"layer {layer}, head {head} enlarged") and "15 x 15" in label
        detail = page.locator(".mv-detail").bounding_box()  # the same head enlarged: hover its cell (it, animal)
        page.mouse.move(detail["x"] + detail["width"] * 2.5 / 15, detail["y"] + detail["height"] * 10.5 / 15)
        page.wait_for_timeout(100)
        assert page.locator(".mv-tip").text_content() == tip
        grid_label = page.locator(".mv-grid").get_attribute("aria-label")
        assert grid_label.startswith("Model view: 6 layers x 12 heads") and "15 x 15" in grid_label


def test_model_view_at_512_tokens_draws_every_head_with_hover(browser_and_base):  # noqa: F811
    browser, base = browser_and_base
    with opened(browser, f"{base}/Real_model?tokens=512&text={quote(LONG)}") as (page, _):
        page.wait_for_selector('.mv[data-drawn="512"]', timeout=120000)
        assert_no_errors(page)
        assert horizontal_overflow(page) == []
        assert "The sentence has" in page.inner_text('[data-testid="stMainBlockContainer"]')
        tip = hover_cell(page, 0, 2, 100, 99)  # layer 1, head 3: the previous-token head
        found = re.fullmatch(r"layer 1, head 3: query #(\d+) “(.+)” → key #(\d+) “(.+)”, weight ≈ ([\d.]+)", tip)
        assert found, tip
        q, k = int(found[1]) - 1, int(found[3]) - 1
        assert abs(q - 100) <= 1 and abs(k - 99) <= 1  # the cell under the pointer (a pixel is 6.4 x 6.4 cells)
        arun = cached_attention_run(EMBEDDED_ID, LONG, 512)  # Python's numbers for the same sentence
        assert (found[2], found[4]) == (arun.tokens[q], arun.tokens[k])
        assert float(found[5]) == pytest.approx(float(arun.attentions[0, 2, q, k]), abs=0.5 / 255 + 0.005)


def test_typed_html_stays_text_in_every_view(browser_and_base):  # noqa: F811
    browser, base = browser_and_base
    text = '<img src=x onerror="alert(1)"> the <b>animal</b>'
    with opened(browser, f"{base}/Real_model?text={quote(text)}") as (page, dialogs):
        page.wait_for_selector(".mv[data-drawn]", timeout=60000)
        assert_no_errors(page)
        tip = hover_cell(page, 0, 0, 1, 1)
        assert tip.startswith("layer 1, head 1: query #2 “<” → key #2 “<”"), tip  # the token, as text
        assert page.locator(".mv img, .mv b").count() == 0
        assert page.locator('[data-testid="stMainBlockContainer"] img[src="x"]').count() == 0
        assert not dialogs
