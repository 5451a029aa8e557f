"""Our views against BertViz's (PyPI bertviz) on the embedded model: BertViz is run the way its README says
(transformers' own output_attentions, tokens from the tokenizer) and the attention its head view and model view
embed in their HTML must equal what our head view and model view draw."""

import json
import os
import re

import numpy as np
import pytest

from attention_core.config import DEFAULT_SENTENCE
from tests.apptest_util import app, chart_datasets, page_components, run_ok

os.environ["HF_HUB_OFFLINE"] = "1"
PAGE = "pages/Real_model.py"


def bertviz_params(html: str) -> dict:
    """The params object BertViz writes into its view's script (attention, tokens, ...)."""
    return json.loads(re.search(r"const params = (\{.*?\}); // HACK", html, re.S)[1])


@pytest.fixture(scope="module")
def bertviz_attention():
    """(tokens, (L, H, T, T) attention) embedded by BertViz's head view and model view, from a plain transformers run."""
    import torch
    from bertviz import head_view, model_view
    from transformers import AutoModel, AutoTokenizer

    from attention_core.embedded import embedded_folder

    folder = str(embedded_folder())
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    inputs = tokenizer(DEFAULT_SENTENCE, return_tensors="pt")
    with torch.inference_mode():
        attention = model(**inputs, output_attentions=True).attentions
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    views = []
    for view in (head_view, model_view):
        params = bertviz_params(view(attention, tokens, html_action="return").data)
        (data,) = params["attention"]
        assert data["left_text"] == data["right_text"]
        views.append((data["left_text"], np.array(data["attn"])))
    (tokens_h, attn_h), (tokens_m, attn_m) = views
    assert tokens_h == tokens_m and np.array_equal(attn_h, attn_m)
    return tokens_h, attn_h


def test_bertviz_embeds_what_our_views_draw(bertviz_attention):
    from ui.lessons.real_model.model_view import decode_payload

    tokens, attn = bertviz_attention
    assert attn.shape == (6, 12, 15, 15) and tokens[10] == "it"
    at = run_ok(app(PAGE, timeout=180))
    # the model view: every weight of every head, as the canvas receives it (one byte a weight)
    header, drawn = decode_payload(page_components(at)[0].proto.bytes)
    assert header["tokens"] == tokens
    np.testing.assert_array_equal(drawn, np.rint(attn * 255).astype(np.uint8))
    # the head view: the page opens on layer 6, head 12; each drawn line is a weight of BertViz's same head
    for layer, head in ((5, 11), (0, 2)):
        at.selectbox(key="rm_layer").set_value(layer)
        at.selectbox(key="rm_head").set_value(head)
        run_ok(at)
        chart = next(
            el
            for el in at.get("vega_lite_chart")
            if json.loads(el.proto.spec).get("title") == f"layer {layer + 1}, head {head + 1}"
        )
        lines = next(f for f in chart_datasets(chart) if "w" in f.columns)
        want = np.argwhere(attn[layer, head] >= 0.02)
        assert sorted(zip(lines["q"], lines["k"])) == sorted(map(tuple, want))
        np.testing.assert_allclose(lines["w"], attn[layer, head][lines["q"], lines["k"]], atol=5e-5)
        assert list(lines["query"]) == [tokens[i] for i in lines["q"]]
