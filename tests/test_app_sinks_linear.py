"""AppTest: the Sinks and linear attention page: sink sliders, StreamingLLM's window, linear attention; extremes, bad URLs."""

import json
import re

import numpy as np
import pytest

from attention_core import run_whatif
from attention_core.sinks import sink_attention, streaming_mask
from tests.apptest_util import app, chart_datasets, run_ok, texts
from tests.test_app_positions import move_sidebar_to_extremes
from ui.lessons.sinks_and_linear_attention.charts import default_sinks

PAGE = "pages/Sinks_and_linear_attention.py"


def head_sums(at) -> dict[int, float]:
    """'head 1 (s = -2): 0.9892; head 2 (s = -10): 1 − 2.1e-09' -> {1: 0.9892, 2: 1 - 2.1e-09}."""
    found = re.findall(r"head (\d+) \(s = [-\d.]+\): (\d\.\d+|1 − [\d.e+-]+\d|1 \(to float rounding\))", texts(at))
    return {
        int(h): 1 - float(v[4:]) if v.startswith("1 − ") else 1.0 if v.startswith("1 (") else float(v) for h, v in found
    }


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def chart(at, title: str):
    for el in at.get("vega_lite_chart"):
        t = json.loads(el.proto.spec).get("title")
        if t == title:
            return chart_datasets(el)[0]
    raise AssertionError(f"no chart titled {title!r}")


def expected_sums(cfg, sinks):
    run = run_whatif(cfg.replace(positional=False))
    _, w, _ = sink_attention(
        *(a.astype(np.float64) for a in (run.q, run.k, run.v)),
        np.asarray(sinks),
        mask=run.mask,
        scaled=cfg.scaled,
        temperature=cfg.temperature,
    )
    return w.sum(-1).mean(-1)


def test_defaults_sums_below_one_and_invariants_shown():
    at = run_ok(app(PAGE))
    cfg = at.session_state["whatif"]
    sums = head_sums(at)
    assert set(sums) == {1, 2, 3, 4} and all(s < 1 for s in sums.values())
    np.testing.assert_allclose([sums[h] for h in range(1, 5)], expected_sums(cfg, [-2, 0, 2, 4]), atol=1e-4)
    assert "Every row of every head sums to less than 1" in texts(at)
    bars = chart(at, "weight on real tokens (mean over query rows)")
    assert (bars["v"] < 1).all() and list(bars["head"]) == ["head 1", "head 2", "head 3", "head 4"]
    assert float(metric(at, "max |weights − softmax")) < 1e-12
    assert float(metric(at, "max |weights with s = −∞")) < 1e-12
    assert at.query_params["sinks"] == "-2,0,2,4"
    assert float(metric(at, "max |causal parallel − recurrent|")) < 1e-9
    assert float(metric(at, "max |non-causal parallel")) < 1e-9
    assert metric(at, "state numbers") == "272 vs 64"  # d_k = 16: 16 x 16 + 16 numbers; T = 8: 64 weights
    assert "The last query (token 8) keeps **6 of 8** keys" in texts(at)


def test_sink_sliders_no_sink_toggle_and_head():
    at = run_ok(app(PAGE))
    at.slider(key="sk_sink_0").set_value(10.0)
    at.slider(key="sk_sink_3").set_value(-10.0)
    run_ok(at)
    sums = head_sums(at)
    assert sums[1] < 0.01 and sums[4] > 0.99
    assert at.query_params["sinks"] == "10,0,2,-10"
    at.toggle(key="sk_none").set_value(True)
    run_ok(at)
    assert "With no sink every row with an allowed key sums to exactly 1" in texts(at)
    assert at.query_params["nosink"] == "1"
    assert chart(at, "weight on real tokens (mean over query rows)")["v"].tolist() == pytest.approx([1.0] * 4)
    at.selectbox(key="sk_head").set_value(2)
    run_ok(at)
    assert any(
        "head 2: weights and the sink" in (json.loads(e.proto.spec).get("title") or "")
        for e in at.get("vega_lite_chart")
    )
    assert at.query_params["head"] == "2"


