"""AppTest: the Compare page (pages/Compare.py)."""

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif, saturation_metrics
from tests.apptest_util import app, chart_titles, heatmap, run_ok, texts
from ui.classroom.presets import load_presets
from ui.session.url import to_query_params
from ui.text import fmt, md_escape

CMP = "pages/Compare.py"
PRESETS = {p.slug: p for p in load_presets()[0]}


def _mean_max(cfg):
    return float(np.mean([saturation_metrics(w).summary()["max_weight"] for w in run_whatif(cfg).weights]))


def test_compare_page_shows_differences():
    at = run_ok(app(CMP))
    a, b = WhatIf(scaled=True), WhatIf(scaled=False)
    assert at.session_state["whatif_a"] == a and at.session_state["whatif_b"] == b
    sa, sb = _mean_max(a), _mean_max(b)
    table = _saturation_table(at)
    assert table["A"]["mean max weight"] == f"{sa:.3g}" and table["B"]["mean max weight"] == f"{sb:.3g}"
    assert table["B − A"]["mean max weight"] == f"{sb - sa:+.3g}"
    _assert_table_is_computed(at, a, b)
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


SATURATION = {  # the table's columns: its header, the summary key and how a value is written
    "mean max weight": "max_weight",
    "entropy (nats)": "entropy",
    "effective tokens": "effective_tokens",
    "near-one-hot rows": "near_one_hot_share",
}


def _saturation_table(at) -> dict[str, dict[str, str]]:
    """The saturation table under its heading, by row (A, B, B − A) and column."""
    (md,) = [m.value for m in at.markdown if m.value.startswith("| | mean max weight")]
    lines = [[c.strip() for c in line.strip().strip("|").split("|")] for line in md.replace("\u00a0", " ").splitlines()]
    header, rows = lines[0][1:], lines[2:]
    assert header == list(SATURATION) and [r[0] for r in rows] == ["**A**", "**B**", "B − A"]
    return {r[0].strip("*"): dict(zip(header, r[1:])) for r in rows}


def _assert_table_is_computed(at, a: WhatIf, b: WhatIf) -> None:
    """Every number of the table is the mean over heads of saturation_metrics for the setting on screen."""
    table = _saturation_table(at)
    means = [
        {
            k: float(np.mean([saturation_metrics(w).summary()[k] for w in run_whatif(c).weights]))
            for k in SATURATION.values()
        }
        for c in (a, b)
    ]
    for col, key in SATURATION.items():
        share = key == "near_one_hot_share"
        va, vb = means[0][key], means[1][key]
        assert table["A"][col] == (f"{va:.0%}" if share else fmt(va)), (col, table["A"][col], va)
        assert table["B"][col] == (f"{vb:.0%}" if share else fmt(vb)), (col, table["B"][col], vb)
        assert table["B − A"][col] == (f"{100 * (vb - va):+.0f} pts" if share else f"{vb - va:+.3g}"), col


@pytest.mark.parametrize(
    "a, b",
    [
        (dict(seq_len=2, d_model=2, n_heads=1, temperature=0.1), dict(seq_len=2, d_model=2, n_heads=1, scaled=False)),
        (
            dict(seq_len=64, d_model=256, n_heads=16, temperature=10.0),
            dict(seq_len=3, d_model=8, n_heads=2, mask="causal"),
        ),
        (dict(d_model=512, n_heads=1, seq_len=16), dict(d_model=512, n_heads=1, seq_len=16, scaled=False)),
    ],
    ids=["smallest", "largest-against-small-causal", "why-scale"],
)
def test_the_saturation_table_states_both_settings_and_their_difference_at_extreme_settings(a, b):
    cfg_a, cfg_b = WhatIf(**a), WhatIf(**b)
    query = {f"a_{k}": v for k, v in to_query_params(cfg_a).items()} | {
        f"b_{k}": v for k, v in to_query_params(cfg_b).items()
    }
    at = run_ok(app(CMP, query=query))
    assert at.session_state["whatif_a"] == cfg_a and at.session_state["whatif_b"] == cfg_b
    _assert_table_is_computed(at, cfg_a, cfg_b)
    assert not at.metric  # the table replaced the two rows of metrics


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
    # the heatmaps' module (an element that draws nothing, sent before a run's first map) is not shown
    elements = [e for e in _walk(at.main) if _component_name(e) != "attention_explorer.heatmap_module"]
    shown = [(e.type, getattr(e, "key", None)) for e in elements]
    shown_maps = [e for e in elements if _component_name(e) == "attention_explorer.heatmap"]
    first_map = elements.index(shown_maps[0])
    assert shown[first_map - 6 : first_map] == [  # the settings of A, then B's, then at once A's map
        ("toggle", "a_scaled"),
        ("select_slider", "a_temperature"),
        ("selectbox", "a_mask"),
        ("toggle", "b_scaled"),
        ("select_slider", "b_temperature"),
        ("selectbox", "b_mask"),
    ]
    assert heatmap(shown_maps[0])["title"].startswith("A: head 1")


