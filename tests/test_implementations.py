"""The Implementations page, and every implementation against NumPy."""

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif
from attention_core.implementations import compare_implementations, keras_available, keras_multihead, numpy_functional
from tests.apptest_util import app, chart_titles, run_ok, texts

IMPL = "pages/9_Implementations.py"


@pytest.mark.parametrize("cfg", [
    WhatIf(), WhatIf(mask="causal", scaled=False, temperature=0.5), WhatIf(seq_len=33, d_model=96, n_heads=6),
    WhatIf(mask="padding", pad_count=3, d_model=16, n_heads=16, temperature=3.0),
], ids=["default", "causal-unscaled", "odd-sizes", "padding-16-heads"])
def test_every_implementation_agrees_with_numpy(cfg):
    run = run_whatif(cfg)
    rows = compare_implementations(run.x, *run.w, n_heads=cfg.n_heads, mask=run.mask, scaled=cfg.scaled,
                                   temperature=cfg.temperature, repeat=1)
    names = [r["implementation"] for r in rows]
    assert len(names) == 7 and names[0].startswith("NumPy")
    for r in rows:
        if r["max |Δ output|"] is None:
            assert "Keras" in r["implementation"] and not keras_available()
            continue
        assert r["max |Δ output|"] < 1e-5, r
        assert r["max |Δ weights|"] is None or r["max |Δ weights|"] < 1e-5, r
        assert r["time (ms)"] > 0


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
    at = run_ok(app(IMPL))
    table = at.dataframe[0].value
    assert len(table) == 7
    measured = table.dropna(subset=["max |Δ output|"])
    assert (measured["max |Δ output|"] < 1e-5).all()
    assert (measured["max |Δ weights|"].dropna() < 1e-5).all()
    assert "largest is" in texts(at)
    assert any("def scaled_dot_product_attention_torch" in c.value for c in at.code)
    assert any("keras.layers.MultiHeadAttention" in c.value for c in at.code)
    at.sidebar.selectbox(key="ctl_mask").set_value("causal")
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    assert (at.dataframe[0].value.dropna(subset=["max |Δ output|"])["max |Δ output|"] < 1e-5).all()


@pytest.mark.parametrize("query", [{"seq_len": "1"}, {"seq_len": "512", "d_model": "1024", "heads": "16"}])
def test_implementations_extremes(query):
    run_ok(app(IMPL, query, timeout=300))
