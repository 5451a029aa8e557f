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
def browser_and_base():
    """One `streamlit run` on 127.0.0.1 and one headless Chromium (Debian's) for every browser test of the run:
    starting them costs seconds each, and CI pays it once."""
    from playwright.sync_api import sync_playwright

    from tests.server_util import CHROMIUM_FLAGS, chromium_path, streamlit_server

    with streamlit_server() as (base, _proc):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            yield browser, base
            browser.close()
