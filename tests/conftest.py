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
    from tests.page_pool import release

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield browser, app_server[0]
        release(browser)
        browser.close()


# ---- the order modules run in: the longest first, so that two workers (scripts/test.sh runs pytest-xdist with
# --dist loadfile, a module's tests on one worker) finish together instead of one waiting on a long module at the end

# seconds a test of each kind took on this project's 2-core machine (docs/BENCHMARKS.md, "The test suite")
SECONDS_PER_TEST = {"browser": 5.0, "slow": 3.0}
SECONDS_PER_FAST_TEST = 0.1


def module_cost(items) -> float:
    """The seconds a module's tests are expected to take: its ``COST_SECONDS`` where it says (a module whose few
    tests build images or train), else an estimate from its tests' markers."""
    module = items[0].module
    if hasattr(module, "COST_SECONDS"):
        return module.COST_SECONDS
    return sum(
        next((s for m, s in SECONDS_PER_TEST.items() if item.get_closest_marker(m)), SECONDS_PER_FAST_TEST)
        for item in items
    )


def pytest_collection_modifyitems(config, items):
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    ordered = sorted(modules.values(), key=module_cost, reverse=True)  # stable: ties keep their file order
    items[:] = [item for module in ordered for item in module]
