"""The softmax saturation lab: core sweep measures (properties, autograd parity) and the page."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import softmax_jacobian
from attention_core.sweep import (
    row_up_close,
    saturation_point,
    saturation_sweep,
    score_gradient,
    setting_sentence,
    sweep_d_ks,
)
from tests.apptest_util import app, chart_datasets, run_ok, texts
from ui.saturation_charts import log_ticks

PAGE = "pages/Softmax_saturation.py"


@pytest.mark.slow
@pytest.mark.parametrize("d_k", [4, 64, 1024])
def test_sweep_score_std_matches_theory(d_k):
    un = saturation_point(d_k, 64, scaled=False, n_seeds=4, n_rows=512)
    sc = saturation_point(d_k, 64, scaled=True, n_seeds=4, n_rows=512)
    assert abs(un.score_std.mean / math.sqrt(d_k) - 1) < 0.10
    assert abs(sc.score_std.mean - 1) < 0.10
    assert un.score_std_theory == math.sqrt(d_k) and sc.score_std_theory == 1.0
    assert un.score_std.lo <= un.score_std.mean <= un.score_std.hi


def test_gradients_fall_unscaled_and_stay_flat_scaled():
    d_ks = [16, 64, 256, 1024]
    un = [saturation_point(d, 32, False).grad_norm.mean for d in d_ks]
    sc = [saturation_point(d, 32, True).grad_norm.mean for d in d_ks]
    assert all(a > b for a, b in zip(un, un[1:])), un
    assert un[-1] < un[0] / 4
    assert max(sc) / min(sc) < 1.3, sc
    sat = [saturation_point(d, 32, False).near_one_hot_share.mean for d in d_ks]
    assert sat[-1] > 0.5 > sat[0]


@given(
    d_k=st.integers(1, 64),
    T=st.integers(1, 16),
    tau=st.floats(0.1, 10),
    scaled=st.booleans(),
    seed=st.integers(0, 1000),
)
@settings(max_examples=30, deadline=None)
def test_autograd_gradient_is_the_jacobian_times_upstream(d_k, T, tau, scaled, seed):
    """Parity: torch autograd through softmax equals J^T g with J = diag(p) - p p^T, and every row of the
    gradient sums to 0 (adding a constant to all logits of a row changes nothing)."""
    import torch

    sg = score_gradient(d_k, T, scaled, tau, n_rows=3, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    torch.randn(3, d_k, generator=gen, dtype=torch.float64)
    torch.randn(T, d_k, generator=gen, dtype=torch.float64)
    g = torch.randn(3, T, generator=gen, dtype=torch.float64).numpy()
    expected = np.einsum("nij,ni->nj", softmax_jacobian(sg.weights), g)  # (N, T): J^T g (J is symmetric)
    np.testing.assert_allclose(sg.grad, expected, atol=1e-12)
    np.testing.assert_allclose(sg.grad.sum(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(sg.weights.sum(axis=-1), 1.0)


def test_score_gradient_rejects_bad_arguments():
    with pytest.raises(ValueError, match="d_k"):
        score_gradient(0, 4, True)
    with pytest.raises(ValueError, match="temperature"):
        score_gradient(4, 4, True, temperature=0)


@pytest.mark.parametrize("d_k, tau", [(1, 1.0), (16, 0.5), (256, 2.0)])
def test_unscaled_at_temperature_sqrt_dk_equals_scaled(d_k, tau):
    a = saturation_point(d_k, 16, scaled=True, temperature=tau)
    b = saturation_point(d_k, 16, scaled=False, temperature=tau * math.sqrt(d_k))
    for name in ("max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm"):
        assert getattr(b, name).mean == pytest.approx(getattr(a, name).mean, rel=1e-9, abs=1e-12), name


def test_sweep_curves_and_gap():
    assert sweep_d_ks(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    sw = saturation_sweep(8, 1.0, max_d_k=64, n_seeds=2, n_rows=64)
    assert sw.d_ks == (1, 2, 4, 8, 16, 32, 64)
    assert [p.d_k for p in sw.scaled] == list(sw.d_ks) and all(p.scaled for p in sw.scaled)
    assert [p.temperature for p in sw.unscaled_sqrt_dk] == pytest.approx([math.sqrt(d) for d in sw.d_ks])
    assert sw.temperature_gap < 1e-12
    with pytest.raises(ValueError, match="setting"):
        sw.curve("both")


def test_setting_sentence_follows_the_setting():
    un, sc = saturation_point(512, 8, False), saturation_point(512, 8, True)
    s = setting_sentence(un, sc)
    assert s.startswith("Your setting, unscaled at d_k = 512: ")
    assert f"{un.near_one_hot_share.mean:.0%} of rows" in s and "Turning scaling on" in s
    assert f"{sc.grad_norm.mean / un.grad_norm.mean:.3g} times larger" in s
    s2 = setting_sentence(sc, un)
    assert s2.startswith("Your setting, scaled by 1/√d_k at d_k = 512") and "Turning scaling off" in s2
    assert "times smaller" in s2
    one = setting_sentence(saturation_point(1, 8, True), saturation_point(1, 8, False))
    assert "scaling changes nothing" in one and "times" not in one
    single = setting_sentence(saturation_point(64, 1, True), saturation_point(64, 1, False))
    assert single.startswith("With a single key")
    with pytest.raises(ValueError):
        setting_sentence(sc, sc)


def test_row_up_close_and_log_ticks():
    r = row_up_close(64, 5, 2.0, seed=1)
    np.testing.assert_allclose(r.logits_scaled * 8, r.logits_unscaled)
    np.testing.assert_allclose(r.logits_unscaled * 2.0, r.scores)
    assert r.weights_scaled.sum() == pytest.approx(1.0)
    assert log_ticks(0.9, 33) == [1, 2, 5, 10, 20]
    assert 1 in log_ticks(0.5, 2)
    assert log_ticks(0.17, 0.36) == [0.2, 0.3]  # finer steps, as many as fit a narrow range


def _charts(at):
    return [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]


def _legend_domains(spec):
    return [
        tuple(layer["encoding"]["color"]["scale"]["domain"])
        for layer in spec.get("layer", [])
        if "scale" in layer.get("encoding", {}).get("color", {})
    ]


def _marker_d_ks(at):
    out = []
    for el in at.get("vega_lite_chart"):
        for df in chart_datasets(el):
            if list(df.columns) == ["d_k"] and len(df) == 1:
                out.append(int(df["d_k"].iloc[0]))
    return out


def test_page_default_shows_the_setting_and_only_drawn_series():
    at = run_ok(app(PAGE))
    cfg = at.session_state["whatif"]
    un = saturation_point(cfg.d_k, cfg.seq_len, False, cfg.temperature)
    sc = saturation_point(cfg.d_k, cfg.seq_len, True, cfg.temperature)
    assert at.info[0].value == setting_sentence(sc, un)
    assert _marker_d_ks(at) == [16] * 6
    sweeps = [s for s in _charts(at) if "layer" in s][:6]
    for spec in sweeps:
        domains = set(_legend_domains(spec))
        assert len(domains) == 1
        (domain,) = domains
        assert domain[0] == "scaled by 1/√d_k (your setting)" and domain[1] == "unscaled"
        assert ("unscaled at temperature τ·√d_k" in domain) == spec["title"].startswith("mean largest weight")
    score_axis = sweeps[0]["layer"][0]["encoding"]["y"]["axis"]["values"]
    assert 1.0 in score_axis  # the scaled line sits at 1
    t = texts(at)
    assert "e+00" not in t and "gap between them over the whole sweep is exactly 0" in t
    assert "Gradient reaching the scores" in t and "length (L2 norm)" in t
    assert f"raw scores' measured spread is {un.score_std.mean:.3g}" in t


def test_scaling_toggle_changes_what_is_shown():
    at = run_ok(app(PAGE))
    before = at.info[0].value
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert at.info[0].value != before and at.info[0].value.startswith("Your setting, unscaled at d_k = 16")
    spec = [s for s in _charts(at) if "layer" in s][0]
    assert _legend_domains(spec)[0] == ("scaled by 1/√d_k", "unscaled (your setting)")
    assert "Your setting (unscaled) is the thick line" in texts(at)
    assert "With your setting (unscaled) the largest weight" in texts(at)
    assert "Jacobian diag(p) − ppᵀ, unscaled (your setting)" in [s.get("title") for s in _charts(at)]


@pytest.mark.slow
def test_moving_controls_moves_the_marked_point():
    at = run_ok(app(PAGE))
    at.sidebar.select_slider(key="ctl_n_heads").set_value(1)
    run_ok(at)
    assert _marker_d_ks(at) == [64] * 6
    assert "at d_k = 64:" in at.info[0].value
    at.sidebar.slider(key="ctl_d_model").set_value(512)
    run_ok(at)
    assert _marker_d_ks(at) == [512] * 6
    before = at.info[0].value
    at.sidebar.slider(key="ctl_seq_len").set_value(64)
    run_ok(at)
    assert at.info[0].value != before
    at.sidebar.number_input(key="ctl_seed").set_value(2)
    run_ok(at)
    assert "Check yourself" in texts(at)


@pytest.mark.slow
@pytest.mark.parametrize(
    "query, shown",
    [
        ({"seq_len": "1"}, "With a single key every row puts all its weight"),
        ({"seq_len": "512"}, "drawn for rows of up to 32 keys"),
        ({"temperature": "0.1"}, "temperature τ = 0.1"),
        ({"temperature": "10"}, "× 4 = 40: dividing by √d_k"),
        ({"d_model": "1024", "heads": "1", "seq_len": "32", "scaled": "0"}, "Your setting, unscaled at d_k = 1024"),
        ({"d_model": "1", "heads": "1"}, "At d_k = 1, √d_k = 1, so scaling changes nothing"),
    ],
)
def test_page_extremes(query, shown):
    at = run_ok(app(PAGE, query, timeout=300))
    assert shown in texts(at)
    assert len(at.get("vega_lite_chart")) >= 6 and "e+00" not in texts(at)