def test_streaming_window_controls_and_mask():
    at = run_ok(app(PAGE, {"seq_len": "12"}))
    for n_sink, window in ((0, 1), (64, 512), (1, 3), (4, 4)):
        at.slider(key="sk_n_sink").set_value(n_sink)
        at.slider(key="sk_window").set_value(window)
        run_ok(at)
        frame = chart(at, "StreamingLLM mask (1 = may attend)")
        shown = np.zeros((12, 12))
        shown[frame["r"], frame["c"]] = frame["v"]
        np.testing.assert_array_equal(shown, streaming_mask(12, n_sink, window).astype(float))
    assert (
        "The last query (token 12) keeps **8 of 12** keys: the first 4 (tokens 1–4, the sinks) and the last 4 "
        "(tokens 9–12)" in texts(at)
    )
    assert at.query_params["n_sink"] == "4" and at.query_params["window"] == "4"


def test_linear_attention_section_with_causal_mask():
    at = run_ok(app(PAGE, {"mask": "causal", "seq_len": "20", "d_model": "8", "heads": "2"}))
    assert metric(at, "state numbers") == "20 vs 400"  # d_k = 4: 4 x 4 + 4; T = 20
    assert "already 20.0× the state" in texts(at)
    frame = chart(at, "linear attention, head 1 (causal)")
    assert (frame[frame["c"] > frame["r"]]["v"] == 0).all()
    mem = chart(at, "Memory per head: weights matrix vs recurrent state")
    assert set(mem["numbers"][mem["kind"].str.startswith("linear")]) == {20}


@pytest.mark.parametrize(
    "query",
    [
        {"seq_len": "1"},
        {"d_model": "2", "heads": "2"},
        {"heads": "16"},
        {"temperature": "0.1"},
        {"temperature": "10"},
        {"mask": "padding", "pad": "512"},
        {"mask": "causal+padding", "pad": "3", "nosink": "1"},
        {"seq_len": "512", "d_model": "1024", "heads": "16"},
    ],
)
def test_extremes(query):
    at = run_ok(app(PAGE, query, timeout=300))
    cfg = at.session_state["whatif"]
    sums = head_sums(at)
    if query.get("nosink") != "1":
        assert len(sums) == cfg.n_heads
        np.testing.assert_allclose(
            [sums[h + 1] for h in range(cfg.n_heads)],
            expected_sums(cfg, default_sinks(cfg.n_heads)),
            rtol=1e-3,
            atol=1e-4,
        )
        assert "sums to less than 1" in texts(at) or "is 1 in float64" in texts(at)
    assert float(metric(at, "max |causal parallel − recurrent|")) < 1e-9


@pytest.mark.slow
def test_sidebar_to_extremes_then_page_controls():
    at = run_ok(app(PAGE, timeout=300))
    move_sidebar_to_extremes(at)
    assert len(head_sums(at)) == 16 and len(at.query_params["sinks"].split(",")) == 16
    at.slider(key="sk_sink_15").set_value(-10.0)
    at.slider(key="sk_window").set_value(512)
    at.selectbox(key="sk_head").set_value(16)
    run_ok(at)
    assert "The last query (token 512) keeps **512 of 512** keys" in texts(at)
    assert float(metric(at, "max |causal parallel − recurrent|")) < 1e-9


@pytest.mark.parametrize(
    "temperature, says",
    [
        ("0.1", "0.785 on average with softmax and 0.0026 with linear attention: the linear map is flatter."),
        ("10", "0.00262 on average with softmax and 0.0026 with linear attention: about as flat as each other"),
    ],
)
def test_linear_flatness_sentence_follows_the_numbers_it_shows(temperature, says):
    """At temperature 10 both maps are near uniform (1/512 = 0.00195): the page must not call one flatter on
    numbers that print the same."""
    shown = texts(run_ok(app(PAGE, {"seq_len": "512", "heads": "1", "temperature": temperature}, timeout=240)))
    assert says in shown
