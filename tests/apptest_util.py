"""Helpers for AppTest page tests (the AppTest of a page itself, ``app``, is harness/apptest.py's)."""

from streamlit.testing.v1 import AppTest

from harness.apptest import PAGES, ROOT, app  # noqa: F401 - the page tests import them from here

APP_WIDE_COMPONENTS = (
    "ae_sidebar_closer",
    "pulse_keep",
    "pulse_go",
)  # every page's (ui/skeleton/sidebar.py, ui/classroom/pulse_device.py)


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
    """The datasets of a vega_lite_chart element as pandas DataFrames (Streamlit sends them as Arrow); a heatmap's
    one row of cell texts as its cells (r, c, v, t), as the spec's transform makes them in the browser."""
    import json

    from streamlit import dataframe_util

    from ui.draw.charts import heatmap_cells

    spec = json.loads(element.proto.spec)
    frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
    if any("t" in t.get("flatten", ()) for t in spec.get("transform", [])):  # a heatmap's cells in one row
        n_cols = len(spec["encoding"]["x"]["scale"]["domain"])
        frames = [heatmap_cells(f, n_cols) if list(f.columns) in (["s"], ["s", "u"]) else f for f in frames]
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
