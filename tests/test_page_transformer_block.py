"""AppTest: the Transformer block page, at the default and at extreme settings."""

import base64
import re

import numpy as np
import pytest

from attention_core.block_run import encoder_flow, encoder_graph_alt, layer_norm_stats, run_block
from attention_core.config import DEFAULT_SENTENCE
from tests.apptest_util import app, chart_titles, heatmaps, run_ok, texts
from ui.draw.charts import PROJECTOR_SCALE
from ui.draw.diagrams import flow_column_svg
from ui.text import fmt

BLOCK = "pages/Transformer_block.py"
SVG_DATA = "data:image/svg+xml;base64,"


def _expander_labels(at):
    return [e.label for e in at.expander]


def _diagram(at) -> tuple[str, str]:
    """The encoder diagram's SVG (from its data address) and its text alternative: the page's one SVG image."""
    svgs = [img for el in at.get("image") for img in el.proto.imgs if img.url.startswith(SVG_DATA)]
    assert len(svgs) == 1
    return base64.b64decode(svgs[0].url.removeprefix(SVG_DATA)).decode(), svgs[0].alt


def test_the_projector_view_draws_the_diagram_larger():
    at = run_ok(app(BLOCK, {"view": "projector"}))
    assert _diagram(at) == (flow_column_svg(*encoder_flow(False), scale=PROJECTOR_SCALE).svg, encoder_graph_alt(False))


def test_transformer_block_page():
    at = run_ok(app(BLOCK))
    cfg = at.session_state["whatif"]
    run = run_block(cfg, DEFAULT_SENTENCE, decoder_tokens=5)
    titles = chart_titles(at)
    assert "input x (11 x 64)" in titles and "LayerNorm₂ = output (11 x 64)" in titles
    post_order = ["input x", "attention output", "x + attention", "LayerNorm₁", "feed-forward output", "residual sum₂"]
    assert [t.removesuffix(" (11 x 64)") for t in titles[:7]] == post_order + [
        "LayerNorm₂ = output"
    ]  # hidden: an image
    assert "cross-attention (5 x 11)" in titles and "causal mask (5 x 5)" in titles
    assert _diagram(at) == (flow_column_svg(*encoder_flow(False)).svg, encoder_graph_alt(False))
    shown = texts(at)
    assert "a trained model is needed" in shown and "seeded random, not trained" in shown
    assert any(t.startswith('attention from "it" (head 1, encoder block)') for t in titles)
    row = run.encoder.weights[0, 7]
    top = int(np.argmax(row))
    assert f'"it" puts most weight on **{run.tokens[top]}** ({fmt(float(row[top]))})' in shown
    mean_abs, std = layer_norm_stats(run.encoder.out)
    assert f"at most {fmt(mean_abs, 2)} away from 0 and their standard deviations average {fmt(std)}" in shown
    assert "(largest |mean|)" not in shown
    assert_one_scale_for_the_chain(at, {})
    cross = run.decoder.cross_weights[0, 0]
    top = int(np.argmax(cross))
    assert f"y1 looks most at **{run.tokens[top]}** (#{top + 1}, weight {fmt(float(cross[top]))})" in shown
    labels = _expander_labels(at)
    assert any("What shape is the decoder's cross-attention map" in q for q in labels)
    assert any(f"{11 * 4 * 64:,}" in e.markdown[0].value for e in at.expander if "feed-forward hidden" in e.label)

    at.toggle(key="tb_prenorm").set_value(True)
    at.slider(key="tb_tdec").set_value(9)
    at.selectbox(key="tb_head").set_value(2)
    run_ok(at)
    titles = chart_titles(at)
    assert "residual sum₂ = output (11 x 64)" in titles and "cross-attention (9 x 11)" in titles
    pre_order = ["input x", "LayerNorm₁", "attention output", "x + attention", "LayerNorm₂", "feed-forward output"]
    assert [t.removesuffix(" (11 x 64)") for t in titles[:7]] == pre_order + ["residual sum₂ = output"]
    pre = run_block(cfg, DEFAULT_SENTENCE, norm_first=True, decoder_tokens=9)
    out_norm = float(np.linalg.norm(pre.encoder.out, axis=1).mean())
    assert f"to {fmt(out_norm)} (output)" in texts(at)
    assert any(t.startswith('attention from "it" (head 3, encoder block)') for t in chart_titles(at))
    svg, alt = _diagram(at)  # the diagram and its words follow the toggle
    assert (svg, alt) == (flow_column_svg(*encoder_flow(True)).svg, encoder_graph_alt(True))
    assert alt.startswith("Encoder block (pre-norm) data flow: x to LN₁;")

    at.radio(key="tb_source").set_value("the shared what-if input")
    at.sidebar.checkbox(key="ctl_positional").check()
    run_ok(at)
    assert 'The input has no token "it"' in texts(at)
    assert "cross-attention (9 x 8)" in chart_titles(at)
    at.selectbox(key="tb_dhead").set_value(3)
    run_ok(at)
    assert not any('"it" attend to most' in q for q in _expander_labels(at))


