"""Helpers for AppTest page tests (the AppTest of a page itself, ``app``, is harness/apptest.py's)."""

from streamlit.testing.v1 import AppTest

from harness.apptest import PAGES, ROOT, app  # noqa: F401 - the page tests import them from here

APP_WIDE_COMPONENTS = (
    "ae_pages",
    "pulse_keep",
    "pulse_go",
)  # every page's (ui/skeleton/page_list.py, ui/classroom/pulse_device.py)


HEATMAP_COMPONENTS = ("attention_explorer.heatmap", "attention_explorer.heatmap_module")  # read with heatmaps()


def page_components(at: AppTest) -> list:
    """The custom components a page draws of its own (live maps, the Real model's view), without the app-wide ones
    and without the heatmaps drawn on a canvas (:func:`heatmaps`)."""
    return [
        c
        for c in at.get("bidi_component")
        if c.key not in APP_WIDE_COMPONENTS and c.proto.component_name not in HEATMAP_COMPONENTS
    ]


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


def heatmaps(at: AppTest) -> list[dict]:
    """The data of every heatmap the page drew on a canvas (ui.draw.canvas_maps.heatmap_data), in page order, each
    with ``cells``: its cells as the browser reads them (r, c, v, t; blank cells left out, as they are not drawn)."""
    return [heatmap(c) for c in at.get("bidi_component") if c.proto.component_name == "attention_explorer.heatmap"]


def heatmap(element) -> dict:
    """One heatmap element's data (:func:`heatmaps`)."""
    import json

    import numpy as np
    import pandas as pd

    from ui.draw.canvas_maps import read_cells

    data = json.loads(element.proto.json)
    data = json.loads(data) if isinstance(data, str) else data
    texts, values = read_cells(data)
    n_c = len(data["cols"])
    k = np.array([i for i, t in enumerate(texts) if t is not None], dtype=int)
    data["cells"] = pd.DataFrame({"r": k // n_c, "c": k % n_c, "v": values[k], "t": [texts[i] for i in k]})
    return data


def heatmap_titled(at: AppTest, part: str) -> dict:
    """The one heatmap whose title holds ``part``."""
    found = [h for h in heatmaps(at) if part in h["title"]]
    assert len(found) == 1, (part, [h["title"] for h in heatmaps(at)])
    return found[0]


def chart_datasets(element):
    """The datasets of a vega_lite_chart element as pandas DataFrames (Streamlit sends them as Arrow)."""
    import json

    from streamlit import dataframe_util

    spec = json.loads(element.proto.spec)
    frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
    if isinstance(spec.get("datasets"), dict):
        import pandas as pd

        frames += [pd.DataFrame(v) for v in spec["datasets"].values() if isinstance(v, list)]
    if element.proto.HasField("data") and element.proto.data.data:
        frames.append(dataframe_util.convert_arrow_bytes_to_pandas_df(element.proto.data.data))
    return frames


def chart_titles(at) -> list[str]:
    """Titles of every heatmap on the page: canvas maps' and Vega-Lite charts' titles and image captions (up to the
    first '(')."""
    import json

    titles = [h["title"] for h in heatmaps(at)]
    for el in at.get("vega_lite_chart"):
        t = json.loads(el.proto.spec).get("title")
        titles.append(t if isinstance(t, str) else (t or {}).get("text", "") if isinstance(t, dict) else "")
    for el in at.get("image"):
        titles += [img.caption.split(" (")[0] for img in el.proto.imgs]
    return titles


def _markdown_frame(body: str):
    """A Markdown table (ui.draw.tables.markdown_table) as the DataFrame it shows: its cells as a reader sees them
    (escapes undone, a number's non-breaking hyphen a minus), the first column the index when its head is empty."""
    import re

    import pandas as pd

    def cells(line: str) -> list[str]:
        split = re.split(r"(?<!\\)\|", line)[1:-1]
        return [re.sub(r"\\(.)", r"\1", c.strip()).replace("\u2011", "-").replace("\u200b", "") for c in split]

    lines = body.splitlines()
    head, rows = cells(lines[0]), [cells(line) for line in lines[2:]]
    if head and head[0] == "":
        return pd.DataFrame([r[1:] for r in rows], columns=head[1:], index=[r[0] for r in rows])
    return pd.DataFrame(rows, columns=head)


def tables(at: AppTest) -> list:
    """Every table of the main area in the page's order, as DataFrames: the grids (st.dataframe), the tables drawn as
    one Markdown table (ui.draw.tables.show_matrix; a grid's Markdown twin for phones is left out: it repeats the
    grid before it)."""
    out, previous = [], None

    def walk(node) -> None:
        nonlocal previous
        for child in getattr(node, "children", {}).values():
            kind = getattr(child, "type", None)
            if kind == "dataframe":
                out.append(child.value)
            elif kind == "markdown" and str(child.value).startswith("| ") and previous != "dataframe":
                out.append(_markdown_frame(child.value))
            if getattr(child, "children", None):  # a block: its first element follows nothing (CSS's "+")
                previous = None
                walk(child)
            previous = kind

    walk(at.main)
    return out
