"""AppTest: the Compare page (pages/Compare.py)."""

import json

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif, saturation_metrics
from tests.apptest_util import app, chart_titles, run_ok, texts
from ui.classroom.presets import load_presets
from ui.text import md_escape

CMP = "pages/Compare.py"
PRESETS = {p.slug: p for p in load_presets()[0]}


def _mean_max(cfg):
    return float(np.mean([saturation_metrics(w).summary()["max_weight"] for w in run_whatif(cfg).weights]))


def test_compare_page_shows_differences():
    at = run_ok(app(CMP))
    a, b = WhatIf(scaled=True), WhatIf(scaled=False)
    assert at.session_state["whatif_a"] == a and at.session_state["whatif_b"] == b
    sa, sb = _mean_max(a), _mean_max(b)
    metrics = {m.label: m for m in at.metric}
    assert metrics["A: mean max weight"].value == f"{sa:.3g}"
    assert metrics["B: mean max weight"].value == f"{sb:.3g}"
    assert metrics["B: mean max weight"].delta == f"{sb - sa:+.3g}"
    assert "color: GRAY" in str(metrics["B: mean max weight"].proto)  # neutral: sharper is not "better"
    assert "B − A" in chart_titles(at) and "Z: B − A" in chart_titles(at)
    assert at.query_params["a_scaled"] == "1" and at.query_params["b_scaled"] == "0"
    page = texts(at)
    assert "A and B differ in one setting: **scaling by 1/√d_k** (A on, B off)." in page
    ra, rb = run_whatif(a), run_whatif(b)
    change = np.linalg.norm(rb.output - ra.output) / np.linalg.norm(ra.output)
    assert f"The outputs differ by {100 * change:.3g}% of A's size" in page
    assert f"B's mean max weight is {sb:.3g} against A's {sa:.3g} ({sb - sa:+.3g}): B is sharper." in page
    at.slider(key="b_seq_len").set_value(5)
    run_ok(at)
    assert "B − A" not in chart_titles(at)
    assert any("no difference map" in i.value for i in at.info)
    assert "**seq_len** (A 8, B 5)" in texts(at)
    at.select_slider(key="a_n_heads").set_value(1)
    at.selectbox(key="cmp_head").set_value(3)
    run_ok(at)
    assert "A has 1 head and B 4" in texts(at)
    at.button(key="cmp_reset").click()
    run_ok(at)
    assert at.session_state["whatif_b"] == WhatIf(scaled=False)
    assert "A and B differ in one setting: **scaling by 1/√d_k**" in texts(at)
    linked = dict(at.query_params)  # the link follows the reset: both sets at the shared setting, B unscaled
    assert (linked["a_seq_len"], linked["b_seq_len"], linked["a_heads"], linked["b_scaled"]) == ("8", "8", "4", "0")


def _keys(block, *types) -> list:
    return [e.key for t in types for e in block.get(t)]


def test_the_inputs_are_set_in_the_sidebar_and_the_map_settings_right_above_the_maps():
    at = run_ok(app(CMP))
    widgets = ("slider", "select_slider", "toggle", "selectbox", "number_input", "radio")
    side, main = _keys(at.sidebar, *widgets), _keys(at.main, *widgets)
    assert {"a_seq_len", "b_seq_len", "a_d_model", "b_n_heads", "a_seed"} <= set(side)
    settings = {f"{s}_{n}" for s in "ab" for n in ("temperature", "scaled", "mask")}
    assert settings <= set(main) and not settings & set(side)  # A's and B's, above the maps, not in the sidebar
    assert at.main.select_slider(key="b_temperature").label == "temperature (B)"
    elements = list(_walk(at.main))
    shown = [(e.type, getattr(e, "key", None)) for e in elements]
    shown_maps = [e for e in elements if e.type == "vega_lite_chart"]
    first_map = next(i for i, (kind, _) in enumerate(shown) if kind == "vega_lite_chart")
    assert shown[first_map - 6 : first_map] == [  # the settings of A, then B's, then at once A's map
        ("toggle", "a_scaled"),
        ("select_slider", "a_temperature"),
        ("selectbox", "a_mask"),
        ("toggle", "b_scaled"),
        ("select_slider", "b_temperature"),
        ("selectbox", "b_mask"),
    ]
    assert json.loads(shown_maps[0].proto.spec)["title"].startswith("A: head 1")


