"""AppTest: the Playground page (pages/Playground.py)."""

import json
import math

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif, saturation_metrics
from attention_core.readout import logit_std, relative_difference, sharpness, uniform_max_weight
from tests.apptest_util import app, chart_datasets, heatmaps, run_ok, texts
from ui.text import fmt, fmt_all, md_escape

PLAY = "pages/Playground.py"


def _sat(cfg):
    return [saturation_metrics(w).summary() for w in run_whatif(cfg).weights]


def test_playground_default_numbers_match_core():
    at = run_ok(app(PLAY))
    run = run_whatif(WhatIf())
    sat = _sat(WhatIf())
    assert len(heatmaps(at)) >= 4 + 2 and len(at.get("vega_lite_chart")) >= 1  # 4 heads, X and Z; the bar chart
    row = run.weights[0, 0]
    top = int(np.argmax(row))
    assert f"attends most to **{md_escape(run.tokens[top])}** (#{top + 1}) with weight {row[top]:.3g}" in texts(at)
    assert at.metric[0].value == f"{sat[0]['entropy']:.3g}"
    assert at.metric[1].value == f"{sat[0]['max_weight']:.3g}"
    twin = _sat(WhatIf(scaled=False))
    assert at.metric[1].delta == f"{sat[0]['max_weight'] - twin[0]['max_weight']:+.3g}"
    assert all("color: GRAY" in str(m.proto) for m in at.metric)  # neutral deltas (delta_color="off")
    table = at.dataframe[0].value  # one formatter: every head's row as the metrics above it write head 1's
    assert list(table["effective tokens"]) == [fmt(s["effective_tokens"]) for s in sat]
    assert table["mean max weight"][0] == at.metric[1].value and table["entropy (nats)"][0] == at.metric[0].value
    (head1,) = [h for h in heatmaps(at) if h["title"] == "head 1"]
    cells = head1["cells"]  # the map's tooltip writes the sentence's weight the same way
    assert cells.loc[(cells["r"] == 0) & (cells["c"] == top), "t"].item() == fmt(row[top])


def test_x_and_z_share_one_colour_scale_and_relative_change():
    at = run_ok(app(PLAY))
    run = run_whatif(WhatIf())
    lim = max(np.abs(run.x).max(), np.abs(run.output).max())

    maps = {h["title"]: h for h in heatmaps(at)}
    domains = [[maps[t]["lo"], maps[t]["hi"]] for t in ("X input", "Z output")]
    assert domains[0] == domains[1] == pytest.approx([-lim, lim], rel=1e-6)
    change = relative_difference(run.output, run.x)
    assert f"X and Z (8 x 64 each) share one colour scale, −{lim:.3g} (blue) to {lim:.3g} (red)" in texts(at)
    assert f"The change from X to Z is {100 * change:.3g}% of X's own size" in texts(at)


@pytest.mark.parametrize(
    "query, level",
    [
        ({"temperature": "0.1"}, "sharp"),  # issue #12: said "the softmax stays soft" at mean max weight 0.867
        ({"temperature": "10"}, "nearly uniform"),
        ({}, None),
        ({"scaled": "0", "d_model": "1024", "heads": "1", "seq_len": "16"}, "sharp"),
        ({"seq_len": "1"}, "single key"),
        ({"mask": "causal", "temperature": "0.1", "heads": "1"}, None),
    ],
)
def test_sharpness_sentence_follows_the_measured_numbers(query, level):
    at = run_ok(app(PLAY, query, timeout=120))
    cfg = WhatIf(
        seq_len=int(query.get("seq_len", 8)),
        d_model=int(query.get("d_model", 64)),
        n_heads=int(query.get("heads", 4)),
        scaled=query.get("scaled", "1") == "1",
        temperature=float(query.get("temperature", 1.0)),
        mask=query.get("mask", "none"),
    )
    run = run_whatif(cfg)
    sat, twin = _sat(cfg), _sat(cfg.replace(scaled=not cfg.scaled))
    u = uniform_max_weight(run.mask, run.T, run.T)
    got = sharpness(sat[0]["max_weight"], u)
    if level is not None:
        assert got == level
    page = texts(at)
    assert f"Head 1 is **{got}** here: mean max weight {sat[0]['max_weight']:.3g} against {u:.3g}" in page
    assert f"twin is {sharpness(twin[0]['max_weight'], u)} (mean max weight {twin[0]['max_weight']:.3g})" in page
    spread = logit_std(run.q, run.k, cfg.scaled, cfg.temperature, run.mask)[0]
    assert f"standard deviation of {spread:.3g}" in page
    assert "stays soft" not in page
    if got == "nearly uniform":
        assert any("Attention is nearly uniform here (max weight" in i.value for i in at.info)
    else:
        assert not any("nearly uniform here" in i.value for i in at.info)


