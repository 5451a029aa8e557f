"""What a link says about the lesson: the preset's question, classroom mode (on or locked), hidden controls,
the projector view; bad values give a notice and the page still works."""

import re

import numpy as np
import pandas as pd
import pytest

from tests.apptest_util import app, chart_titles, run_ok, texts
from ui.classroom.presets import load_presets
from ui.draw.tables import (
    PHONE_GRID_COLUMNS,
    PHONE_MAX_ROWS,
    PHONE_TEXT_COLUMNS,
    PROJECTOR_MAX_COLUMNS,
    PROJECTOR_MAX_ROWS,
    _plain,
    markdown_table,
    show_table,
)
from ui.session.links import LinkOptions, parse_link_options

PRESETS = load_presets()[0]


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.slug)
def test_preset_link_shows_its_question_on_its_page(preset):
    at = run_ok(app(preset.page, preset.query_params()))
    shown = texts(at)
    assert preset.question.replace('"', "") in shown.replace("\\", "").replace('"', "")
    assert "What to look for: " + preset.look_for in shown
    assert at.query_params["preset"] == preset.slug  # the share link names the preset


def test_preset_banner_only_on_the_presets_own_page():
    preset = next(p for p in PRESETS if p.page == "pages/Compare.py")
    at = run_ok(app("pages/Masks.py", {"preset": preset.slug}))
    assert preset.question not in texts(at)


def test_unknown_preset_is_named_and_settings_still_apply():
    at = run_ok(app("pages/Playground.py", {"preset": "no_such_lesson", "seq_len": "5"}))
    assert "there is no preset called 'no_such_lesson'" in texts(at)
    assert at.session_state["whatif"].seq_len == 5


def test_classroom_lock_hides_the_weights_and_offers_no_switch():
    at = run_ok(app("pages/Playground.py", {"classroom": "lock"}))
    assert "Classroom mode is on for this lesson" in texts(at)
    assert not [t for t in at.toggle if t.label.startswith("Classroom mode")]  # no way to switch it off
    assert "Predict first" in texts(at) and "head 1" not in chart_titles(at)  # weights hidden until a prediction
    at.radio(key="guess_playground.twin").set_value(0)
    at.button(key="reveal_playground.twin").click().run()
    assert "head 1" in chart_titles(at) and at.query_params["classroom"] == "lock"


def test_classroom_on_from_link_can_be_switched_off_and_the_link_follows():
    at = run_ok(app("pages/Playground.py", {"classroom": "1"}))
    toggle = next(t for t in at.toggle if t.label.startswith("Classroom mode"))
    assert toggle.value is True and "Predict first" in texts(at)
    toggle.set_value(False).run()
    assert "Predict first" not in texts(at) and "classroom" not in at.query_params


def test_hidden_controls_keep_their_values_and_are_named():
    at = run_ok(app("pages/Playground.py", {"hide": "seq_len,heads", "seq_len": "6", "heads": "2"}))
    labels = [w.label for w in at.sidebar.slider] + [w.label for w in at.sidebar.select_slider]
    assert not any(lab.startswith("seq_len") or lab.startswith("heads") for lab in labels)
    assert any(lab.startswith("d_model") for lab in labels)
    assert "This lesson's link fixes seq_len = 6, heads = 2" in texts(at)
    assert at.session_state["whatif"].seq_len == 6 and at.session_state["whatif"].n_heads == 2


def test_link_options_round_trip():
    opts = LinkOptions(preset="2_why_scale", classroom="lock", hide=("seq_len", "n_heads"), projector=True)
    assert parse_link_options(opts.query_params()) == (opts, [])
    assert parse_link_options({}) == (LinkOptions(), [])


def test_projector_view_collapses_the_sidebar_and_enlarges_type():
    at = run_ok(app("pages/Playground.py", {"view": "projector"}))
    assert any("font-size: 1.2rem" in m.value for m in at.markdown)
    assert at.query_params["view"] == "projector"


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.slug)
def test_a_bare_preset_link_opens_the_presets_settings(preset):
    """Page?preset=slug alone (a link shortened by hand) opens what the preset's full link opens: the same
    settings in the URL and the same page, the question asked of the preset's settings, not of the defaults."""
    bare = run_ok(app(preset.page, {"preset": preset.slug}))
    full = run_ok(app(preset.page, preset.query_params()))
    assert dict(bare.query_params) == dict(full.query_params)
    assert texts(bare) == texts(full)
    if preset.page == "pages/Compare.py":  # the opening sentence names what A and B differ in
        assert "A and B differ in" in texts(bare) and "are the **same setting**" not in texts(bare)


def test_a_preset_link_with_settings_of_its_own_keeps_them():
    preset = next(p for p in PRESETS if p.slug == "4_one_vs_eight_heads")
    at = run_ok(app(preset.page, {"preset": preset.slug, "b_heads": "2"}))
    assert at.query_params["b_heads"] == "2" and "a_heads" in at.query_params
    assert "**heads** (A 4, B 2)" in texts(at)  # A from the shared default (4 heads), B from the link


