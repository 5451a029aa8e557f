"""The softmax saturation lab: core sweep measures (properties, autograd parity) and the page."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import saturation_metrics, softmax, softmax_jacobian
from attention_core.readout import NEARLY_UNIFORM_BELOW, PEAKED_FROM, SHARP_FROM, sharpness, sharpness_bands
from attention_core.saturation import NEAR_ONE_HOT
from attention_core.sweep import (
    point_from_samples,
    row_up_close,
    saturation_point,
    saturation_sweep,
    score_gradient,
    score_samples,
    softmax_backward,
    sweep_d_ks,
    upstream_gradients,
)
from tests.apptest_util import app, chart_datasets, chart_titles, heatmap, heatmaps, run_ok, texts
from ui.lessons.softmax_saturation.charts import log_ticks
from ui.lessons.softmax_saturation.text import gradient_sentence, setting_sentence, thresholds_sentence
from ui.text import fmt

PAGE = "pages/Softmax_saturation.py"
DERIVATIVES = "For readers who know derivatives"
OPEN = "sat_derivatives"  # the derivatives expander's key: True opens it


def opened(query=None, timeout=60):
    """The page with the derivatives part open (a reader clicked it)."""
    at = app(PAGE, query, timeout=timeout)
    at.session_state[OPEN] = True
    return run_ok(at)


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
    """Parity: torch autograd through softmax equals J^T g with J = diag(p) - p p^T and equals the closed form
    the sweep uses (softmax_backward); every row of the gradient sums to 0 (adding a constant to all logits of a
    row changes nothing)."""
    sg = score_gradient(d_k, T, scaled, tau, n_rows=3, seed=seed)
    expected = np.einsum("nij,ni->nj", softmax_jacobian(sg.weights), sg.upstream)  # (N, T): J^T g (J symmetric)
    np.testing.assert_allclose(sg.grad, expected, atol=1e-12)
    np.testing.assert_allclose(softmax_backward(sg.weights, sg.upstream), sg.grad, atol=1e-12)
    np.testing.assert_allclose(sg.grad.sum(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(sg.weights.sum(axis=-1), 1.0)


@given(d_k=st.sampled_from([1, 3, 16, 256]), T=st.integers(1, 12), tau=st.floats(0.1, 10), scaled=st.booleans())
@settings(max_examples=25, deadline=None)
def test_point_from_stored_scores_equals_the_measures_computed_one_by_one(d_k, T, tau, scaled):
    """A new temperature re-applies the softmax to stored scores; every measure equals saturation_metrics of the
    weights and the norm of the autograd-checked gradient, seed by seed, then over seeds."""
    samples, g = score_samples(d_k, T, n_seeds=3, n_rows=16), upstream_gradients(T, n_seeds=3, n_rows=16)
    point = point_from_samples(samples, g, scaled, tau)
    per_seed = []
    for s in range(3):
        rng = np.random.default_rng([s, T, d_k, 1])  # the seed's queries and keys, drawn again: its raw scores
        raw = rng.standard_normal((16, d_k)) @ rng.standard_normal((T, d_k)).T  # (N, T)
        stored = samples.centered[s].astype(np.float64)  # (N, T) raw minus each row's largest, kept in float32
        np.testing.assert_allclose(stored, raw - raw.max(axis=1, keepdims=True), atol=1e-5 * max(1, abs(raw).max()))
        assert (stored.max(axis=1) == 0).all()
        logits = stored / (math.sqrt(d_k) if scaled else 1.0) / tau  # the softmax ignores each row's shift
        p = softmax(logits)
        m = saturation_metrics(p).summary()
        m["grad_norm"] = float(np.linalg.norm(softmax_backward(p, g[s]), axis=-1).mean())
        m["score_std"] = float((raw / (math.sqrt(d_k) if scaled else 1.0)).std())
        per_seed.append(m)
    for name in (
        "max_weight",
        "normalized_entropy",
        "effective_tokens",
        "near_one_hot_share",
        "grad_norm",
        "score_std",
    ):
        vals = [m[name] for m in per_seed]
        got = getattr(point, name)
        rel = 1e-6 if name == "score_std" else 1e-9  # the spread comes from the float64 scores, before storing
        assert got.mean == pytest.approx(np.mean(vals), rel=rel, abs=1e-12), name
        assert got.lo == pytest.approx(min(vals), rel=rel, abs=1e-12)
        assert got.hi == pytest.approx(max(vals), rel=rel, abs=1e-12)
    assert samples.centered.shape == g.shape == (3, 16, T)


def test_score_gradient_rejects_bad_arguments():
    with pytest.raises(ValueError, match="d_k"):
        score_gradient(0, 4, True)
    with pytest.raises(ValueError, match="temperature"):
        score_gradient(4, 4, True, temperature=0)
    with pytest.raises(ValueError, match="upstream"):
        point_from_samples(score_samples(4, 5, 2, 3), upstream_gradients(4, 2, 3), True, 1.0)


@pytest.mark.parametrize("d_k, tau", [(1, 1.0), (16, 0.5), (256, 2.0)])
def test_unscaled_at_temperature_sqrt_dk_equals_scaled(d_k, tau):
    a = saturation_point(d_k, 16, scaled=True, temperature=tau)
    b = saturation_point(d_k, 16, scaled=False, temperature=tau * math.sqrt(d_k))
    for name in ("max_weight", "normalized_entropy", "effective_tokens", "near_one_hot_share", "grad_norm"):
        assert getattr(b, name).mean == pytest.approx(getattr(a, name).mean, rel=1e-9, abs=1e-12), name


def test_sweep_curves_gap_and_marked_points_on_them():
    assert sweep_d_ks(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    sw = saturation_sweep(8, 1.7, max_d_k=64, n_seeds=2, n_rows=64)
    assert sw.d_ks == (1, 2, 4, 8, 16, 32, 64)
    assert [p.d_k for p in sw.scaled] == list(sw.d_ks) and all(p.scaled for p in sw.scaled)
    assert [p.temperature for p in sw.unscaled_sqrt_dk] == pytest.approx([1.7 * math.sqrt(d) for d in sw.d_ks])
    assert sw.temperature_gap < 1e-12
    assert saturation_sweep(8, 1.0, max_d_k=64, n_seeds=2, n_rows=64).temperature_gap == 0  # same divisions
    assert sw.scaled[4] == saturation_point(16, 8, True, 1.7, n_seeds=2, n_rows=64)  # the page's diamond
    assert sw.unscaled[6] == saturation_point(64, 8, False, 1.7, n_seeds=2, n_rows=64)
    with pytest.raises(ValueError, match="setting"):
        sw.curve("both")


def test_sharpness_bands_come_from_the_thresholds_and_agree_with_sharpness():
    for T in (2, 8, 512):
        u = 1 / T
        bands = sharpness_bands(u)
        assert [b[0] for b in bands] == ["nearly uniform", "soft", "peaked", "sharp"]
        assert [b[2] for b in bands[:3]] == [NEARLY_UNIFORM_BELOW, PEAKED_FROM, SHARP_FROM]
        for word, r_lo, r_hi, m_lo, m_hi in bands:
            assert m_lo == pytest.approx(u + r_lo * (1 - u)) and m_hi == pytest.approx(u + r_hi * (1 - u))
            mid = (m_lo + m_hi) / 2
            assert sharpness(mid, u) == word
            assert sharpness(min(1.0, m_lo + 1e-9), u) == word
    with pytest.raises(ValueError):
        sharpness_bands(1.0)


@pytest.mark.parametrize("T", [2, 8, 512])
def test_thresholds_sentence_states_the_constants_in_weights(T):
    s = thresholds_sentence(T)
    u = 1 / T
    assert f"r = (m − {fmt(u)}) / (1 − {fmt(u)})" in s
    for word, _r_lo, r_hi, _m_lo, m_hi in sharpness_bands(u)[:3]:
        assert f"**{word}** below r = {r_hi:g} (m below {fmt(m_hi)})" in s
    assert f"**sharp** from r = {SHARP_FROM:g} (m from {fmt(u + SHARP_FROM * (1 - u))})" in s
    assert "single key" in thresholds_sentence(1) and "r =" not in thresholds_sentence(1)


def test_setting_and_gradient_sentences_follow_the_setting():
    un, sc = saturation_point(512, 8, False), saturation_point(512, 8, True)
    s = setting_sentence(un, sc)
    assert s.startswith("Your setting, unscaled at d_k = 512: rows are **sharp**")
    assert f"{un.near_one_hot_share.mean:.0%} of rows put over {NEAR_ONE_HOT:.0%}" in s and "Turning scaling on" in s
    assert f"mean largest weight {sc.max_weight.mean:.3g}" in s and "∂" not in s and "gradient" not in s
    s2 = setting_sentence(sc, un)
    assert s2.startswith("Your setting, scaled by 1/√d_k at d_k = 512: rows are **") and "Turning scaling off" in s2
    g = gradient_sentence(un, sc)
    assert f"{sc.grad_norm.mean / un.grad_norm.mean:.3g} times larger" in g
    assert "times smaller" in gradient_sentence(sc, un)
    one = setting_sentence(saturation_point(1, 8, True), saturation_point(1, 8, False))
    assert "scaling changes nothing" in one and "Turning" not in one
    single = setting_sentence(saturation_point(64, 1, True), saturation_point(64, 1, False))
    assert single.startswith("With a single key")
    assert gradient_sentence(saturation_point(64, 1, True), saturation_point(64, 1, False)).endswith("= 0.")
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


# ---- the page


def _charts(at):
    return [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]


def _sweeps(at) -> dict[str, dict]:
    """The sweep charts by the measure their line layer draws."""
    out = {}
    for spec in _charts(at):
        if "layer" in spec and spec["layer"][0]["encoding"]["x"]["field"] == "d_k":
            out[spec["layer"][1]["encoding"]["y"]["field"]] = spec
    return out


def _legend_domains(spec):
    return [
        tuple(layer["encoding"]["color"]["scale"]["domain"])
        for layer in spec.get("layer", [])
        if "scale" in layer.get("encoding", {}).get("color", {})
    ]


def _titles_in_order(node) -> list[str]:
    """The titles of the charts under ``node`` in page order: Vega-Lite charts' (the sweeps, the gradient chart) and
    heatmaps drawn on a canvas (the Jacobian maps)."""
    out = []
    for el, _ in _walk(node):
        kind = getattr(el, "type", "")
        if kind == "vega_lite_chart":
            out.append(str(json.loads(el.proto.spec).get("title")))
        elif kind == "bidi_component" and el.proto.component_name == "attention_explorer.heatmap":
            out.append(heatmap(el)["title"])
    return out


def _marker_d_ks(at):
    out = []
    for el in at.get("vega_lite_chart"):
        for df in chart_datasets(el):
            if list(df.columns) == ["d_k"] and len(df) == 1:
                out.append(int(df["d_k"].iloc[0]))
    return out


def _walk(node, inside=False):
    """(element, inside the derivatives expander) for every element of the page, in page order."""
    for child in node.children.values():
        opened = inside or (getattr(child, "type", "") == "expander" and child.label.startswith(DERIVATIVES))
        if hasattr(child, "children") and child.children is not None and not hasattr(child, "value"):
            yield from _walk(child, opened)
        else:
            yield child, inside


def _text(el) -> str:
    """The prose of an element (the shown source code of "Show the code that ran" is not prose)."""
    value = getattr(el, "value", None)
    return value if isinstance(value, str) and getattr(el, "type", "") != "code" else ""


def _page_order(at) -> tuple[list[str], list[str]]:
    """The texts outside and inside the derivatives expander, in page order."""
    outside, inside = [], []
    for el, in_exp in _walk(at.main):
        (inside if in_exp else outside).append(_text(el))
    return outside, inside


def test_page_default_shows_the_setting_and_only_drawn_series():
    at = opened()
    cfg = at.session_state["whatif"]
    un = saturation_point(cfg.d_k, cfg.seq_len, False, cfg.temperature)
    sc = saturation_point(cfg.d_k, cfg.seq_len, True, cfg.temperature)
    assert at.info[0].value == setting_sentence(sc, un)
    assert _marker_d_ks(at) == [16] * 5
    sweeps = _sweeps(at)
    assert set(sweeps) == {"score_std", "max_weight", "effective_tokens", "near_one_hot_share", "grad_norm"}
    for measure, spec in sweeps.items():
        domains = set(_legend_domains(spec))
        assert len(domains) == 1
        (domain,) = domains
        assert domain[0] == "scaled by 1/√d_k (your setting)" and domain[1] == "unscaled"
        assert ("unscaled at temperature τ·√d_k" in domain) == (measure == "max_weight")
    assert 1.0 in sweeps["score_std"]["layer"][0]["encoding"]["y"]["axis"]["values"]  # the scaled line sits at 1
    curves = [
        f
        for f in chart_datasets(next(e for e in at.get("vega_lite_chart") if "layer" in e.proto.spec))
        if "mine" in f.columns
    ]
    assert curves and set(curves[0]["d_k"]) == {float(d) for d in sweep_d_ks(1024)}
    t = texts(at)
    assert "e+00" not in t and "gap between them over the whole sweep is exactly 0" in t
    assert f"raw scores' measured spread is {un.score_std.mean:.3g}" in t
    assert gradient_sentence(sc, un) in t


def test_calculus_is_in_the_part_a_reader_opens_and_the_words_come_first():
    """Nothing outside the derivatives expander needs calculus; inside it, the gradient chart, its sentence, the
    Jacobian maps and their norms. The words the charts use are defined before the sentence that uses them."""
    closed = run_ok(app(PAGE))
    exp = next(e for e in closed.expander if e.label.startswith(DERIVATIVES))
    assert not exp.proto.expanded and not exp.children  # closed: nothing in it is drawn (or sent to the browser)
    assert not any("Jacobian" in t for t in chart_titles(closed))  # Vega-Lite charts' and canvas heatmaps' titles
    at = opened()
    outside, inside = _page_order(at)
    plain = "\n".join(outside)
    for word in ("∂", "Jacobian", "gradient", "derivative", "autograd"):
        assert word not in plain, word
    calculus = "\n".join(inside)
    assert "Gradient reaching the scores" in calculus and "‖∂L/∂logits‖" in calculus
    assert "Jacobian multiplies every gradient" in calculus and "times smaller" in calculus
    exp = next(e for e in at.expander if e.label.startswith(DERIVATIVES))
    titles = _titles_in_order(exp)  # the gradient chart (Vega-Lite), then the Jacobian maps (canvas heatmaps)
    assert titles[0] == "gradient reaching the scores, ‖∂L/∂logits‖"
    assert any("Jacobian diag(p) − ppᵀ, scaled (your setting)" in t for t in titles[1:]), titles

    def first(s: str) -> int:
        return next(i for i, text in enumerate(outside) if s in text)

    uses = first("Your setting, scaled by 1/√d_k at d_k = 16: rows are")
    for defined in ("**effective tokens**", "**near-one-hot rows**", "in nats", "**peaked** below r", "**soft** below"):
        assert first(defined) < uses, defined
    assert first("**temperature** τ divides") <= first("temperature τ = 1:")


@pytest.mark.parametrize(
    "query, shown, word",
    [
        ({}, "m below 0.475", "soft"),
        ({"seq_len": "512"}, f"m below {fmt(1 / 512 + 0.4 * (1 - 1 / 512))}", "nearly uniform"),
        ({"d_model": "1024", "heads": "1", "seq_len": "32", "scaled": "0"}, "m from", "sharp"),
        ({"temperature": "0.1", "seq_len": "2"}, "m below 0.55", "sharp"),
        ({"temperature": "10"}, "m below 0.213", "nearly uniform"),
    ],
)
def test_page_names_the_rows_with_the_words_it_defined(query, shown, word):
    at = run_ok(app(PAGE, query, timeout=300))
    cfg = at.session_state["whatif"]
    now = saturation_point(cfg.d_k, cfg.seq_len, cfg.scaled, cfg.temperature)
    assert shown in texts(at)
    assert sharpness(now.max_weight.mean, 1 / cfg.seq_len) == word
    assert f"rows are **{word}**" in at.info[0].value


def test_scaling_toggle_changes_what_is_shown():
    at = opened()
    before = at.info[0].value
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert at.info[0].value != before and at.info[0].value.startswith("Your setting, unscaled at d_k = 16")
    spec = _sweeps(at)["max_weight"]
    assert _legend_domains(spec)[0] == ("scaled by 1/√d_k", "unscaled (your setting)", "unscaled at temperature τ·√d_k")
    assert "Your setting (unscaled) is the thick line" in texts(at)
    assert "With your setting (unscaled) the largest weight" in texts(at)
    assert "Jacobian diag(p) − ppᵀ, unscaled (your setting)" in [h["title"] for h in heatmaps(at)]


def test_a_new_temperature_redraws_every_chart_from_the_stored_scores():
    """Moving the temperature changes every curve but the score spread (measured before the temperature), and the
    scores are drawn once per (d_k, seq_len): no new entry in their cache."""
    from ui.compute import cached_score_samples

    at = opened()
    before = {m: _arrow_rows(at, m) for m in _sweeps(at)}
    score_chart = _sent(at, "score_std")
    entries = len(cached_score_samples.cache)
    at.sidebar.select_slider(key="ctl_temperature").set_value(3.162)
    run_ok(at)
    after = {m: _arrow_rows(at, m) for m in _sweeps(at)}
    assert len(cached_score_samples.cache) == entries
    assert after["score_std"].equals(before["score_std"])
    assert _sent(at, "score_std") == score_chart  # the same bytes: the browser need not redraw it
    for m in ("max_weight", "effective_tokens", "grad_norm"):
        assert not after[m][m].equals(before[m][m]), m
    assert (after["max_weight"]["max_weight"] <= before["max_weight"]["max_weight"] + 1e-12).all()  # τ > 1 flattens
    assert "temperature τ = 3.162" in texts(at)


def _sent(at, measure) -> tuple:
    """What the page sent for the sweep chart of ``measure``: its spec text and its datasets' bytes."""
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        if "layer" in spec and spec["layer"][1]["encoding"]["y"]["field"] == measure:
            return el.proto.spec, tuple((d.name, d.data.data) for d in el.proto.datasets)
    raise LookupError(measure)


