"""An AppTest of one page, opened as a browser opens it: for the page tests and the benchmarks that time pages."""

from pathlib import Path

from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest

import ui.session.partial
from ui.server import fairness
from ui.session.state import CODE_OPEN, LIVE_KEY, SHARE_OPEN
from ui.skeleton.registry import PAGES as REGISTRY

ROOT = Path(__file__).resolve().parents[1]
PAGES = [p.path for p in REGISTRY]  # every page, in reading order (ui/skeleton/registry checks it against pages/)
# Streamlit 1.67's AppTest gives every run of every AppTest this one session id (testing/v1/local_script_runner.py)
APPTEST_SESSION = "test session id"
_components: BidiComponentManager | None = None
_apptest_run = AppTest._run


def _run_as_its_own_session(self: AppTest, *args, **kwargs) -> AppTest:
    """AppTest's ``_run``, with two things a server does once made once here:

    - ui.server.fairness paces a session whose requests pile up. Every AppTest run is two requests under the one
      session id above, so four AppTests in two seconds looked like a flooding student and the next run slept
      about a second (the fast tests took 698 s with it, 133 s without). A browser's session is one student; here
      each run is.
    - The custom components' registry: AppTest scans every installed package for component manifests in each new
      AppTest's first run (0.1-0.15 s); a server scans once, and so do the tests (one registry per process).
    """
    global _components
    if self._bidi_component_manager is None:
        if _components is None:
            _components = BidiComponentManager()
            _components.discover_and_register_components(start_file_watching=False)
        self._bidi_component_manager = _components
    fairness.forget(APPTEST_SESSION)
    return _apptest_run(self, *args, **kwargs)


AppTest._run = _run_as_its_own_session


def app(
    path: str,
    query: dict | None = None,
    timeout: float = 60,
    partial: bool = False,
    live: bool = False,
    opened: bool = True,
) -> AppTest:
    """An AppTest for a page (path relative to the repo root), optionally opened with URL parameters.

    The app is always loaded from its entry script and switched to the page, as a browser would,
    so that links between pages resolve. Partial reruns (ui/session/partial.py) are off unless ``partial``: after a
    body-only rerun AppTest holds only the body's elements, where a browser keeps the rest of the page. Live
    maps (ui/live) are off unless ``live``: AppTest runs no JavaScript, so the static charts, drawn from the same
    numbers, are what it can assert on (tests/test_live_maps.py checks the live path in Chromium). The share box and
    "Show the code that ran" are open unless not ``opened``: closed, they draw nothing (a learner opens them), and
    the tests read the share link and the code.
    """
    ui.session.partial.ENABLED = partial
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
    at.session_state[f"{LIVE_KEY}_kept"] = live
    at.session_state[SHARE_OPEN] = at.session_state[CODE_OPEN] = opened
    for k, v in (query or {}).items():
        at.query_params[k] = v
    if path != "streamlit_app.py":
        at.switch_page(path)
    return at