def test_the_projector_view_draws_tables_as_text_with_their_formats():
    """Streamlit's grid paints at a fixed 14 px; in the projector view a table is text (st.table) that the view's
    larger type reaches, with the grid's number formats (Implementations: its differences as ui.text.fmt writes them, the reference's
    empty)."""
    grid = run_ok(app("pages/Soft_lookup.py"))  # the grid, and its text twin for narrow screens (ui/skeleton/a11y.css)
    assert len(grid.dataframe) == 1 and len(grid.table) == 0
    shown = run_ok(app("pages/Soft_lookup.py", {"view": "projector"}))
    assert len(shown.dataframe) == 0 and len(shown.table) == 1
    assert list(shown.table[0].value.columns) == list(grid.dataframe[0].value.columns)
    # the twin, one Markdown table, holds the projector's text cell for cell
    twins = [m.value for m in grid.markdown if m.value.startswith("| ")]
    text = shown.table[0].value
    assert twins == [markdown_table(text)]
    assert [_cells(line) for line in twins[0].splitlines()[2:]] == [
        [str(i), *map(str, row)] for i, row in zip(text.index, text.values.tolist())
    ]
    assert _cells(twins[0].splitlines()[0]) == ["", *text.columns]
    # Implementations draws its table as text at every width (its names are read whole); the projector the same
    every = run_ok(app("pages/Implementations.py"))
    assert len(every.dataframe) == 0 and len(every.table) == 1
    shown = run_ok(app("pages/Implementations.py", {"view": "projector"}))
    assert len(shown.dataframe) == 0 and len(shown.table) == 1
    table = shown.table[0].value
    assert table.equals(every.table[0].value)
    assert list(table.columns) == ["implementation", "max |Δ weights|", "max |Δ output|", "time (ms)", "note"]
    weights = table["max |Δ weights|"].tolist()  # the exponent's hyphen a non-breaking one (ui.draw.tables._wrap_cell)
    assert weights[0] == "" and all(re.fullmatch(r"\d\.\d\de[‑+]\d\d", w) for w in weights[1:] if w), weights
    assert all(re.fullmatch(r"\d+\.\d{3}", t) for t in table["time (ms)"]), table["time (ms)"].tolist()


class _Place:
    """A place to draw that records what show_table drew there: ("dataframe" | "table", rows)."""

    def __init__(self):
        self.drawn = []

    def dataframe(self, data, **_):
        self.drawn.append(("dataframe", len(data)))

    def table(self, data, **_):
        self.drawn.append(("table", len(data)))

    def markdown(self, body, **_):
        self.drawn.append(("markdown", len(body.splitlines()) - 2))  # a Markdown table: its head and rule, its rows


def _cells(line: str) -> list[str]:
    """The cells of one row of a Markdown table, as a reader sees them (escapes undone)."""
    return [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def _drawn(rows: int, columns: int, hide_index: bool = True, **kw) -> list:
    place = _Place()
    show_table(place, pd.DataFrame(np.zeros((rows, columns))), hide_index=hide_index, **kw)
    return place.drawn


def test_which_tables_get_a_text_twin_for_phones():
    """A small table is a grid with a text twin (phones, the projector); a longer one keeps its grid and gets the
    twin only when its columns would run past a phone's screen; a huge one stays a grid."""
    small, longer = PROJECTOR_MAX_ROWS, PROJECTOR_MAX_ROWS + 1
    assert _drawn(small, 2) == [("dataframe", small), ("markdown", small)]
    assert _drawn(longer, PHONE_GRID_COLUMNS) == [("dataframe", longer)]  # fits a phone as a grid
    assert _drawn(longer, PHONE_GRID_COLUMNS + 1) == [("dataframe", longer), ("markdown", longer)]
    assert _drawn(longer, PHONE_GRID_COLUMNS, hide_index=False) == [("dataframe", longer), ("markdown", longer)]
    assert _drawn(PHONE_MAX_ROWS, 5) == [("dataframe", PHONE_MAX_ROWS), ("markdown", PHONE_MAX_ROWS)]
    assert _drawn(PHONE_MAX_ROWS + 1, 5) == [("dataframe", PHONE_MAX_ROWS + 1)]
    assert _drawn(longer, PHONE_TEXT_COLUMNS) == [("dataframe", longer), ("markdown", longer)]
    assert _drawn(longer, PHONE_TEXT_COLUMNS + 1) == [("dataframe", longer)]  # as cut as text: Real model's heads
    assert _drawn(2, PROJECTOR_MAX_COLUMNS) == [("dataframe", 2), ("markdown", 2)]
    assert _drawn(2, PROJECTOR_MAX_COLUMNS, hide_index=False) == [("dataframe", 2)]  # the index is a column
    assert _drawn(small, 2, whole=True) == [("table", small)]
    with pytest.raises(ValueError, match="at most 32 rows"):
        _drawn(longer, PHONE_GRID_COLUMNS + 1, whole=True)  # a long twin is for phones, not a whole table


def test_plain_applies_labels_and_formats():
    labelled = _plain(
        pd.DataFrame({"a": [1.0, np.nan], "b": ["x", "y"]}),
        {"a": {"label": "A", "type_config": {"format": "%.1f"}}, "b": {"label": None}, "missing": {"label": "M"}},
    )
    assert labelled.to_dict("list") == {"A": ["1.0", ""], "b": ["x", "y"]}
