"""AppTest: the Sinks and linear attention page: sink sliders, StreamingLLM's window, linear attention; extremes, bad URLs."""

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs

from attention_core import run_whatif
from attention_core.sinks import sink_attention, streaming_mask
from tests.apptest_util import app, chart_datasets, heatmaps, run_ok, texts
from tests.test_app_positions import move_sidebar_to_extremes
from ui.lessons.sinks_and_linear_attention.charts import SINKS_CHARS, default_sinks, format_sinks, parse_sinks
from ui.skeleton.page_params import Fitted

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
    """The cells (r, c, v, t) of the canvas heatmap titled ``title``, else the first dataset of the Vega-Lite chart
    (the bar charts) titled so."""
    for h in heatmaps(at):
        if h["title"] == title:
            return h["cells"]
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
    assert any("head 2: weights and the sink" in h["title"] for h in heatmaps(at))
    assert at.query_params["head"] == "2"


def sliders(at, H: int = 4) -> list[float]:
    return [at.slider(key=f"sk_sink_{h}").value for h in range(H)]


def notices(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_a_good_sinks_link_seeds_the_sliders_and_round_trips():
    at = run_ok(app(PAGE, {"sinks": "-1.5,10,0,3"}))
    assert sliders(at) == [-1.5, 10.0, 0.0, 3.0] and not at.warning
    assert at.query_params["sinks"] == "-1.5,10,0,3"
    np.testing.assert_allclose(
        [head_sums(at)[h] for h in range(1, 5)], expected_sums(at.session_state["whatif"], [-1.5, 10, 0, 3]), atol=1e-4
    )
    at = run_ok(app(PAGE, {"sinks": " 5 , -10"}))  # fewer values than heads: the rest keep their default
    assert sliders(at) == [5.0, -10.0, 2.0, 4.0] and not at.warning and at.query_params["sinks"] == "5,-10,2,4"


@pytest.mark.parametrize(
    "link, used, says",
    [
        (
            "0.3,abc,99,1,5",
            [0.5, 0.0, 10.0, 1.0],
            [
                "sinks: 0.3 for head 1 is not a multiple of 0.5 from -10 to 10; using 0.5.",
                "sinks: 'abc' for head 2 is not a finite number; using 0.",
                "sinks: 99 for head 3 is not a multiple of 0.5 from -10 to 10; using 10.",
                "sinks has 5 values but there are 4 heads; the extra ones are ignored.",
            ],
        ),
        ("nan", [-2.0, 0.0, 2.0, 4.0], ["sinks: 'nan' for head 1 is not a finite number; using -2."]),
        (
            "1," * 100,
            [-2.0, 0.0, 2.0, 4.0],
            [f"sinks= is 200 characters long; at most {SINKS_CHARS} are allowed. Using -2,0,2,4."],
        ),
    ],
)
def test_a_bad_sinks_link_gives_a_notice_and_the_values_it_allows(link, used, says):
    at = run_ok(app(PAGE, {"sinks": link}))
    assert all(f"- {n}" in notices(at).splitlines() for n in says), notices(at)  # each its own line of the list
    assert sliders(at) == used and at.query_params["sinks"] == format_sinks(used)
    at.slider(key="sk_sink_2").set_value(-3.5)  # the link follows a slider; the notice no longer applies
    run_ok(at)
    assert at.query_params["sinks"] == format_sinks([*used[:2], -3.5, used[3]])
    assert "sinks" not in notices(at)


def test_heads_added_later_start_at_their_default_and_the_sliders_survive_a_page_switch():
    at = run_ok(app(PAGE, {"sinks": "-1.5,10,0,3"}))
    at.sidebar.select_slider(key="ctl_n_heads").set_value(8)
    run_ok(at)
    assert sliders(at, 8) == [-1.5, 10.0, 0.0, 3.0, *default_sinks(8)[4:]]
    assert at.query_params["sinks"] == "-1.5,10,0,3,1.5,2.5,3,4"
    at.slider(key="sk_sink_7").set_value(-9.0)
    run_ok(at)
    at.switch_page("pages/Masks.py")
    run_ok(at)
    at.switch_page(PAGE)
    run_ok(at)
    assert sliders(at, 8) == [-1.5, 10.0, 0.0, 3.0, 1.5, 2.5, 3.0, -9.0]
    assert at.query_params["sinks"] == "-1.5,10,0,3,1.5,2.5,3,-9"


NUMBER_LISTS = hs.lists(
    hs.floats(-30, 30) | hs.integers(-30, 30) | hs.sampled_from(["nan", "-inf", "x", ""]), max_size=20
)


@given(hs.text(max_size=30) | NUMBER_LISTS.map(lambda xs: ",".join(map(str, xs))), hs.integers(1, 16))
def test_any_sinks_text_gives_a_logit_per_head_the_sliders_allow(raw, H):
    got = parse_sinks(raw, H)
    value = got.value if isinstance(got, Fitted) else got
    assert len(value) == H and all(-10 <= s <= 10 and (2 * s).is_integer() for s in value)
    assert parse_sinks(format_sinks(value), H) == value  # what the link writes is read back without a notice


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