def _arrow_rows(at, measure):
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        if "layer" in spec and spec["layer"][1]["encoding"]["y"]["field"] == measure:
            frames = [f for f in chart_datasets(el) if "mine" in f.columns and len(f) > 2]
            return frames[0].sort_values(["setting", "d_k"]).reset_index(drop=True)
    raise LookupError(measure)


@pytest.mark.slow
def test_moving_controls_moves_the_marked_point():
    at = opened()
    at.sidebar.select_slider(key="ctl_n_heads").set_value(1)
    run_ok(at)
    assert _marker_d_ks(at) == [64] * 5
    assert "at d_k = 64:" in at.info[0].value
    at.sidebar.slider(key="ctl_d_model").set_value(512)
    run_ok(at)
    assert _marker_d_ks(at) == [512] * 5
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
        ({"seq_len": "1"}, "the words nearly uniform, soft, peaked and sharp do not apply"),
        ({"seq_len": "512"}, "drawn for rows of up to 32 keys"),
        ({"temperature": "0.1"}, "temperature τ = 0.1"),
        ({"temperature": "10"}, "× 4 = 40: dividing by √d_k"),
        ({"d_model": "1024", "heads": "1", "seq_len": "32", "scaled": "0"}, "Your setting, unscaled at d_k = 1024"),
        ({"d_model": "1", "heads": "1"}, "At d_k = 1, √d_k = 1, so scaling changes nothing"),
    ],
)
def test_page_extremes(query, shown):
    at = opened(query, timeout=300)
    assert shown in texts(at)
    assert len(at.get("vega_lite_chart")) >= 5 and "e+00" not in texts(at)


