"""AppTest: the Masks page (Multi-head, Cross-attention and Positional encoding: tests/test_page_multi_head.py,
tests/test_page_cross_attention.py, tests/test_page_positional.py)."""

import numpy as np
import pytest

from attention_core import causal_mask, padding_mask, run_whatif, scaled_dot_product_attention
from tests.apptest_util import app, chart_datasets, run_ok, texts

MASKS = "pages/5_Masks.py"


def _weights_frames(at):
    """The weights heatmaps' data (vector charts) by title."""
    import json
    out = {}
    for el in at.get("vega_lite_chart"):
        title = json.loads(el.proto.spec).get("title")
        if title in ("weights", "masked scores (blank = blocked)", "mask (1 = may attend)"):
            out.setdefault(title, []).append(chart_datasets(el)[0])
    return out


def test_masks_page_masked_cells_are_exactly_zero():
    at = run_ok(app(MASKS, {"pad": "3", "seq_len": "8"}))
    frames = _weights_frames(at)
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
    assert "their weights are exactly 0 (largest blocked weight)" in texts(at)
    assert "with 0 NaN anywhere" in texts(at) and "returns **8 NaN** weights" in texts(at)
    padded = at.dataframe[0].value
    assert list(padded["weight"][-3:]) == [0.0, 0.0, 0.0]
    at.selectbox(key="mk_query").set_value(4)
    at.selectbox(key="mk_head").set_value(1)
    at.sidebar.slider(key="ctl_pad_count").set_value(8)
    run_ok(at)
    assert "row(s) have no allowed key at all" in texts(at)


@pytest.mark.parametrize("query", [{"seq_len": "1"}, {"seq_len": "512", "d_model": "1024", "heads": "16"},
                                   {"pad": "512"}, {"temperature": "0.1", "scaled": "0"}])
def test_masks_extremes(query):
    run_ok(app(MASKS, query, timeout=180))
