"""The Implementations page, and every implementation against NumPy."""

import numpy as np
import pandas as pd
import pytest

from attention_core import WhatIf, run_whatif
from attention_core.implementations import compare_implementations, keras_available, keras_multihead, numpy_functional
from tests.apptest_util import app, run_ok, texts
from ui.compute import cached_implementations
from ui.text import fmt

IMPL = "pages/Implementations.py"


def _shown(at) -> pd.DataFrame:
    """The page's table as the reader sees it: text at every width (a grid cut the names at 1280 and 1366 px), each
    name whole once its break points (zero-width spaces) are dropped."""
    assert len(at.dataframe) == 0 and len(at.table) == 1
    return at.table[0].value.map(lambda v: v.replace("\u200b", "") if isinstance(v, str) else v)


def _measured(at) -> pd.DataFrame:
    """The numbers behind the table: the page's own cached rows for its setting."""
    rows = cached_implementations(at.session_state["whatif"])
    return pd.DataFrame(
        {
            "implementation": [r.name for r in rows],
            "max |Δ weights|": [None if i == 0 else r.max_diff_weights for i, r in enumerate(rows)],
            "max |Δ output|": [None if i == 0 else r.max_diff_output for i, r in enumerate(rows)],
            "time (ms)": [r.time_ms for r in rows],
        },
        dtype=object,
    ).astype({"max |Δ weights|": float, "max |Δ output|": float, "time (ms)": float})


@pytest.mark.parametrize(
    "cfg",
    [
        WhatIf(),
        WhatIf(mask="causal", scaled=False, temperature=0.5),
        WhatIf(seq_len=33, d_model=96, n_heads=6),
        WhatIf(mask="padding", pad_count=3, d_model=16, n_heads=16, temperature=3.0),
    ],
    ids=["default", "causal-unscaled", "odd-sizes", "padding-16-heads"],
)
def test_every_implementation_agrees_with_numpy(cfg):
    run = run_whatif(cfg)
    rows = compare_implementations(
        run.x, *run.w, n_heads=cfg.n_heads, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature, repeat=1
    )
    names = [r.name for r in rows]
    assert len(names) == 7 and names[0].startswith("NumPy")
    for r in rows:
        if r.max_diff_output is None:
            assert "Keras" in r.name and not keras_available()
            continue
        assert r.max_diff_output < 1e-5, r
        assert r.max_diff_weights is None or r.max_diff_weights < 1e-5, r
        assert r.time_ms > 0


def test_keras_matches_numpy():
    """TensorFlow is installed by requirements-dev.txt (requirements-tf.txt), so this row is verified."""
    assert keras_available(), "TensorFlow/Keras should be installed for the tests (pip install -r requirements-tf.txt)"
    for cfg in (WhatIf(), WhatIf(mask="causal+padding", pad_count=2, scaled=False, temperature=2.0, n_heads=2)):
        run = run_whatif(cfg)
        args = (run.x, *run.w, cfg.n_heads, run.mask, cfg.scaled, cfg.temperature)
        out_k, w_k = keras_multihead(*args)
        out_n, w_n = numpy_functional(*args)
        np.testing.assert_allclose(w_k, w_n, atol=1e-5)
        np.testing.assert_allclose(out_k, out_n, atol=1e-5)


def test_implementations_page():
    at = run_ok(app(IMPL, timeout=240))
    table = _measured(at)
    assert len(table) == 7
    assert list(_shown(at)["implementation"]) == list(table["implementation"])  # every name, whole
    measured = table.dropna(subset=["max |Δ output|"])
    assert (measured["max |Δ output|"] < 1e-5).all()
    assert (measured["max |Δ weights|"].dropna() < 1e-5).all()
    worst = float(np.nanmax(measured[["max |Δ weights|", "max |Δ output|"]].to_numpy(dtype=float)))
    fastest = table.loc[table["time (ms)"].idxmin()]  # the NumPy reference is timed too
    shown = texts(at)
    assert f"the largest is {fmt(worst)}, the size of float32 rounding" in shown
    cells = _shown(at)[["max |Δ weights|", "max |Δ output|"]].to_numpy().ravel().tolist()
    assert fmt(worst).replace("-", "\u2011") in cells  # the table writes it as the sentence does (one formatter)
    assert f"The fastest here was {fastest['implementation']} ({fastest['time (ms)']:.3f} ms)" in shown
    assert "vary with the server's load" in shown
    assert any("def scaled_dot_product_attention_torch" in c.value for c in at.code)
    assert any("def softmax_torch" in c.value for c in at.code)
    assert any("keras.layers.MultiHeadAttention" in c.value for c in at.code)
    answers = {e.label: e.markdown[0].value for e in at.expander if e.markdown}
    no_weights = next(v for k, v in answers.items() if "return no attention weights" in k)
    assert no_weights.startswith("torch.nn.functional.scaled_dot_product_attention:")
    at.sidebar.selectbox(key="ctl_mask").set_value("causal")
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert (_measured(at).dropna(subset=["max |Δ output|"])["max |Δ output|"] < 1e-5).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [
        {"seq_len": "1"},
        {"seq_len": "512", "d_model": "1024", "heads": "16"},
        {"mask": "padding", "pad": "512", "seq_len": "4"},
    ],
)
def test_implementations_extremes(query):
    at = run_ok(app(IMPL, query, timeout=300))
    table = _measured(at)
    assert len(_shown(at)) == 7
    shown = texts(at).lower().replace("gives nan", "").replace("give nan", "")
    assert len(table) == 7 and "nan" not in shown and "e+00" not in shown
    cfg = at.session_state["whatif"]
    assert f"T = {min(cfg.seq_len, 512)}, d_model = {cfg.d_model}" in texts(at)
    if cfg.pad_count >= cfg.seq_len and cfg.mask == "padding":  # every row fully masked: ours gives 0
        assert "Not counted:" in texts(at) or (table["max |Δ output|"].dropna() < 1e-5).all()


@pytest.mark.skipif(not keras_available(), reason="Keras/TensorFlow not installed")
def test_keras_runs_leave_no_layers_behind_in_keras_global_state():
    """A server runs the Keras row for every setting; Keras keeps each layer it builds unless its session is
    cleared, so the process grew ~48 MB a call at 512 x 1024. After two runs a new layer gets the first name."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    ws = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(4)]
    for _ in range(2):
        keras_multihead(x, *ws, n_heads=2, mask=None, scaled=True, temperature=1.0)
    assert keras.layers.MultiHeadAttention(num_heads=2, key_dim=4).name == "multi_head_attention"
    keras.backend.clear_session()
