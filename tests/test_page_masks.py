"""The Masks page and its core (attention_core.mask_demo): blocked cells, padding, the fully masked row."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import causal_mask, padding_mask, run_whatif, scaled_dot_product_attention, softmax
from attention_core.mask_demo import clamp_pad, mask_lab, masked_numerators, textbook_softmax
from tests.apptest_util import app, heatmaps, run_ok, texts

MASKS = "pages/Masks.py"


@given(logits=arrays(np.float64, (4, 6), elements=st.floats(-50, 50)), mask=arrays(bool, (4, 6)))
@settings(max_examples=60, deadline=None)
def test_textbook_softmax_is_nan_exactly_on_fully_masked_rows(logits, mask):
    naive = textbook_softmax(logits, mask)
    safe = softmax(logits, where=mask)
    empty = ~mask.any(axis=-1)
    assert np.isnan(naive[empty]).all()
    np.testing.assert_allclose(naive[~empty], safe[~empty], atol=1e-12)
    assert np.all(safe[empty] == 0)
    num = masked_numerators(logits, mask)
    assert np.all(num[~mask] == 0) and np.all(num[empty] == 0)
    np.testing.assert_allclose(num[~empty] / num[~empty].sum(-1, keepdims=True), safe[~empty], atol=1e-12)


def test_core_rejects_bad_arguments():
    with pytest.raises(ValueError, match="boolean"):
        textbook_softmax(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="pad_count"):
        clamp_pad(-1, 4)
    with pytest.raises(ValueError, match="T"):
        clamp_pad(1, 0)
    assert clamp_pad(9, 4) == 4 and clamp_pad(2, 4) == 2
    q = np.zeros((3, 2))
    with pytest.raises(ValueError, match="q, k must be"):
        mask_lab(q, np.zeros((4, 2)), np.zeros((4, 2)), 0)
    with pytest.raises(ValueError, match="temperature"):
        mask_lab(q, q, q, 0, temperature=0)


def test_mask_lab_runs():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 6, 4))
    lab = mask_lab(q, k, v, pad_count=2)
    assert lab.pad == 2 and lab.T == 6 and [r.name for r in lab.runs] == ["causal", "padding", "causal + padding"]
    assert lab.run("causal").n_blocked == 15 and lab.run("padding").n_blocked == 12
    for r in lab.runs:
        assert r.max_blocked_weight == 0.0 and np.all(r.weights[~r.mask] == 0)
    assert np.isnan(lab.textbook[0]).all() and not np.isnan(lab.textbook[1:]).any()
    assert np.all(lab.full_weights[0] == 0) and np.all(lab.full_output[0] == 0)
    everything = mask_lab(q, k, v, pad_count=99)
    assert everything.pad == 6 and list(everything.run("padding").empty_rows) == list(range(6))
    with pytest.raises(ValueError, match="choose one of"):
        lab.run("window")


def _weights_frames(at):
    """The weights heatmaps' cells (r, c, v, t of the cells drawn on the canvas; blank ones left out) by title."""
    out = {}
    for h in heatmaps(at):
        if h["title"] in ("weights", "masked scores (blank = blocked)", "mask (1 = may attend)"):
            out.setdefault(h["title"], []).append(h["cells"])
    return out


def test_masks_page_masked_cells_are_exactly_zero():
    at = run_ok(app(MASKS, {"pad": "3", "seq_len": "8"}))
    frames = _weights_frames(at)
    assert all(len(h["rows"]) == len(h["cols"]) == 8 for h in heatmaps(at))  # every map is the whole 8 x 8 grid
    assert len(frames["weights"]) == len(frames["masked scores (blank = blocked)"]) == 3  # one a mask
    cfg = at.session_state["whatif"]
    run = run_whatif(cfg.replace(mask="none"))
    q, k, v = run.q[0], run.k[0], run.v[0]
    masks = [causal_mask(8), padding_mask(5, 8), causal_mask(8) & padding_mask(5, 8)]
    for mask, wf, sf in zip(masks, frames["weights"], frames["masked scores (blank = blocked)"]):
        _, w = scaled_dot_product_attention(q, k, v, mask=mask)
        assert np.all(w[~mask] == 0.0)
        # the page draws only allowed cells: blocked cells are blank, never a huge number
        assert len(wf) == mask.sum() and len(sf) == mask.sum()
        assert set(zip(wf["r"], wf["c"])) == set(zip(*np.nonzero(mask)))
        assert np.abs(sf["v"]).max() < 100
    t = texts(at)
    for n in (28, 24, 34):
        assert f"{n} of 64 cells are blocked, and each of them gets weight exactly 0." in t
    assert "(largest blocked weight)" not in t
    assert "The padded keys (the last 3: t6, t7, t8) have e^−∞ = 0" in t and "the 5 real keys share" in t
    assert "with 0 NaN anywhere" in t and "returns **8 NaN** weights" in t
    padded = at.dataframe[0].value
    assert list(padded["weight"][-3:]) == [0.0, 0.0, 0.0]
    assert "Check yourself" in t


def test_masks_opens_with_padded_keys():
    """The page opens where it teaches: two padded keys, so the padding row blocks something."""
    t = texts(run_ok(app(MASKS)))
    assert "The padded keys (the last 2:" in t and "No cell is blocked (with a pad count of 0)" not in t


def test_masks_sentences_for_pad_zero_one_and_all():
    at = run_ok(app(MASKS, {"pad": "0"}))
    t = texts(at)
    assert "the last 0" not in t and "No key is padded (pad count 0)" in t
    assert "No cell is blocked (with a pad count of 0)" in t
    at.sidebar.slider(key="ctl_pad_count").set_value(1)
    run_ok(at)
    t = texts(at)
    assert "The padded key (the last one: t8) has e^−∞ = 0" in t and "the 7 real keys share" in t
    at.selectbox(key="mk_query").set_value(4)
    at.selectbox(key="mk_head").set_value(1)
    at.sidebar.slider(key="ctl_pad_count").set_value(8)
    run_ok(at)
    t = texts(at)
    assert "No query has an allowed key, so every row's weights and outputs are 0" in t
    assert "Every key is padded" in t and "0 on padded keys and 0 on the 0 real keys" in t
    assert list(at.dataframe[0].value["weight"]) == [0.0] * 8


@pytest.mark.parametrize(
    "query, shown",
    [
        ({"seq_len": "1"}, "No cell is blocked (the only query sees its own key)"),
        ({"seq_len": "512", "d_model": "1024", "heads": "16"}, "130816 of 262144 cells are blocked"),
        ({"pad": "512"}, "The pad count 512 is more than the 8 tokens; using 8"),
        ({"temperature": "0.1", "scaled": "0"}, "returns **8 NaN** weights"),
        ({"input": "sentence", "sentence": "the cat <b>sat</b> on", "pad": "2"}, "the last 2: \\<b\\>sat\\</b\\>, on"),
    ],
)
def test_masks_extremes(query, shown):
    at = run_ok(app(MASKS, query, timeout=180))
    assert shown in texts(at)


def test_positional_encoding_waits_behind_an_explained_expander():
    """Masks comes before Positional encoding: its control is in the sidebar's closed expander that says what it is."""
    from tests.test_page_multi_head import later_settings

    opened, caption, keys = later_settings(run_ok(app("pages/Masks.py")))
    assert not opened and keys == {"ctl_positional"}
    assert "positional encoding** adds to each token's embedding" in caption and "Off until you turn it on." in caption
    opened, caption, _ = later_settings(run_ok(app("pages/Masks.py", {"pe": "1"})))
    assert opened and "On in this setting: positional encoding." in caption