def test_playground_every_control_moves():
    at = run_ok(app(PLAY))
    at.sidebar.slider(key="ctl_seq_len").set_value(12)
    run_ok(at)
    assert at.query_params["seq_len"] == "12"
    at.sidebar.slider(key="ctl_d_model").set_value(48)
    run_ok(at)
    assert at.sidebar.select_slider(key="ctl_n_heads").options == ["1", "2", "3", "4", "6", "8", "12", "16"]
    at.sidebar.select_slider(key="ctl_n_heads").set_value(6)
    run_ok(at)
    assert len(heatmaps(at)) + len(at.get("vega_lite_chart")) >= 6
    # the temperature, the scaling and the mask are set above the maps (with live maps off: these widgets), and
    # nowhere else
    for key in ("ctl_scaled", "ctl_temperature", "ctl_mask", "ctl_pad_count"):
        assert key not in {
            w.key
            for w in at.sidebar.get("toggle")
            + at.sidebar.get("select_slider")
            + at.sidebar.get("selectbox")
            + at.sidebar.get("slider")
        }
    at.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert "unscaled" not in at.subheader[2].value and "scaled twin" in at.subheader[2].value
    at.select_slider(key="ctl_temperature").set_value(0.1)
    run_ok(at)
    at.selectbox(key="ctl_mask").set_value("causal+padding")
    run_ok(at)
    at.slider(key="ctl_pad_count").set_value(3)
    run_ok(at)
    at.sidebar.checkbox(key="ctl_positional").check()
    run_ok(at)
    at.sidebar.number_input(key="ctl_seed").set_value(5)
    run_ok(at)
    at.selectbox(key="pg_head").set_value(5)
    at.selectbox(key="pg_query").set_value(2)
    at.toggle(key="pg_qkv").set_value(True)
    run_ok(at)
    cfg = WhatIf(
        seq_len=12,
        d_model=48,
        n_heads=6,
        scaled=False,
        temperature=0.1,
        mask="causal+padding",
        pad_count=3,
        positional=True,
        seed=5,
    )
    assert at.session_state["whatif"] == cfg
    run = run_whatif(cfg)
    row = run.weights[5, 2]
    assert np.all(row[3:] == 0)  # causal: query 3 sees keys 1..3 only
    top = int(np.argmax(row))
    assert f"attends most to **{md_escape(run.tokens[top])}**" in texts(at)
    qkv = {h["title"]: h for h in heatmaps(at) if "of head 6" in h["title"]}
    assert sorted(qkv) == ["K of head 6", "Q of head 6", "V of head 6"]
    for name, arr in (("Q", run.q), ("K", run.k), ("V", run.v)):
        drawn = qkv[f"{name} of head 6"]  # dims 1..d_k on the axis and in the tooltip
        assert drawn["colName"] == "dim" and drawn["colShown"] == drawn["cols"] == [str(j) for j in range(1, 9)]
        cells = drawn["cells"].sort_values(["r", "c"])  # dims 1..d_k, as X and Z count
        assert list(cells["t"]) == fmt_all(arr[5])  # each cell's text, as sentences write it (its colour from it)
    assert f"{md_escape(run.tokens[top])} (#{top + 1}) with weight {row[top]:.3g}." in texts(at)  # check question
    at.sidebar.radio(key="ctl_input_kind").set_value("sentence")
    run_ok(at)
    at.sidebar.text_area(key="ctl_sentence").input("the cat sat")
    run_ok(at)
    assert at.session_state["whatif"].sentence == "the cat sat"
    at.sidebar.radio(key="ctl_input_kind").set_value("one_hot")
    run_ok(at)
    at.sidebar.text_input(key="ctl_pattern").input("X Y Y")
    run_ok(at)
    assert at.query_params["pattern"] == "X Y Y"


