import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def app_server():
    """One `streamlit run` on 127.0.0.1 for every browser test of the run (starting it costs seconds)."""
    from harness.server import streamlit_server

    with streamlit_server() as (base, proc):
        yield base, proc


@pytest.fixture(scope="module")
def browser_and_base(app_server):
    """A headless Chromium (Debian's) for the tests of one module, on the shared server. Playwright's sync API
    keeps an event loop running on the test thread while it is open, so it is closed at the end of each module:
    the protocol tests that follow run their own loops with asyncio.run."""
    from playwright.sync_api import sync_playwright

    from harness.server import CHROMIUM_FLAGS, chromium_path

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield browser, app_server[0]
        browser.close()
