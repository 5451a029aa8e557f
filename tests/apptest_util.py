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
        n_cols = heatmap_cols(spec)
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


def label_at(spec: dict, expr: str, index: int) -> str:
    """The label that ``expr``, one of a heatmap spec's label expressions (an axis's labelExpr, whose position is
    ``datum.value``, or the tooltip's calculate, by ``datum.r`` or ``datum.c``), gives at position ``index``, as
    the browser evaluates the forms ui.draw.charts writes: a JSON array indexed by position, inline or held by one
    of the spec's parameters; a prefix joined to the position plus a number (a string plus a whole number is the
    number's digits); and an axis's "every k-th" rule, which leaves the others ''."""
    import json
    import re

    every = re.fullmatch(r"datum\.value % (\d+) == 0 \? (.*) : ''", expr)
    if every:
        return label_at(spec, every.group(2), index) if index % int(every.group(1)) == 0 else ""
    counted = re.fullmatch(r'("(?:[^"\\]|\\.)*") \+ (?:\(datum\.\w+ \+ (\d+)\)|datum\.\w+)', expr)
    if counted:
        return json.loads(counted.group(1)) + str(index + int(counted.group(2) or 0))
    listed = re.fullmatch(r"(.*)\[datum\.\w+\]", expr)
    assert listed, f"not a label expression ui.draw.charts writes: {expr!r}"
    params = {p["name"]: p["expr"] for p in spec.get("params", [])}
    labels = json.loads(params.get(listed.group(1), listed.group(1)))
    return labels[index]


def heatmap_labels(spec: dict) -> dict[str, list[str]]:
    """A heatmap spec's labels, position by position, as the browser draws them (:func:`label_at`): "x" and "y",
    the axes' labels ('' where an axis labels every k-th only), and each tooltip label field's (by its name)."""
    n = {"x": heatmap_cols(spec), "y": heatmap_rows(spec)}
    out = {axis: [label_at(spec, spec["encoding"][axis]["axis"]["labelExpr"], i) for i in range(n[axis])] for axis in n}
    fields = [t["field"] for t in spec["encoding"]["tooltip"][:2]]  # the row's and the column's label
    for step in spec["transform"]:
        if step.get("as") in fields:  # the position is the expression's last field: datum.r (row) or datum.c
            axis = "y" if step["calculate"].rsplit("datum.", 1)[1][0] == "r" else "x"
            out[step["as"]] = [label_at(spec, step["calculate"], i) for i in range(n[axis])]
    return out


def heatmap_positions(spec: dict, axis: str) -> list[int]:
    """The positions a heatmap spec's ``axis`` ("x" or "y") draws: its ordinal scale's domain, every column (row)
    0..n-1, blank ones too, written as the list or as the expression sequence(n) (the browser's 0..n-1)."""
    import re

    domain = spec["encoding"][axis]["scale"]["domain"]
    if isinstance(domain, dict):
        made = re.fullmatch(r"sequence\((\d+)\)", domain["expr"])
        assert made, f"not a domain ui.draw.charts writes: {domain!r}"
        return list(range(int(made.group(1))))
    return domain


def heatmap_cols(spec: dict) -> int:
    """The number of columns of a heatmap spec (:func:`heatmap_positions`)."""
    return len(heatmap_positions(spec, "x"))


def heatmap_rows(spec: dict) -> int:
    """The number of rows of a heatmap spec (:func:`heatmap_positions`)."""
    return len(heatmap_positions(spec, "y"))


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
