"""AppTest: the home page, the shared controls and the Playground page."""

import math

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif, saturation_metrics
from tests.apptest_util import app, run_ok, texts
from ui.text import md_escape

PLAY = "pages/1_Playground.py"


def test_home_runs_and_shows_class_notes_numbers():
    at = run_ok(app("streamlit_app.py"))
    assert len(at.get("page_link")) >= 3
    s = 10 / math.sqrt(2)
    b = math.exp(s) / (3 + math.exp(s))
    assert f"{b:.4f}" in texts(at)
    assert at.latex and "softmax" in at.latex[0].value


def test_playground_default_numbers_match_core():
    at = run_ok(app(PLAY))
    run = run_whatif(WhatIf())
    sat = [saturation_metrics(w).summary() for w in run.weights]
    assert len(at.get("vega_lite_chart")) >= 4 + 1 + 2  # 4 heads, the bar chart, X and Z
    row = run.weights[0, 0]
    top = int(np.argmax(row))
    assert f"attends most to **{md_escape(run.tokens[top])}** (#{top + 1}) with weight {row[top]:.3g}" in texts(at)
    assert at.metric[0].value == f"{sat[0]['entropy']:.3g}"
    assert at.metric[1].value == f"{sat[0]['max_weight']:.3g}"
    twin = [saturation_metrics(w).summary() for w in run_whatif(WhatIf(scaled=False)).weights]
    assert at.metric[1].delta == f"{sat[0]['max_weight'] - twin[0]['max_weight']:+.3g}"
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["effective_tokens"].to_numpy(), [s["effective_tokens"] for s in sat], rtol=1e-9)


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
    assert len([c for c in at.get("vega_lite_chart")]) >= 6
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert "unscaled" not in at.subheader[2].value and "scaled twin" in at.subheader[2].value
    at.sidebar.select_slider(key="ctl_temperature").set_value(0.1)
    run_ok(at)
    at.sidebar.selectbox(key="ctl_mask").set_value("causal+padding")
    run_ok(at)
    at.sidebar.slider(key="ctl_pad_count").set_value(3)
    run_ok(at)
    at.sidebar.checkbox(key="ctl_positional").check()
    run_ok(at)
    at.sidebar.number_input(key="ctl_seed").set_value(5)
    run_ok(at)
    at.selectbox(key="pg_head").set_value(5)
    at.selectbox(key="pg_query").set_value(2)
    at.toggle(key="pg_qkv").set_value(True)
    run_ok(at)
    cfg = WhatIf(seq_len=12, d_model=48, n_heads=6, scaled=False, temperature=0.1, mask="causal+padding",
                 pad_count=3, positional=True, seed=5)
    assert at.session_state["whatif"] == cfg
    run = run_whatif(cfg)
    row = run.weights[5, 2]
    assert np.all(row[3:] == 0)  # causal: query 3 sees keys 1..3 only
    top = int(np.argmax(row))
    assert f"attends most to **{md_escape(run.tokens[top])}**" in texts(at)
    assert sum("of head 6" in str(c.proto.spec) for c in at.get("vega_lite_chart")) == 3  # Q, K, V
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


@pytest.mark.parametrize("query, notice", [
    ({"seq_len": "-3"}, "seq_len=-3 is outside 1 to 512; using 1"),
    ({"heads": "abc"}, "heads='abc' is not a whole number"),
    ({"d_model": "10", "heads": "3"}, "heads=3 does not divide d_model=10; using 2"),
    ({"temperature": "nan"}, "temperature='nan' is not a finite number"),
])
def test_bad_url_gives_notice_and_valid_page(query, notice):
    at = run_ok(app(PLAY, query))
    assert any(notice in w.value for w in at.warning), [w.value for w in at.warning]
    cfg = at.session_state["whatif"]
    assert isinstance(cfg, WhatIf)
    assert cfg.d_model % cfg.n_heads == 0


def test_url_values_are_used_and_written_back():
    at = run_ok(app(PLAY, {"seq_len": "5", "d_model": "32", "heads": "8", "scaled": "0", "temperature": "2.0"}))
    cfg = at.session_state["whatif"]
    assert (cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.scaled, cfg.temperature) == (5, 32, 8, False, 2.0)
    assert at.query_params["heads"] == "8" and not at.warning


def test_long_sentence_is_truncated_with_notice():
    at = run_ok(app(PLAY, {"input": "sentence", "sentence": " ".join(f"w{i}" for i in range(600)), "d_model": "8", "heads": "1"}))
    assert any("only the first 512 are used" in i.value for i in at.info)


def test_empty_sentence_is_refused_and_state_kept():
    at = run_ok(app(PLAY, {"input": "sentence", "sentence": "hello world"}))
    at.sidebar.text_area(key="ctl_sentence").input("   ")
    run_ok(at)
    assert at.session_state["whatif"].sentence == "hello world"
    assert any("empty" in w.value for w in at.warning)


def test_d_model_change_adjusts_heads_with_notice():
    at = run_ok(app(PLAY))
    at.sidebar.slider(key="ctl_d_model").set_value(10)
    run_ok(at)
    assert at.session_state["whatif"].n_heads == 5
    assert any("switched to 5 heads" in w.value for w in at.warning)


@pytest.mark.parametrize("query", [
    {"seq_len": "1"},
    {"seq_len": "512", "d_model": "1024", "heads": "16"},
    {"temperature": "0.1", "scaled": "0", "d_model": "1024", "heads": "1"},
    {"temperature": "10"},
    {"mask": "padding", "pad": "512", "seq_len": "4"},
])
def test_playground_extremes(query):
    at = run_ok(app(PLAY, query, timeout=120))
    assert at.metric