@pytest.mark.slow
@pytest.mark.parametrize(
    "query", [{"d_model": "1", "heads": "1"}, {"d_model": "1024", "heads": "16"}, {"temperature": "0.1", "scaled": "0"}]
)
def test_transformer_block_extremes(query):
    at = run_ok(app(BLOCK, query, timeout=300))
    shown = texts(at)
    titles = chart_titles(at)
    captions = [img.caption for el in at.get("image") for img in el.proto.imgs]
    assert_one_scale_for_the_chain(at, query)
    for label in titles + captions:  # the shape is stated once per chart, never twice
        assert len(re.findall(r"\(?\d+ x \d+", label)) <= 1, label
    if query.get("d_model") == "1":
        assert "input x (11 x 1)" in titles and "every token's output is the same" in shown
    elif query.get("d_model") == "1024":
        assert "input x" in titles  # drawn as an image whose caption states the shape once
        assert any(c.startswith("input x (11 x 1024 as an image") for c in captions), captions
    else:
        cfg = at.session_state["whatif"]
        run = run_block(cfg, DEFAULT_SENTENCE, decoder_tokens=5)
        row = run.encoder.weights[0, 7]
        assert f"({fmt(float(row.max()))})" in shown


def assert_one_scale_for_the_chain(at, query: dict) -> None:
    """The residual stream's seven maps share one diverging scale, the caption states it, and the hidden layer is on
    its own scale from 0 (the colour rule: tests/test_colour_scales.py checks it on every page)."""
    run = run_block(at.session_state["whatif"], DEFAULT_SENTENCE, decoder_tokens=5)
    enc = run.encoder
    chain = [enc.x, enc.attn.norm, enc.attn.sub, enc.attn.add, enc.ffn.norm, enc.ffn.sub, enc.ffn.add]
    lim, hidden = max(float(np.abs(a).max()) for a in chain), float(enc.ffn_hidden.max())
    shown = texts(at)
    assert f"shares one colour scale, −{fmt(lim)} (blue) to {fmt(lim)} (red)" in shown, query
    assert (f"to its largest value, {fmt(hidden)} (yellow)" if hidden > 0 else "here it is 0 everywhere") in shown
    domains = {(h["lo"], h["hi"]) for h in heatmaps(at) if h["value"] == "value"}  # the colour domains drawn
    assert domains <= {(-lim, lim)} and (domains or query.get("d_model") == "1024"), domains


def test_one_decoder_token_sentence():
    at = run_ok(app(BLOCK))
    at.slider(key="tb_tdec").set_value(1)
    run_ok(at)
    assert "attends to itself (one token: nothing lies ahead)" in texts(at)
    assert "cross-attention (1 x 11)" in chart_titles(at)


@pytest.mark.parametrize("decoder_tokens", [1, 5, 11])
def test_the_decoder_self_attention_map_states_its_colour_range_instead_of_a_legend(decoder_tokens):
    """Its legend was clipped by the column at 1280 px; the key axis names the colour range instead."""
    at = app(BLOCK)
    run_ok(at)
    at.slider(key="tb_tdec").set_value(decoder_tokens)
    run_ok(at)
    title = f"masked self-attention ({decoder_tokens} x {decoder_tokens})"
    found = [h for h in heatmaps(at) if h["title"] == title]
    assert len(found) == 1, [h["title"] for h in heatmaps(at)]
    assert found[0]["legend"] is None  # no legend drawn
    assert re.search(r"key · colour (0–1|stretched to [\d.e-]+–[\d.e-]+)$", found[0]["colTitle"])
