"""The Real model page and attention_core.hf on tiny local models (no network)."""

import os
import re

import numpy as np
import pytest

from attention_core.config import DEFAULT_SENTENCE
from harness.tiny_models import make_tiny_bert, make_tiny_gpt2
from tests.apptest_util import app, chart_titles, page_components, run_ok, texts
from ui.lessons.real_model.model import CHOICES

os.environ["HF_HUB_OFFLINE"] = "1"  # the network is unreachable in tests: nothing is downloaded
PAGE = "pages/Real_model.py"


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
        assert rc.max_diff < 1e-5, (layer, rc.max_diff)
        assert rc.q.shape == rc.k.shape == (4, run.attentions.shape[-1], rc.q.shape[-1])
        np.testing.assert_allclose(rc.weights, run.attentions[layer], atol=1e-5)
    with pytest.raises(ValueError, match="layer=2 is not allowed"):
        recompute_layer(model, run, 2)
    np.testing.assert_allclose(run.attentions.sum(-1), 1.0, atol=1e-5)
    if kind == "gpt2":
        T = run.attentions.shape[-1]
        assert np.all(run.attentions[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_attention_run_and_neuron_view_match_the_model(tiny, kind):
    from attention_core.hf import load_pretrained
    from attention_core.model_views import model_attention_run, neuron_view

    model, tok = load_pretrained(str(tiny[kind]))
    arun = model_attention_run(model, tok, DEFAULT_SENTENCE)
    L, H, T = arun.shape
    assert (L, H) == (2, 4) and len(arun.tokens) == T and not arun.truncated
    assert arun.parity.shape == (2,) and (arun.parity < 1e-5).all() and arun.no_parity == ""
    for layer, head, qi, kj in ((0, 0, 0, 1), (1, 3, T - 1, 2), (1, 2, 3, 3)):
        nv = neuron_view(arun, layer, head, qi, kj)
        np.testing.assert_allclose(nv.row, arun.attentions[layer, head, qi], atol=1e-5)
        assert nv.weight == pytest.approx(float(arun.attentions[layer, head, qi, kj]), abs=1e-5)
        assert nv.dot == pytest.approx(float(nv.q @ nv.k)) and nv.logit == pytest.approx(nv.dot * arun.scale)
        assert nv.visible == (qi + 1 if kind == "gpt2" else T)
    with pytest.raises(ValueError, match="kj=99 is not allowed"):
        neuron_view(arun, 0, 0, 0, 99)
    long = model_attention_run(model, tok, " ".join(["word"] * 40), max_tokens=16)
    assert long.truncated and long.shape[2] == 16 and long.sentence_tokens > 16


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_a_forward_pass_alone_is_the_run_without_recomputation(tiny, kind):
    """The page draws the model view from the forward pass before attention_core recomputes anything: that run
    has the same weights, tokens and cut as the recomputed one, and no q, k or parity (with a reason)."""
    from attention_core.hf import load_pretrained
    from attention_core.model_views import attention_run, model_attention_run, model_forward

    model, tok = load_pretrained(str(tiny[kind]))
    text = " ".join(["word"] * 40)
    fwd = model_forward(model, tok, text, max_tokens=16)
    light, full = attention_run(model, fwd, recompute=False), attention_run(model, fwd)
    assert light.q is None and light.k is None and light.parity is None and "not recomputed" in light.no_parity
    assert light.attentions is full.attentions is fwd.run.attentions  # shared, not copied
    assert (light.tokens, light.truncated, light.sentence_tokens) == (full.tokens, True, fwd.sentence_tokens)
    assert fwd.sentence_tokens > 16 and light.shape == full.shape
    np.testing.assert_array_equal(light.special, full.special)
    assert (light.mask is None) == (kind == "bert")
    again = model_attention_run(model, tok, text, max_tokens=16)
    np.testing.assert_array_equal(again.q, full.q)
    np.testing.assert_array_equal(again.parity, full.parity)
    assert full.no_parity == "" and (full.parity < 1e-5).all()
    with pytest.raises(ValueError, match="at least one character"):
        model_forward(model, tok, "   ")


def test_the_heads_section_is_above_the_model_view_though_drawn_after_it(tiny):
    """The heads' sentences are computed after the model view is sent, into a box placed above it."""
    at = run_ok(app(PAGE, {"model": str(tiny["bert"])}, timeout=120))
    heads = [s.value for s in at.subheader]
    assert heads.index("What the heads do on this sentence") < heads.index("Model view")
    assert heads.index("Model view") < heads.index("Parity with attention_core")


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
    assert any(t.startswith("layer ") for t in titles)
    assert len(page_components(at)) == 2 and "Every layer (rows, 1 to 2)" in texts(at)  # the view, its pick
    parity = at.dataframe[-1].value
    assert len(parity) == 2 and (parity["max |attention_core − model|"].astype(float) < 1e-5).all()
    assert "float rounding" in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    worst = metrics["max |attention_core − model| over every layer and head"]  # one formatter: metric, sentence, table
    assert f"is {worst}, float rounding" in texts(at) and worst in list(parity["max |attention_core − model|"])
    assert f"the model's own weight for this cell is {metrics['weight = softmax of the logits']}." in texts(at)
    at.selectbox(key="rm_layer").set_value(1)
    at.selectbox(key="rm_head").set_value(3)
    at.selectbox(key="rm_iso").set_value(2)
    at.selectbox(key="rm_nq").set_value(4)
    at.selectbox(key="rm_nk").set_value(2 if kind == "bert" else 3)
    run_ok(at)
    assert "layer 2, head 4" in chart_titles(at)
    assert "**Head view**: layer 2, head 4" in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert f"the model's own weight for this cell is {metrics['weight = softmax of the logits']}." in texts(at)
    if kind == "bert":
        at.toggle(key="rm_hide").set_value(True)
        run_ok(at)
        assert "Display choice" in texts(at)
    at.text_input(key="rm_text").input("it was the cat")
    run_ok(at)
    assert any("How many attention maps" in e.label for e in at.expander)
    maps = next(e for e in at.expander if "How many attention maps" in e.label).markdown[0].value
    T = int(re.search(r"All (\d+) tokens", texts(at)).group(1))
    assert f"2 layers x 4 heads = 8 maps, each {T} x {T}." in maps


def test_the_sentence_and_the_model_round_trip_through_the_link(tiny):
    """``text=`` and ``model=`` are page controls (ui/skeleton/page_params.PageParam): read from the link, written
    back while they are not the defaults, and a link value too long is refused with a notice."""
    model = str(tiny["bert"])
    at = run_ok(app(PAGE, {"model": model, "text": "it was the <b>cat</b>"}, timeout=120))
    assert not at.warning, [w.value for w in at.warning]
    assert at.text_input(key="rm_text").value == "it was the <b>cat</b>"  # the box holds it as text
    assert at.query_params["text"] == "it was the <b>cat</b>" and at.query_params["model"] == model
    assert at.text_input(key="rm_custom").value == model
    at.text_input(key="rm_text").input("the dog slept")
    run_ok(at)
    assert at.query_params["text"] == "the dog slept"
    at.switch_page("pages/Masks.py")
    run_ok(at)
    at.switch_page(PAGE)
    run_ok(at)
    assert at.text_input(key="rm_text").value == "the dog slept" and at.query_params["model"] == model
    at.text_input(key="rm_text").input(DEFAULT_SENTENCE)
    run_ok(at)
    assert "text" not in at.query_params  # the class's sentence is left out of the link


def test_a_sentence_too_long_for_the_link_is_refused_with_a_notice(tiny):
    long = "word " * 801  # 4,005 characters: more than SENTENCE_CHARS
    at = run_ok(app(PAGE, {"model": str(tiny["bert"]), "text": long}, timeout=120))
    assert any(
        "text= is 4005 characters long; at most 4000 are allowed. Using the class's sentence." in w.value
        for w in at.warning
    ), [w.value for w in at.warning]
    assert at.text_input(key="rm_text").value == DEFAULT_SENTENCE and "text" not in at.query_params


def test_a_sentence_whose_link_a_proxy_would_refuse_stays_out_of_the_link_and_says_so(tiny):
    """A sentence the box takes (at most 4,000 characters) can pass the 16 KB request line the deployment's nginx
    accepts once percent-encoded (a character outside ASCII takes up to 9 bytes): such a sentence stays out of the
    link, and the page says why; a shorter one in the same script goes into it."""
    model = str(tiny["bert"])
    at = run_ok(app(PAGE, {"model": model}, timeout=120))
    far = "猫が座った。" * 200  # 1,200 characters, 10,800 bytes encoded
    at.text_input(key="rm_text").input(far)
    run_ok(at)
    assert at.text_input(key="rm_text").value == far and "text" not in at.query_params
    said = [c.value for c in at.caption if "too long for a link" in c.value]
    assert said and "10,800 characters once encoded" in said[0] and "at most 6,000" in said[0], said
    near = "猫が座った。" * 100  # 5,400 bytes encoded: fits
    at.text_input(key="rm_text").input(near)
    run_ok(at)
    assert at.query_params["text"] == near and not [c for c in at.caption if "too long for a link" in c.value]


def test_unknown_model_shows_message_and_the_page_ends_cleanly():
    at = run_ok(app(PAGE, {"model": "no-such-user/no-such-model-xyz"}, timeout=120))
    assert any("Could not load 'no-such-user/no-such-model-xyz'" in w.value for w in at.warning)
    assert any("toy pages keep working" in w.value for w in at.warning)
    assert not page_components(at) and not at.get("vega_lite_chart")
    at.button(key="rm_retry").click()
    run_ok(at)
    assert any("Could not load" in w.value for w in at.warning)
    at.switch_page("pages/Playground.py")
    run_ok(at)


def test_hub_model_offline_gives_message_not_traceback():
    at = app(PAGE, timeout=120)
    at.session_state["rm_choice"] = next(c for c, n in CHOICES.items() if n == "google/bert_uncased_L-4_H-256_A-4")
    run_ok(at)
    assert any("Could not load 'google/bert_uncased_L-4_H-256_A-4'" in w.value for w in at.warning)
    # the picker's label is short (a phone's select box shows one line); the caption under it says what it is
    assert any(
        c.value.startswith("google/bert_uncased_L-4_H-256_A-4 from the Hugging Face hub: 4 layers x 4 heads")
        for c in at.caption
    )
