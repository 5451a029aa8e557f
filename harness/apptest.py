"""An AppTest of one page, opened as a browser opens it: for the page tests and the benchmarks that time pages."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

import ui.session.partial
from ui.session.state import LIVE_KEY
from ui.skeleton.registry import PAGES as REGISTRY

ROOT = Path(__file__).resolve().parents[1]
PAGES = [p.path for p in REGISTRY]  # every page, in reading order (ui/skeleton/registry checks it against pages/)


def app(
    path: str, query: dict | None = None, timeout: float = 60, partial: bool = False, live: bool = False
) -> AppTest:
    """An AppTest for a page (path relative to the repo root), optionally opened with URL parameters.

    The app is always loaded from its entry script and switched to the page, as a browser would,
    so that links between pages resolve. Partial reruns (ui/session/partial.py) are off unless ``partial``: after a
    body-only rerun AppTest holds only the body's elements, where a browser keeps the rest of the page. Live
    maps (ui/live) are off unless ``live``: AppTest runs no JavaScript, so the static charts, drawn from the same
    numbers, are what it can assert on (tests/test_live_maps.py checks the live path in Chromium).
    """
    ui.session.partial.ENABLED = partial
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
    at.session_state[f"{LIVE_KEY}_kept"] = live
    for k, v in (query or {}).items():
        at.query_params[k] = v
    if path != "streamlit_app.py":
        at.switch_page(path)
    return at
