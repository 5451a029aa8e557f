"""AppTest: the Cross-attention page (pages/Cross-attention.py)."""

import numpy as np
import pytest

from attention_core import WhatIf
from attention_core.cross_attention import run_cross_attention
from tests.apptest_util import app, chart_titles, heatmap_titled, run_ok, texts
from ui.text import md_escape

CA = "pages/Cross-attention.py"
Q, KV = "the cat sat on the mat", "le chat est assis sur le tapis"


def _run(q=Q, kv=KV, **kw):
    base = WhatIf(input_kind="sentence", **kw)
    return run_cross_attention(base.replace(sentence=q), base.replace(sentence=kv))


def _seeded_random(t_q: int, t_k: int):
    """The page switched to seeded random sequences of ``t_q`` queries and ``t_k`` keys."""
    at = run_ok(app(CA))
    at.radio(key="ca_source").set_value("seeded random")
    run_ok(at)
    at.slider(key="ca_tq").set_value(t_q)
    at.slider(key="ca_tk").set_value(t_k)
    return run_ok(at)


def test_default_map_sentences_and_random_weights_are_named():
    at = run_ok(app(CA))
    assert "head 1: 6 x 7" in chart_titles(at)
    run = _run()
    w = run.weights[0]
    best = int(np.argmax(w.max(axis=-1)))
    top = int(w[best].argmax())
    page = texts(at)
    assert "These weights are random, not learned." in page
    assert (
        f"when **{md_escape(run.tokens_q[best])}** puts {w[best, top]:.3g} on **{md_escape(run.tokens_kv[top])}**, "
        "that is chance"
    ) in page
    row = w[0]
    assert f"puts {row.max():.3g} of its weight on **{md_escape(run.tokens_kv[int(row.argmax())])}**" in page
    assert "where query the looks" not in page  # the garbled old title
    bars = [
        el
        for el in at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
        if "weights of query #1 over the 7 keys" in el.proto.spec
    ]
    assert bars
    assert "Check yourself" in page and at.expander  # page_end with questions
    assert any("6 x 7: one row per query" in md.value for md in at.markdown)


def test_random_sequences_sizes_heads_and_query():
    at = _seeded_random(3, 11)
    assert "head 1: 3 x 11" in chart_titles(at)
    hm = heatmap_titled(at, "head 1: 3 x 11")
    assert len(hm["rows"]) == 3 and len(hm["cols"]) == 11
    df = hm["cells"]
    assert df["r"].max() == 2 and df["c"].max() == 10 and len(df) == 33
    np.testing.assert_allclose(df.groupby("r")["v"].sum(), 1.0, atol=1e-3)
    at.selectbox(key="ca_head").set_value(3)
    at.selectbox(key="ca_query").set_value(2)
    run_ok(at)
    assert "head 4: 3 x 11" in chart_titles(at)
    cfg = WhatIf(input_kind="random", seq_len=3)
    run = run_cross_attention(cfg, cfg.replace(seq_len=11, seed=1))
    row = run.weights[3, 2]
    assert f"Query **q3** (#3) puts {row.max():.3g} of its weight on **k{int(row.argmax()) + 1}**" in texts(at)
    assert "output **3 x 64**" in texts(at)


def test_large_map_states_its_shape_once():
    at = _seeded_random(100, 256)
    caps = [img.caption for el in at.get("image") for img in el.proto.imgs]
    assert any(c.startswith("head 1 (100 x 256 as an image") for c in caps), caps
    assert "Cross-attention weights: 100 queries x 256 keys" in texts(at)
    assert "Only the 20 largest of the 256 weights are drawn" in texts(at)


def test_sidebar_controls_change_the_numbers():
    at = run_ok(app(CA))
    before = texts(at)
    at.sidebar.number_input(key="ctl_seed").set_value(7)
    run_ok(at)
    assert "(seed 7)" in texts(at) and texts(at) != before
    at.sidebar.select_slider(key="ctl_temperature").set_value(0.1)
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    run = _run(seed=7, temperature=0.1, scaled=False)
    m = run.weights[0].max(axis=-1).mean()
    assert f"Mean max weight {m:.3g} against 0.143" in texts(at)
    assert m > 0.8 and (": peaked here." in texts(at) or ": sharp here." in texts(at))  # never "soft" at 0.1


def test_empty_sentence_is_refused_and_long_one_cut():
    at = run_ok(app(CA))
    at.text_input(key="ca_q").input("   ")
    run_ok(at)
    assert any("at least one word" in e.value for e in at.error)
    assert "head 1: 6 x 7" in chart_titles(at)
    at.text_input(key="ca_q").input("<b>hi</b> there")
    at.text_input(key="ca_kv").input(" ".join(["w"] * 600))
    run_ok(at)
    captions = [img.caption for el in at.get("image") for img in el.proto.imgs]
    assert any(c.startswith("head 1 (2 x 512 as an image") for c in captions), captions  # 512 columns: an image
    assert any("Key/value sequence:" in i.value and "only the first 512" in i.value for i in at.info)
    assert "Only the 20 largest of the 512 weights are drawn" in texts(at)
    assert "\\<b\\>hi\\</b\\>" in texts(at)  # typed text is escaped, never HTML


@pytest.mark.parametrize(
    "query",
    [
        {"d_model": "1", "heads": "1"},
        {"d_model": "1024", "heads": "16"},
        {"temperature": "10"},
        {"temperature": "0.1", "scaled": "0"},
    ],
)
def test_extremes_show_true_sentences(query):
    at = run_ok(app(CA, query, timeout=120))
    cfg = at.session_state["whatif"] if "whatif" in at.session_state else None
    d_model = int(query.get("d_model", 64))
    heads = int(query.get("heads", 4))
    run = _run(
        d_model=d_model,
        n_heads=heads,
        temperature=float(query.get("temperature", 1.0)),
        scaled=query.get("scaled", "1") == "1",
    )
    m = run.weights[0].max(axis=-1).mean()
    assert f"Mean max weight {m:.3g} against 0.143" in texts(at), cfg
    assert f"output **6 x {d_model}**" in texts(at)
    if query.get("temperature") == "10":
        assert ": nearly uniform here." in texts(at) or ": soft here." in texts(at)
