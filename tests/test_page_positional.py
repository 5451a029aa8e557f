"""AppTest: the Positional encoding page, and the shuffle experiment and position similarity in the core."""

import numpy as np
import pytest

from attention_core import WhatIf, random_projection_weights, run_whatif, shuffle_experiment
from attention_core.positional import position_similarity
from tests.apptest_util import app, run_ok, texts
from ui.text import fmt

PE = "pages/Positional_encoding.py"


def _answers(at) -> dict[str, str]:
    return {e.label: e.markdown[0].value for e in at.expander if e.markdown}


def test_shuffle_result_and_similarity():
    run = run_whatif(WhatIf(seq_len=6, d_model=8, n_heads=2))
    ws = random_projection_weights(8, seed=0)
    perm = np.array([2, 0, 1, 5, 4, 3])
    res = shuffle_experiment(run.x, *ws, n_heads=2, perm=perm, positional=False)
    assert res.moved and res.max_diff < 1e-12 and res.output.shape == res.shuffled_output.shape == (6, 8)
    assert shuffle_experiment(run.x, *ws, n_heads=2, perm=perm, positional=True).max_diff > 1e-3
    assert not shuffle_experiment(run.x, *ws, n_heads=2, perm=np.arange(6), positional=True).moved
    with pytest.raises(ValueError, match="permutation"):
        shuffle_experiment(run.x, *ws, n_heads=2, perm=[0, 0, 1, 2, 3, 4], positional=False)
    sim, by_distance = position_similarity(9, 16)
    np.testing.assert_allclose(np.diag(sim), 8.0, atol=1e-5)  # d_model / 2
    assert by_distance.shape == (9,) and by_distance[0] == pytest.approx(8.0, abs=1e-5)
    assert np.all(sim.argmax(axis=1) == np.arange(9))  # every position matches itself best


def test_positional_page_shuffle_experiment():
    at = run_ok(app(PE))
    cfg = at.session_state["whatif"]
    run = run_whatif(cfg)
    perm = np.random.default_rng([cfg.seed, 0]).permutation(cfg.seq_len)
    ws = random_projection_weights(cfg.d_model, seed=cfg.seed)
    no_pe = shuffle_experiment(run.x, *ws, n_heads=cfg.n_heads, perm=perm, positional=False)
    with_pe = shuffle_experiment(run.x, *ws, n_heads=cfg.n_heads, perm=perm, positional=True)
    assert no_pe.max_diff < 1e-12 and with_pe.max_diff > 1e-3
    expected = "0" if no_pe.max_diff == 0 else f"{no_pe.max_diff:.1e}"
    assert at.metric[0].value == expected and float(at.metric[0].value) < 1e-12
    assert at.metric[1].value == f"{with_pe.max_diff:.3g}" and float(at.metric[1].value) > 1e-3
    _, by_distance = position_similarity(cfg.seq_len, cfg.d_model)
    shown = texts(at)
    assert f"{fmt(by_distance[0])} = d_model / 2" in shown
    assert f"distance 1 gives {fmt(by_distance[1])}, distance {cfg.seq_len - 1} gives {fmt(by_distance[-1])}" in shown
    assert f"{int((perm != np.arange(cfg.seq_len)).sum())} of {cfg.seq_len} tokens moved" in shown
    assert any(v.startswith(f"{cfg.d_model // 2}: one per sine/cosine pair") for v in _answers(at).values())
    at.button(key="pe_reshuffle").click()
    run_ok(at)
    assert "shuffle #1" in texts(at)
    at.multiselect(key="pe_dims").set_value([2, 3])
    run_ok(at)
    at.sidebar.slider(key="ctl_d_model").set_value(7)
    run_ok(at)  # odd d_model: the self-similarity is no longer d_model / 2
    assert at.session_state["whatif"].d_model == 7
    assert "(d_model − 1) / 2 = 3" in texts(at) and "= d_model / 2" not in texts(at)


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [
        {"seq_len": "1"},
        {"seq_len": "512", "d_model": "1024", "heads": "16"},
        {"input": "sentence", "sentence": "a b a b"},
        {"d_model": "1", "heads": "1"},
        {"seq_len": "2"},
    ],
)
def test_positional_extremes(query):
    at = run_ok(app(PE, query, timeout=180))
    cfg = at.session_state["whatif"]
    shown = texts(at)
    assert "e+00" not in shown and all("e+00" not in m.value for m in at.metric)
    if cfg.seq_len == 1 and cfg.input_kind == "random":
        assert "there is nothing to shuffle" in shown and "no distance to compare" in shown
    if cfg.d_model == 1:
        assert "only one frequency" in shown and "Wavelengths run" not in shown
    if cfg.seq_len == 2:
        _, by_distance = position_similarity(2, cfg.d_model)
        assert f"Positions 0 and 1 give {fmt(by_distance[1])}, less than a position with itself." in shown
        assert shown.count("distance 1 gives") == 0  # not "distance 1 gives x, distance 1 gives x"
    if cfg.seq_len == 512:
        assert "Wavelengths run from 2π ≈ 6.28 to" in shown
