"""The sidebar's page list, one element (ui/skeleton/page_list.py, .js, .css).

AppTest: every page draws one list of every registered page in reading order, itself marked, and no page link in
the sidebar. Protocol (a real server, the front end's own messages): a click's trigger switches the session to the
page it names, keeping the link's query; anything else a browser could send leaves the page where it was, without
an error. Chromium: a click and Enter open the page inside the app (the tab's script and its session stay), the
browser's Back returns to the page before, a Ctrl-click opens a new tab at the page's address, and the links are
text, in a navigation landmark, with the current page said to assistive technology.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.protocol import StreamlitClient
from harness.server import wait_for_address, wait_for_app
from tests.apptest_util import PAGES, app, run_ok
from ui.skeleton import page_list
from ui.skeleton.registry import HOME, HOME_INFO, address
from ui.skeleton.registry import PAGES as REGISTRY

NAME = "attention_explorer.page_list"
EVERY = [HOME, *PAGES]


def the_list(at) -> dict:
    found = [c for c in at.sidebar.get("bidi_component") if c.proto.component_name == NAME]
    assert len(found) == 1, f"{len(found)} page lists in the sidebar"
    return json.loads(found[0].proto.json)


@pytest.mark.parametrize("path", EVERY)
def test_every_page_lists_every_page_once_itself_marked(path):
    at = run_ok(app(path))
    data = the_list(at)
    expected = [[p.address, p.label, p.symbol] for p in (HOME_INFO, *REGISTRY)]
    assert data["pages"] == expected
    assert data["current"] == ("" if path == HOME else Path(path).stem)
    assert data["base"] == ""
    assert not at.sidebar.get("page_link"), "the sidebar lists the pages once, in the list"


def test_the_addresses_and_symbols_are_streamlits():
    assert HOME_INFO.address == "" and address(HOME) == ""
    assert next(p for p in REGISTRY if p.path == "pages/Step_by_step.py").address == "Step_by_step"
    assert all(p.icon == f":material/{p.symbol}:" for p in (HOME_INFO, *REGISTRY))


def test_the_module_writes_text_not_markup():
    js = (Path(page_list.__file__).parent / "page_list.js").read_text(encoding="utf-8")
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "textContent = label" in js


# ---- protocol: what the front end sends for a click


class ListClient(StreamlitClient):
    """A protocol client that can press the page list's trigger."""

    def list_id(self) -> str:
        for kind, proto, _ in self.page.nodes.values():
            if kind == "bidi_component" and proto.component_name == NAME:
                return proto.id
        raise LookupError("no page list")

    async def choose(self, value) -> object:
        """Send what the module's setTriggerValue("go", value) sends: the trigger beside every widget's state."""
        cs = ClientState(query_string=self.query_string, page_script_hash=self.page_script_hash)
        trigger = _make_trigger_id(self.list_id(), "events")  # Streamlit's id of a component's trigger
        cs.widget_states.widgets.append(
            WidgetState(id=trigger, json_trigger_value=json.dumps([{"event": "go", "value": value}]))
        )
        return await self._run(cs)


def title(c: StreamlitClient) -> str:
    return c.page.texts()[0]


@pytest.mark.slow
def test_a_click_switches_the_session_and_anything_else_is_dropped(app_server):
    base = app_server[0]

    async def go():
        async with ListClient(base, "Playground?seq_len=11") as c:
            assert title(c).endswith("Playground")
            playground = c.page_script_hash
            r = await c.choose("Masks")
            assert r.ok, r.errors
            assert title(c).endswith("Masks") and c.page_script_hash != playground
            assert c.query_params["seq_len"] == "11", "the setting comes along, as after a page link"
            masks = c.page_script_hash
            for bad in (
                "Nope",
                "../streamlit_app",
                "//evil.example",
                "pages/Compare.py",
                7,
                None,
                ["Compare"],
                {"a": 1},
            ):
                r = await c.choose(bad)
                assert r.errors == () and r.status == "finished", (bad, r.errors)
                assert c.page_script_hash == masks and title(c).endswith("Masks"), bad
            r = await c.choose("")
            assert r.ok and title(c).endswith("Attention Explorer"), "Home's address is the app's root"

    asyncio.run(go())


# ---- Chromium


@pytest.mark.browser
def test_the_list_opens_pages_inside_the_app_and_back_returns(browser_and_base):
    from tests.a11y_util import assert_accessible
    from tests.page_pool import borrowed_page, load_app
    from tests.test_browser import assert_no_errors

    browser, base = browser_and_base
    with borrowed_page(browser, viewport={"width": 1280, "height": 720}) as page:
        load_app(page, f"{base}/Playground?seq_len=11")
        page.evaluate("window.__sameTab = 42")  # a reload or a new document would lose it
        nav = page.locator('[data-testid="stSidebar"] nav[aria-label="Pages"]')
        assert nav.locator("a").count() == len(EVERY)
        assert nav.locator('a[aria-current="page"]').inner_text().endswith("Playground")
        assert nav.locator("a", has_text="Masks").get_attribute("href") == "/Masks"

        nav.locator("a", has_text="Masks").click()
        wait_for_address(page, "**/Masks?**")
        wait_for_app(page)
        assert "Masks" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert page.evaluate("window.__sameTab") == 42 and "seq_len=11" in page.url
        assert nav.locator('a[aria-current="page"]').inner_text().endswith("Masks")

        nav.locator("a", has_text="Compare").focus()
        page.keyboard.press("Enter")  # a keyboard user's choice
        wait_for_address(page, "**/Compare?**")
        wait_for_app(page)
        assert page.evaluate("window.__sameTab") == 42

        page.go_back()  # the address without the page's own settings, then the page before
        page.go_back()
        wait_for_address(page, "**/Masks?**")
        wait_for_app(page)
        assert "Masks" in page.inner_text('[data-testid="stMainBlockContainer"] h1')

        with page.context.expect_page() as opened:  # Ctrl-click: the page's address in a new tab, this one stays
            nav.locator("a", has_text="Train").click(modifiers=["Control"])
        other = opened.value
        other.wait_for_load_state()
        assert other.url == f"{base}/Train"
        other.close()
        assert "Masks" in page.inner_text('[data-testid="stMainBlockContainer"] h1')
        assert_no_errors(page)
        assert_accessible(page, "Masks with the page list")
