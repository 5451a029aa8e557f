"""Helpers for AppTest page tests."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

import ui.partial
from ui.registry import PAGES as REGISTRY
from ui.state import LIVE_KEY

ROOT = Path(__file__).resolve().parents[1]
PAGES = [p.path for p in REGISTRY]  # every page, in reading order (ui/registry checks it against pages/)


def app(
    path: str, query: dict | None = None, timeout: float = 60, partial: bool = False, live: bool = False
) -> AppTest:
    """An AppTest for a page (path relative to the repo root), optionally opened with URL parameters.

    The app is always loaded from its entry script and switched to the page, as a browser would,
    so that links between pages resolve. Partial reruns (ui/partial.py) are off unless ``partial``: after a
    body-only rerun AppTest holds only the body's elements, where a browser keeps the rest of the page. Live
    maps (ui/live) are off unless ``live``: AppTest runs no JavaScript, so the static charts, drawn from the same
    numbers, are what it can assert on (tests/test_live_maps.py checks the live path in Chromium).
    """
    ui.partial.ENABLED = partial
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
    at.session_state[f"{LIVE_KEY}_kept"] = live
    for k, v in (query or {}).items():
        at.query_params[k] = v
    if path != "streamlit_app.py":
        at.switch_page(path)
    return at


APP_WIDE_COMPONENTS = (
    "ae_sidebar_closer",
    "pulse_keep",
    "pulse_go",
)  # every page's (ui/sidebar.py, ui/pulse_device.py)


def page_components(at: AppTest) -> list:
    """The custom components a page draws of its own (live maps, the Real model's view), without the app-wide ones."""
    return [c for c in at.get("bidi_component") if c.key not in APP_WIDE_COMPONENTS]


def run_ok(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_widget(at, key, value):
    """Set the widget with ``key`` (whatever its kind) to ``value``."""
    for kind in (
        "slider",
        "select_slider",
        "number_input",
        "text_input",
        "toggle",
        "checkbox",
        "selectbox",
        "multiselect",
    ):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            found[0].set_value(value)
            return at
    raise LookupError(key)


def widget_count(at) -> int:
    """How many controls the last run drew (0 after a body-only rerun, whose elements AppTest keeps alone)."""
    return sum(len(getattr(at, k)) for k in ("slider", "select_slider", "number_input", "toggle", "selectbox"))


def texts(at: AppTest) -> str:
    """All markdown, caption, info, warning and error text of the page, joined."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "latex", "title", "subheader"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return "\n".join(parts)


def chart_datasets(element):
    """The datasets of a vega_lite_chart element as pandas DataFrames (Streamlit sends them as Arrow)."""
    import json

    from streamlit import dataframe_util

    frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
    spec = json.loads(element.proto.spec)
    if isinstance(spec.get("datasets"), dict):
        import pandas as pd

        frames += [pd.DataFrame(v) for v in spec["datasets"].values() if isinstance(v, list)]
    if element.proto.HasField("data") and element.proto.data.data:
        frames.append(dataframe_util.convert_arrow_bytes_to_pandas_df(element.proto.data.data))
    return frames


def chart_titles(at) -> list[str]:
    """Titles of every heatmap on the page: Vega-Lite chart titles and image captions (up to the first '(')."""
    import json

    titles = []
    for el in at.get("vega_lite_chart"):
        t = json.loads(el.proto.spec).get("title")
        titles.append(t if isinstance(t, str) else (t or {}).get("text", "") if isinstance(t, dict) else "")
    for el in at.get("image"):
        titles += [img.caption.split(" (")[0] for img in el.proto.imgs]
    return titles
