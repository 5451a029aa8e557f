"""The softmax saturation lab: core sweep measures and the page."""

import math

import pytest

from attention_core.sweep import saturation_point, sweep_d_ks, whatif_sentence
from tests.apptest_util import app, chart_datasets, run_ok

PAGE = "pages/3_Softmax_saturation.py"


@pytest.mark.parametrize("d_k", [4, 64, 1024])
def test_sweep_score_std_matches_theory(d_k):
    un = saturation_point(d_k, 64, scaled=False, n_seeds=4, n_rows=512)
    sc = saturation_point(d_k, 64, scaled=True, n_seeds=4, n_rows=512)
    assert abs(un["score_std"] / math.sqrt(d_k) - 1) < 0.10
    assert abs(sc["score_std"] - 1) < 0.10
    assert un["score_std_theory"] == math.sqrt(d_k) and sc["score_std_theory"] == 1.0


def test_gradients_fall_unscaled_and_stay_flat_scaled():
    d_ks = [16, 64, 256, 1024]
    un = [saturation_point(d, 32, False)["grad_norm"] for d in d_ks]
    sc = [saturation_point(d, 32, True)["grad_norm"] for d in d_ks]
    assert all(a > b for a, b in zip(un, un[1:])), un
    assert un[-1] < un[0] / 4
    assert max(sc) / min(sc) < 1.3, sc
    sat = [saturation_point(d, 32, False)["near_one_hot_share"] for d in d_ks]
    assert sat[-1] > 0.5 > sat[0]


@pytest.mark.parametrize("d_k, tau", [(1, 1.0), (16, 0.5), (256, 2.0)])
def test_unscaled_at_temperature_sqrt_dk_equals_scaled(d_k, tau):
    a = saturation_point(d_k, 16, scaled=True, temperature=tau)
    b = saturation_point(d_k, 16, scaled=False, temperature=tau * math.sqrt(d_k))
    for name in ("max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm"):
        assert b[name] == pytest.approx(a[name], rel=1e-9, abs=1e-12), name


def test_sweep_points_and_sentence():
    assert sweep_d_ks(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    un, sc = saturation_point(512, 8, False), saturation_point(512, 8, True)
    s = whatif_sentence(un, sc)
    assert s.startswith("At d_k = 512 without scaling, ")
    assert f"{un['near_one_hot_share']:.0%} of rows" in s
    assert f"1/{sc['grad_norm'] / un['grad_norm']:.3g} of the scaled case" in s


def _marker_d_ks(at):
    out = []
    for el in at.get("vega_lite_chart"):
        for df in chart_datasets(el):
            if list(df.columns) == ["d_k"] and len(df) == 1:
                out.append(int(df["d_k"].iloc[0]))
    return out


def test_page_default_sentence_matches_core():
    at = run_ok(app(PAGE))
    cfg = at.session_state["whatif"]
    un = saturation_point(cfg.d_k, cfg.seq_len, False, cfg.temperature, n_seeds=4, n_rows=256)
    sc = saturation_point(cfg.d_k, cfg.seq_len, True, cfg.temperature, n_seeds=4, n_rows=256)
    assert at.info[0].value == whatif_sentence(un, sc)
    assert _marker_d_ks(at) == [16] * 6


def test_moving_controls_moves_the_marked_point():
    at = run_ok(app(PAGE))
    at.sidebar.select_slider(key="ctl_n_heads").set_value(1)
    run_ok(at)
    assert _marker_d_ks(at) == [64] * 6
    assert "At d_k = 64 without scaling" in at.info[0].value
    at.sidebar.slider(key="ctl_d_model").set_value(512)
    run_ok(at)
    assert _marker_d_ks(at) == [512] * 6
    before = at.info[0].value
    at.sidebar.slider(key="ctl_seq_len").set_value(64)
    run_ok(at)
    assert at.info[0].value != before
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    at.sidebar.number_input(key="ctl_seed").set_value(2)
    run_ok(at)


@pytest.mark.parametrize("query", [{"seq_len": "1"}, {"seq_len": "512"}, {"temperature": "0.1"},
                                   {"temperature": "10"}, {"d_model": "1024", "heads": "1", "seq_len": "32"}])
def test_page_extremes(query):
    at = run_ok(app(PAGE, query, timeout=180))
    assert at.info and len(at.get("vega_lite_chart")) >= 10