@pytest.mark.slow
def test_512_tokens_16_heads_bars_and_uniform_note():
    at = run_ok(app(PLAY, {"seq_len": "512", "d_model": "1024", "heads": "16"}, timeout=300))
    cfg = WhatIf(seq_len=512, d_model=1024, n_heads=16)
    run = run_whatif(cfg)
    row = run.weights[0, 0]
    page = texts(at)
    assert "Only the 20 largest of the 512 weights are drawn, largest first" in page
    assert f"they hold {100 * np.sort(row)[-20:].sum():.3g}% of the row" in page
    bars = next(e for e in at.get("vega_lite_chart") if "weights of query #1 in head 1" in e.proto.spec)
    df = chart_datasets(bars)[0]
    assert len(df) == 20 and df["v"].iloc[0] == pytest.approx(round(float(row.max()), 4))
    y_scale = json.loads(bars.proto.spec)["encoding"]["y"].get("scale", {})
    assert y_scale.get("domain") == [0.0, 1.0]  # weights keep the absolute axis unless the reader stretches
    sat = _sat(cfg)
    sharpest = max(s["max_weight"] for s in sat)
    assert any(
        f"Attention is nearly uniform here (max weight {sharpest:.3g} vs uniform 1/T = 0.00195)" in i.value
        for i in at.info
    )
    caps = [img.caption for el in at.get("image") for img in el.proto.imgs]
    assert sum(c.startswith("heads 1–16, 4 per row") for c in caps) == 1
    assert any(c.startswith("X input (512 x 1024 as an image") for c in caps)  # no "(512 x 1024) (512 x 1024"
    assert "makes large maps look pale" in page


@pytest.mark.parametrize(
    "query",
    [
        {"seq_len": "1"},
        {"temperature": "0.1", "scaled": "0", "d_model": "1024", "heads": "1"},
        {"temperature": "10"},
        {"mask": "padding", "pad": "512", "seq_len": "4"},
    ],
)
def test_playground_extremes(query):
    at = run_ok(app(PLAY, query, timeout=120))
    assert at.metric
    page = texts(at)
    assert "Check yourself" in page and "The change from X to Z is" in page
    if query.get("pad") == "512":
        assert "may attend to no key under this mask" in page
        assert "None: the mask allows it no key" in page
    if query.get("seq_len") == "1":
        assert "Head 1 is **single key** here" in page
    assert "nan" not in page.lower().replace("nats", "")


def test_classroom_mode_hides_the_answer_in_the_check_questions():
    at = run_ok(app(PLAY, {"classroom": "1"}))
    assert "Predict first" in texts(at)
    run = run_whatif(WhatIf())
    top = int(np.argmax(run.weights[0, 0]))
    assert "Which key does query" not in texts(at)
    assert f"(#{top + 1}) with weight {run.weights[0, 0, top]:.3g}." not in texts(at)
    assert math.isfinite(run.weights[0, 0, top])


def _widget_keys(place) -> set[str]:
    kinds = ("toggle", "select_slider", "selectbox", "slider", "checkbox", "number_input", "radio")
    return {w.key for kind in kinds for w in place.get(kind)}


MAP_KEYS = {"ctl_scaled", "ctl_temperature", "ctl_mask", "ctl_pad_count"}


@pytest.mark.parametrize("live", [True, False])
def test_one_control_per_setting_and_the_intro_says_where(live):
    """The temperature, the scaling and the mask have one control each, above the maps: the live maps' own (live)
    or the page's widgets (static); none in the sidebar. The intro says where they are."""
    at = run_ok(app(PLAY, {"mask": "padding", "pad": "2"}, live=live))
    assert not _widget_keys(at.sidebar) & MAP_KEYS
    main = _widget_keys(at.main) & MAP_KEYS
    assert main == (set() if live else MAP_KEYS)  # with live maps, the maps' controls (Chromium) are the only ones
    intro = at.markdown[0].value if "Each token's query" in at.markdown[0].value else texts(at)
    assert "right above the maps" in intro and "sidebar" in intro
    assert "Move the sliders in the sidebar" not in texts(at)


@pytest.mark.parametrize("live", [True, False])
def test_the_link_still_sets_the_temperature_the_scaling_and_the_mask(live):
    """Old links keep working: temperature=, scaled=, mask= and pad= set the page's setting with or without a
    sidebar control for them, and the page writes them back into the URL."""
    query = {"seq_len": "6", "d_model": "32", "heads": "2", "temperature": "0.25", "scaled": "0", "mask": "causal"}
    at = run_ok(app(PLAY, query, live=live))
    assert at.query_params["temperature"] == "0.25" and at.query_params["scaled"] == "0"
    assert at.query_params["mask"] == "causal"
    assert r"\tau = 0.25" in texts(at) and "scaling off" in texts(at)
    if not live:
        assert at.select_slider(key="ctl_temperature").value == 0.25
        assert at.toggle(key="ctl_scaled").value is False


def test_a_hidden_temperature_is_not_drawn_above_the_maps():
    at = run_ok(app(PLAY, {"hide": "temperature"}))
    assert "ctl_temperature" not in _widget_keys(at.main) and "ctl_scaled" in _widget_keys(at.main)
    assert "this page draws none of them" not in texts(at)