def _walk(block):
    """Every element of ``block`` in page order (AppTest's tree, depth first)."""
    for child in block.children.values():
        if hasattr(child, "children") and child.type in ("flex_container", "column", "vertical", "transparent"):
            yield from _walk(child)
        else:
            yield child


def test_same_setting_says_so():
    at = run_ok(app(CMP))
    at.toggle(key="b_scaled").set_value(True)
    run_ok(at)
    assert "A and B are the **same setting** right now" in texts(at)
    assert "None: A and B are the same setting." in texts(at)


def test_compare_sides_come_from_the_url():
    at = run_ok(app(CMP, {"a_heads": "1", "b_heads": "8", "b_temperature": "0.2", "b_seq_len": "-1"}))
    assert at.session_state["whatif_a"].n_heads == 1
    assert at.session_state["whatif_b"].n_heads == 8 and at.session_state["whatif_b"].temperature == 0.2
    assert any("b_seq_len=-1 is outside" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "slug, expected",
    [
        ("2_why_scale", "A and B differ in one setting: **scaling by 1/√d_k** (A on, B off)."),
        ("4_one_vs_eight_heads", "A and B differ in one setting: **heads** (A 1, B 8)."),
        ("5_temperature", "A and B differ in one setting: **temperature** (A 1, B 0.2)."),
    ],
)
def test_preset_opening_names_what_really_differs_and_tells_its_story(slug, expected):
    preset = PRESETS[slug]
    at = run_ok(app("streamlit_app.py"))
    at.button(key=f"preset_{slug}").click()
    run_ok(at)
    assert at.title[0].value.endswith("Compare")
    page = texts(at)
    assert expected in page
    assert "A is scaled and B unscaled" not in page
    at2 = run_ok(app(CMP, preset.query_params() | {"preset": slug}))
    assert expected in texts(at2)
    # the preset's story comes from ui.skeleton.page.Page's banner (one place for every page), once
    assert texts(at2).count(f"**:material/science: {md_escape(preset.name)}** · {md_escape(preset.question)}") == 1
    ma, mb = _mean_max(preset.a), _mean_max(preset.b)
    assert f"B's mean max weight is {mb:.3g} against A's {ma:.3g}" in texts(at2)


@pytest.mark.parametrize(
    "query",
    [
        {"a_seq_len": "1", "b_seq_len": "1"},
        {"a_temperature": "0.1", "b_temperature": "10"},
        {"a_mask": "padding", "a_pad": "512", "b_mask": "causal"},
    ],
)
def test_extremes_show_true_sentences(query):
    at = run_ok(app(CMP, query, timeout=120))
    cfg_a, cfg_b = at.session_state["whatif_a"], at.session_state["whatif_b"]
    ma, mb = _mean_max(cfg_a), _mean_max(cfg_b)
    page = texts(at)
    assert f"B's mean max weight is {mb:.3g} against A's {ma:.3g}" in page
    assert "nan" not in page.lower().replace("nats", "")
    if query.get("a_seq_len") == "1":
        assert "A is single key" in page
    if "a_temperature" in query:
        assert "**temperature** (A 0.1, B 10)" in page and "B is softer." in page


def test_largest_weight_change_is_the_measured_one_also_when_a_equals_b():
    at = run_ok(app(CMP))
    a, b = run_whatif(WhatIf(scaled=True)), run_whatif(WhatIf(scaled=False))
    biggest = float(np.abs(b.weights[0] - a.weights[0]).max())
    assert f"Largest change of a weight: {biggest:.3g}." in texts(at)
    at.toggle(key="b_scaled").set_value(True)
    run_ok(at)
    page = texts(at)
    assert "A and B are the **same setting**" in page and "Largest change of a weight: 0." in page
