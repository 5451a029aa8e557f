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


def hover_detail(page, i: int, j: int) -> str:
    """Move the pointer over cell (query i, key j) of the enlarged head; return the tooltip's text."""
    g = json.loads(page.locator(".mv").get_attribute("data-detail-geometry"))
    detail = page.locator(".mv-detail")
    detail.scroll_into_view_if_needed()
    box, width = detail.bounding_box(), detail.evaluate("c => c.width")
    scale = box["width"] / width
    page.mouse.move(
        box["x"] + (g["margin"] + (j + 0.5) * g["k"]) * scale, box["y"] + (g["margin"] + (i + 0.5) * g["k"]) * scale
    )
    page.wait_for_timeout(100)
    return page.locator(".mv-tip").text_content()


def pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the page's selectbox labelled ``label`` (as a learner does, with the pointer)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True))
    field = box.locator("input")
    field.scroll_into_view_if_needed()
    for _ in range(5):  # the list opens on a click once the page has settled after a rerun
        field.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=3000)
            return
        except Exception:  # noqa: BLE001 (playwright's TimeoutError: try again)
            page.keyboard.press("Escape")
    raise AssertionError(f"the {label!r} selectbox did not offer {option!r}")


def test_model_view_hover_names_the_cell_the_sentence_names(browser_and_base):  # noqa: F811
    browser, base = browser_and_base
    arun = cached_attention_run(EMBEDDED_ID, DEFAULT_SENTENCE, 128)
    with opened(browser, base + "/Real_model") as (page, _):
        page.wait_for_selector('.mv[data-drawn="15"]', timeout=60000)
        assert_no_errors(page)
        assert horizontal_overflow(page) == []
        body = page.inner_text('[data-testid="stMainBlockContainer"]')
        layer, head = map(int, re.search(r"Head view: layer (\d+), head (\d+)", body).groups())
        # the enlarged head is the one the pickers name, labelled with its tokens, before any hover
        page.wait_for_selector(f'.mv[data-detail="{layer - 1},{head - 1}"]', timeout=10000)
        label = page.locator(".mv-label").text_content()
        assert label.startswith(f"layer {layer}, head {head} enlarged, the head the layer and head pickers below name")
        assert "15 x 15, every token labelled" in label
        weight = f"{float(arun.attentions[layer - 1, head - 1, 10, 2]):.2f}"
        tip = hover_cell(page, layer - 1, head - 1, 10, 2)
        assert tip == f"layer {layer}, head {head}: query #11 “it” → key #3 “animal”, weight ≈ {weight}"
        assert hover_detail(page, 10, 2) == tip  # the same head enlarged: its cell (it, animal)
        grid_label = page.locator(".mv-grid").get_attribute("aria-label")
        assert grid_label.startswith("Model view: 6 layers x 12 heads") and "15 x 15" in grid_label
        # hovering another tile enlarges it; leaving the grid returns to the pickers' head
        hover_cell(page, 0, 2, 5, 4)
        assert page.locator(".mv").get_attribute("data-detail") == "0,2"
        assert "the head under the pointer" in page.locator(".mv-label").text_content()
        page.mouse.move(1, 1)
        page.wait_for_selector(f'.mv[data-detail="{layer - 1},{head - 1}"]', timeout=5000)
        # the pickers move the enlarged head: layer 2, head 3
        pick(page, "layer", "layer 2 (#2)")
        page.wait_for_selector(f'.mv[data-detail="1,{head - 1}"]', timeout=30000)
        pick(page, "head", "head 3")
        page.wait_for_selector('.mv[data-detail="1,2"]', timeout=30000)
        assert page.locator(".mv-label").text_content().startswith("layer 2, head 3 enlarged, the head the layer")
        assert hover_detail(page, 4, 3) == hover_cell(page, 1, 2, 4, 3)  # the same numbers as its tile
        assert_no_errors(page)


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


@pytest.mark.parametrize("size", [(390, 844), (1280, 720), (1400, 1000)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_model_view_names_its_heads_without_overlap_at_every_width(browser_and_base, size):  # noqa: F811
    """The grid's column labels are canvas text: "head n" where a tile is wide enough, else the numbers under one
    "head" in the corner, never two labels over each other (on a phone twelve "head n" ran into one line). At 1280
    and 390 px the twelve tiles are too narrow for "head 12"; every head is still named, in order."""
    browser, base = browser_and_base
    with opened(browser, base + "/Real_model", size=size) as (page, _):
        assert_no_errors(page)
        view = page.locator(".mv")
        view.scroll_into_view_if_needed()
        page.locator(".mv[data-drawn]").wait_for()
        labels = json.loads(view.get_attribute("data-head-labels"))
        g = json.loads(view.get_attribute("data-geometry"))
        drawn = labels["drawn"]
        assert len(drawn) == 12  # the embedded model's twelve heads, each named
        for a, b in zip(drawn, drawn[1:]):
            assert a["x"] + a["width"] / 2 < b["x"] - b["width"] / 2, (a, b)  # apart
        whole = all(d["text"] == f"head {i + 1}" for i, d in enumerate(drawn))
        numbers = all(d["text"] == str(i + 1) for i, d in enumerate(drawn)) and labels["corner"] == "head"
        assert whole or numbers, labels
        assert whole is (g["side"] + g["gap"] - 4 >= max(d["width"] for d in drawn) and labels["corner"] == "")
        grid = page.locator(".mv-grid")
        scale = grid.bounding_box()["width"] / grid.evaluate("c => c.width")
        assert scale > 0.99  # drawn at its own size: the 13 px labels are 13 px on screen