def _component_name(element) -> str:
    """A custom component element's name ("" for any other element)."""
    return element.proto.component_name if element.type == "bidi_component" else ""


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


# ---- live maps on: A's Z, B's Z and B − A drawn by the browser where they are drawn cell by cell

Z_TITLES = {"A: Z", "B: Z", "Z: B − A"}


def _component(at, key: str):
    from tests.apptest_util import page_components

    return next((c for c in page_components(at) if c.key == key), None)


def _feed_arrays(at) -> tuple[dict, list[np.ndarray]]:
    """The header of the live maps' feed and the float32 arrays it carries (ui.live.pack's layout)."""
    import json
    import struct

    data = _component(at, "cmp_live_feed").proto.bytes
    n = struct.unpack("<I", data[4:8])[0]
    header = json.loads(data[8 : 8 + n])
    start, arrays = 8 + n + (-n) % 4, []
    for shape in header.get("shapes", []):
        count = shape["H"] * shape["Tq"] * shape["Tk"]
        arrays.append(
            np.frombuffer(data[start : start + 4 * count], "<f4").reshape(shape["H"], shape["Tq"], shape["Tk"])
        )
        start += 4 * count
    return header, arrays


def test_with_live_maps_the_browser_draws_the_outputs_and_another_temperature_of_a_leaves_their_element_unchanged():
    """At the default the page mounts the outputs element (no Z chart of the server's) after the maps and their
    feed, states the scale and that the browser draws them; a new temperature of A leaves the element's data as it
    was (the message cache sends it as a reference) and the sentence follows the setting let go on."""
    import json

    from tests.apptest_util import page_components

    at = run_ok(app(CMP, live=True))
    assert [c.key for c in page_components(at)] == ["cmp_live_module", "cmp_live", "cmp_live_feed", "cmp_live_outputs"]
    assert not Z_TITLES & set(chart_titles(at))
    ra, rb = run_whatif(WhatIf(scaled=True)), run_whatif(WhatIf(scaled=False))
    lim = float(max(np.abs(ra.output).max(), np.abs(rb.output).max()))
    page = texts(at)
    assert f"A's Z, B's Z and their difference share one colour scale (±{lim:.3g})" in page
    assert "your browser draws them, and each Z follows its side's temperature" in page
    data = _component(at, "cmp_live_outputs").proto.json
    header = json.loads(json.loads(data))
    assert [(m["kind"], m["panel"], m["base"]) for m in header["maps"]] == [
        ("z", "A", ""),
        ("z", "B", ""),
        ("diff", "B", "A"),
    ]
    assert list(header["runs"]) == ["A", "B"] and header["runs"]["A"]["rows"] == list(ra.tokens)
    maps = json.loads(json.loads(_component(at, "cmp_live").proto.json))
    assert header["scores"] == maps["key"]  # it follows the frames of these maps only
    # another temperature of A (what a release makes the page's setting; its release: tests/test_live_feed.py)
    at = run_ok(app(CMP, {"a_temperature": "0.5"}, live=True))
    a = at.session_state["whatif_a"]
    assert a == WhatIf(scaled=True, temperature=0.5)
    assert _component(at, "cmp_live_outputs").proto.json == data  # nothing in it a release changes
    za = run_whatif(a).output
    change = np.linalg.norm(rb.output - za) / np.linalg.norm(za)
    assert f"The outputs differ by {100 * change:.3g}% of A's size" in texts(at)


@pytest.mark.parametrize(
    "query, live",
    [({}, False), ({"a_d_model": "128"}, True), ({"d_model": "128"}, True)],
    ids=["live-maps-off", "A-at-d_model-128", "both-at-d_model-128"],
)
def test_without_live_maps_or_where_a_z_is_an_image_the_server_draws_the_outputs(query, live):
    """Live maps off, or either Z too large to be drawn cell by cell: the server's charts (or images), as before,
    and no outputs element."""
    at = run_ok(app(CMP, query, live=live))
    assert _component(at, "cmp_live_outputs") is None
    assert {"A: Z", "B: Z"} <= set(chart_titles(at))
    assert "your browser draws them" not in texts(at)
    if live:  # the maps' feed carries no X, V or W_o: only the scores
        header, _ = _feed_arrays(at)
        assert len(header["arrays"]) == len({live_scores_key(c) for c in _sides(at)})


