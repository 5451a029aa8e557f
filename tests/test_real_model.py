"""The Real model page and attention_core.hf on tiny local models (no network)."""

import os

import numpy as np
import pytest

from attention_core.config import DEFAULT_SENTENCE
from tests.apptest_util import app, chart_titles, run_ok, texts
from tests.tiny_models import make_tiny_bert, make_tiny_gpt2

os.environ["HF_HUB_OFFLINE"] = "1"  # the network is unreachable in tests: nothing is downloaded
PAGE = "pages/11_Real_model.py"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"bert": make_tiny_bert(root / "bert"), "gpt2": make_tiny_gpt2(root / "gpt2")}


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_parity_below_1e5_for_every_layer(tiny, kind):
    from attention_core.hf import load_pretrained, recompute_layer, run_model

    model, tok = load_pretrained(str(tiny[kind]))
    run = run_model(model, tok, DEFAULT_SENTENCE)
    assert run.attentions.shape[:2] == (2, 4)
    assert run.causal == (kind == "gpt2")
    if kind == "bert":
        assert run.tokens[:3] == ["[CLS]", "the", "animal"] and run.tokens[-1] == "[SEP]"
        assert run.special[0] and run.special[-1] and not run.special[1:-1].any()
    else:
        assert "it" in run.tokens and "the" in run.tokens
    for layer in range(2):
        rc = recompute_layer(model, run, layer)
        assert rc["max_diff"] < 1e-5, (layer, rc["max_diff"])
    np.testing.assert_allclose(run.attentions.sum(-1), 1.0, atol=1e-5)
    if kind == "gpt2":
        T = run.attentions.shape[-1]
        assert np.all(run.attentions[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)


def test_hide_special_renormalises():
    from attention_core.hf import hide_special

    w = np.array([[[0.5, 0.25, 0.25], [0.2, 0.4, 0.4], [0.0, 0.5, 0.5]]])
    out = hide_special(w, np.array([True, False, False]))
    np.testing.assert_allclose(out, [[[0.5, 0.5], [0.5, 0.5]]])


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_page_with_local_model(tiny, kind):
    at = run_ok(app(PAGE, {"model": str(tiny[kind])}, timeout=120))
    assert not at.warning, [w.value for w in at.warning]
    titles = chart_titles(at)
    assert "layer 1, head 1" in titles and "layer 1, head 1, enlarged" in titles
    assert any("Every layer" in img.caption for el in at.get("image") for img in el.proto.imgs)
    parity = at.dataframe[-1].value
    assert len(parity) == 2 and (parity["max |attention_core − model|"] < 1e-5).all()
    assert "float rounding" in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["softmax weight"] == metrics["the model's weight"]
    at.selectbox(key="rm_layer").set_value(1)
    at.selectbox(key="rm_head").set_value(3)
    at.selectbox(key="rm_iso").set_value(2)
    at.selectbox(key="rm_nq").set_value(4)
    at.selectbox(key="rm_nk").set_value(2 if kind == "bert" else 3)
    run_ok(at)
    assert "layer 2, head 4" in chart_titles(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["softmax weight"] == metrics["the model's weight"]
    if kind == "bert":
        at.toggle(key="rm_hide").set_value(True)
        run_ok(at)
        assert "Display choice" in texts(at)
    at.text_input(key="rm_text").input("it was the cat")
    run_ok(at)


def test_unknown_model_shows_message_and_toy_still_works():
    at = run_ok(app(PAGE, {"model": "no-such-user/no-such-model-xyz"}, timeout=120))
    assert any("Could not load 'no-such-user/no-such-model-xyz'" in w.value for w in at.warning)
    assert any("toy pages keep working" in w.value for w in at.warning)
    at.button(key="rm_retry").click()
    run_ok(at)
    at.radio(key="rm_source").set_value("the toy attention (sidebar what-if)")
    run_ok(at)
    assert "layer 1, head 1" in chart_titles(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["softmax weight"] == metrics["the model's weight"]
    at.switch_page("pages/1_Playground.py")
    run_ok(at)


def test_default_model_offline_gives_message_not_traceback():
    at = run_ok(app(PAGE, timeout=120))
    assert any("Could not load 'google/bert_uncased_L-4_H-256_A-4'" in w.value for w in at.warning)