def test_an_open_derivatives_part_follows_a_body_rerun():
    """With partial reruns on (as served), a temperature change reruns the body alone; the part a reader opened
    (created with the widgets, filled by the body) is drawn again for the new temperature."""
    at = app(PAGE, partial=True)
    at.session_state[OPEN] = True
    run_ok(at)
    at.sidebar.select_slider(key="ctl_temperature").set_value(3.162)
    run_ok(at)
    cfg = at.session_state["whatif"]
    un = saturation_point(cfg.d_k, cfg.seq_len, False, 3.162)
    sc = saturation_point(cfg.d_k, cfg.seq_len, True, 3.162)
    assert cfg.temperature == 3.162 and gradient_sentence(sc, un) in [i.value for i in at.info]


def test_a_bars_tooltip_reads_as_the_sentence_writes_it():
    """Softmax saturation's row up close: the largest weight's bar says in its tooltip the digits the caption
    under it says (one formatter), for the scaled and the unscaled twin."""
    import re

    from tests.apptest_util import app, chart_datasets, run_ok, texts

    at = run_ok(app("pages/Softmax_saturation.py"))
    said = re.search(r"the largest weight is ([\d.e+-]*\d) on (k\d+); \w+ it would be ([\d.e+-]*\d)", texts(at))
    assert said, texts(at)[:500]
    tips = {}
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        if str(spec.get("title", "")).startswith("softmax, "):
            field = next(t["field"] for t in spec["encoding"]["tooltip"] if t.get("title") == "weight")
            assert "format" not in str(spec["encoding"]["tooltip"])
            rows = chart_datasets(el)[0]
            tips[spec["title"]] = rows.loc[rows["v"].idxmax(), field]
    yours = next(v for k, v in tips.items() if "(yours)" in k)
    other = next(v for k, v in tips.items() if "(yours)" not in k)
    assert (yours, other) == (said[1], said[3])