def _sides(at):
    return at.session_state["whatif_a"], at.session_state["whatif_b"]


def live_scores_key(cfg) -> str:
    from ui import live

    return live._scores(run_whatif(cfg)).key


@pytest.mark.parametrize("query", [{}, {"a_seq_len": "8", "b_seq_len": "5", "b_heads": "2"}], ids=["one-input", "two"])
def test_the_feed_carries_x_v_and_w_o_of_both_inputs_once_each(query):
    """The maps' feed carries, besides the scores, X, V and W_o of A's and of B's input (what the browser draws
    both outputs from), every array once: one input shares them all; two inputs of one d_model and seed share
    W_o. Each array carried holds attention_core's numbers."""
    from ui import live

    at = run_ok(app(CMP, query, live=True))
    header, arrays = _feed_arrays(at)
    runs = [run_whatif(cfg) for cfg in _sides(at)]
    want = {}
    for run in runs:
        want[live._scores(run).key] = live._scores(run).S
        want |= {a.key: a.S for a in live._outputs_arrays(run)}
    assert len(header["arrays"]) == len(set(header["arrays"])) == len(want)  # each once
    assert set(header["arrays"]) == set(want)
    assert header["carried"] == list(range(len(want)))  # a new session holds none of them
    for i, got in zip(header["carried"], arrays):
        np.testing.assert_array_equal(got, want[header["arrays"][i]])
    a, b = runs
    xs = {live._outputs_arrays(r)[0].key for r in runs}
    assert len(xs) == (1 if np.array_equal(a.x, b.x) else 2)  # one X where A and B read one input
    assert len(xs) == (1 if not query else 2)
    for r in runs:  # X, V and W_o of each side are its own input's
        x, v, wo = live._outputs_arrays(r)
        np.testing.assert_array_equal(x.S[0], r.x.astype(np.float32))
        np.testing.assert_array_equal(v.S, r.v.astype(np.float32))
        np.testing.assert_array_equal(wo.S[0], r.w[3].astype(np.float32))


def test_a_link_that_hides_a_map_setting_says_what_it_fixes_on_both_sides():
    at = run_ok(app(CMP, {"hide": "temperature,mask", "a_temperature": "0.5", "b_mask": "causal"}))
    keys = _keys(at.main, "select_slider", "selectbox", "toggle")
    assert not {"a_temperature", "b_temperature", "a_mask", "b_mask"} & set(keys) and {"a_scaled", "b_scaled"} <= set(
        keys
    )
    assert (
        "This lesson's link fixes temperature = 0.5 (A), 1.0 (B); mask = none (A), causal (B); those controls are hidden."
        in texts(at)
    )
    assert "**temperature** (A 0.5, B 1)" in texts(at)  # the hidden values still apply


@pytest.mark.parametrize("live", [True, False], ids=["live-maps", "static"])
def test_outputs_too_large_for_cells_are_one_image_element_each_image_captioned_and_described(live):
    """Why scale?'s outputs (16 x 512) are images: A's Z, B's Z and B − A side by side in one element, on one colour
    scale, each with its caption and a text alternative computed from its numbers."""
    from ui.draw.charts import Axes, describe_map, dim_labels

    setting = {"seq_len": "16", "d_model": "512", "heads": "1"}
    at = run_ok(app(CMP, setting | {"b_scaled": "0"}, live=live))
    a, b = _sides(at)
    assert (a.d_model, b.scaled) == (512, False)
    (element,) = at.get("image")
    imgs = element.proto.imgs
    assert [i.caption.split(" (")[0] for i in imgs] == ["A: Z", "B: Z", "Z: B − A"]
    ra, rb = run_whatif(a), run_whatif(b)
    lim = float(max(np.abs(ra.output).max(), np.abs(rb.output).max()))
    for img, m, value in zip(imgs, (ra.output, rb.output, rb.output - ra.output), ("z", "z", "Δ z")):
        assert f"16 x 512 as an image, mean-pooled 1x2 to fit; {value}: colour {-lim:.3g} to {lim:.3g}" in img.caption
        title = img.caption.split(" (")[0]
        want = describe_map(m, tuple(ra.tokens), dim_labels(512), title, Axes("token", "dim", value))
        assert img.alt == want
    assert any("The outputs differ by" in c.value for c in at.caption)
