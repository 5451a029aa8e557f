"""AppTest: the Positions page (sinusoidal, learned, RoPE, ALiBi): every control, extremes, bad URLs, the numbers shown."""

import json
import re

import numpy as np
import pytest

from attention_core import run_whatif
from attention_core.alibi import alibi_slopes
from attention_core.positions import learned_position_table, offset_profile, pair_scores
from tests.apptest_util import app, chart_datasets, run_ok, texts

POS = "pages/Positions.py"


def spread_shown(at) -> float:
    """The spread the page states for the selected method."""
    m = re.search(r"varies by at most \*\*([^*]+)\*\*", texts(at))
    assert m, texts(at)
    return float(m.group(1))


def table_rows(at) -> dict[str, list[str]]:
    """The methods table (markdown) as {method label: cells}."""
    table = next(md.value for md in at.markdown if md.value.startswith("| method |"))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {r[0]: r[1:] for r in rows}


def chart(at, title_start: str):
    for el in at.get("vega_lite_chart"):
        title = json.loads(el.proto.spec).get("title") or ""
        if isinstance(title, str) and title.startswith(title_start):
            return chart_datasets(el)[0]
    raise AssertionError(f"no chart titled {title_start!r}")


def move_sidebar_to_extremes(at) -> None:
    """Move the shared sidebar controls through their extremes, one rerun each, ending at 512 tokens, d_model 1024,
    16 heads and temperature 10 (no exception on the way)."""
    for key, value in (
        ("ctl_seq_len", 1),
        ("ctl_d_model", 2),
        ("ctl_temperature", 0.1),
        ("ctl_temperature", 10.0),
        ("ctl_d_model", 1024),
        ("ctl_n_heads", 16),
        ("ctl_seq_len", 512),
    ):
        widget = (
            at.sidebar.slider(key=key) if key in ("ctl_seq_len", "ctl_d_model") else at.sidebar.select_slider(key=key)
        )
        widget.set_value(value)
        run_ok(at)


def expected_spread(cfg, method, P, head=0, base=10000.0, train_len=16, causal=False):
    run = run_whatif(cfg.replace(positional=False))
    x, (w_q, w_k, _, _) = run.x.astype(np.float64), run.w
    cols = slice(head * cfg.d_k, (head + 1) * cfg.d_k)
    s = pair_scores(
        method,
        x[0],
        x[min(1, run.T - 1)],
        w_q[:, cols],
        w_k[:, cols],
        P,
        base=base,
        table=learned_position_table(train_len, cfg.d_model, seed=cfg.seed),
        slope=float(alibi_slopes(cfg.n_heads)[head]),
        symmetric=not causal,
        scaled=cfg.scaled,
    )
    return offset_profile(s, causal).spread


def test_defaults_rope_is_offset_only_and_added_positions_are_not():
    at = run_ok(app(POS))
    assert spread_shown(at) < 1e-4
    assert "depends **only on the offset**" in texts(at)
    rows = table_rows(at)
    assert rows["RoPE (rotated)"][2] == "offset only" and rows["ALiBi (biased)"][2] == "offset only"
    assert (
        rows["sinusoidal (added)"][2] == "absolute positions"
        and rows["learned table (added)"][2] == "absolute positions"
    )
    cfg = at.session_state["whatif"]
    assert float(rows["sinusoidal (added)"][0]) == pytest.approx(expected_spread(cfg, "sinusoidal", 8), rel=1e-2)
    assert float(rows["ALiBi (biased)"][0]) == 0.0
    band = chart(at, "rope: score by offset")
    assert len(band) == 15 and (band["high"] - band["low"]).max() < 1e-9  # offsets -7..7, every band of zero width
    assert at.query_params["method"] == "rope" and at.query_params["train_len"] == "6"
    assert "position 6 has no row" in texts(at) and "offsets up to 7 now occur where training saw at most 5" in texts(
        at
    )
    assert table_rows(at)["learned table (added)"][1:] == [
        "6",
        "absolute positions",
        "only positions 0 to 5 have a row",
    ]
    at.slider(key="pos_train_len").set_value(16)
    run_ok(at)
    assert "Set the trained length below seq_len = 8" in texts(at) and "has no row" not in texts(at)


def test_every_method_and_control():
    at = run_ok(app(POS))
    for method in ("sinusoidal", "learned", "alibi", "rope"):
        at.radio(key="pos_method").set_value(method)
        run_ok(at)
        assert at.query_params["method"] == method
        offset_only = "depends **only on the offset**" in texts(at)
        assert offset_only == (method in ("rope", "alibi"))
        assert (spread_shown(at) < 1e-4) == offset_only
    at.radio(key="pos_method").set_value("alibi")
    at.selectbox(key="pos_head").set_value(3)
    run_ok(at)
    slopes = chart(at, "ALiBi slope m per head")
    np.testing.assert_allclose(slopes["v"], alibi_slopes(4))
    assert "Head 3 subtracts 0.0156 per token of distance. At distance 7 the steepest head loses 1.75" in texts(at)
    for base in (100.0, 1000000.0):
        at.select_slider(key="pos_base").set_value(base)
        run_ok(at)
        assert at.query_params["base"] == f"{base:g}"
    at.radio(key="pos_method").set_value("rope")
    for train_len in (512, 1):
        at.slider(key="pos_train_len").set_value(train_len)
        run_ok(at)
    assert at.query_params["train_len"] == "1"
    assert spread_shown(at) < 1e-4  # RoPE stays offset-only beyond the trained length


def test_beyond_the_trained_length():
    at = run_ok(app(POS, {"seq_len": "24", "train_len": "10", "method": "learned"}))
    t = texts(at)
    assert "position 10 has no row: the learned table has 10 rows" in t
    assert "cannot extrapolate" in t and any("cannot attend over this input" in w.value for w in at.warning)
    assert "the score comparison above uses its first 10 positions only" in t
    assert table_rows(at)["learned table (added)"][1] == "10"
    assert "ALiBi**: head 1's bias at distance 23 is −0.25 × 23 = −5.75" in t
    band = chart(at, "learned: score by offset")
    assert len(band) == 19  # 10 positions: offsets -9..9
    at.radio(key="pos_method").set_value("rope")
    run_ok(at)
    assert "offsets up to 23 now occur where training saw at most 9" in texts(at)
    assert spread_shown(at) < 1e-4


def test_causal_mask_keeps_non_positive_offsets():
    at = run_ok(app(POS, {"mask": "causal", "method": "sinusoidal"}))
    band = chart(at, "sinusoidal: score by offset")
    assert band["offset"].max() == 0 and len(band) == 8
    cfg = at.session_state["whatif"]
    assert spread_shown(at) == pytest.approx(expected_spread(cfg, "sinusoidal", 8, causal=True), rel=1e-2)
    assert "36 pairs of positions allowed by the causal mask" in texts(at)


@pytest.mark.parametrize(
    "query",
    [
        {"seq_len": "1"},
        {"d_model": "2", "heads": "1"},
        {"d_model": "2", "heads": "2"},
        {"heads": "16"},
        {"temperature": "0.1", "method": "alibi"},
        {"temperature": "10", "method": "sinusoidal"},
        {"seq_len": "512", "d_model": "1024", "heads": "16"},
        {"seq_len": "512", "d_model": "1024", "heads": "16", "method": "learned", "train_len": "1", "mask": "causal"},
    ],
)
def test_extremes(query):
    at = run_ok(app(POS, query, timeout=240))
    cfg = at.session_state["whatif"]
    method = query.get("method", "rope")
    train_len = int(query.get("train_len", 16))
    P = min(cfg.seq_len, train_len) if method == "learned" else cfg.seq_len  # positions the map compares
    if cfg.d_k % 2:
        assert any("d_k = 1 is odd" in w.value for w in at.warning)
    elif method == "rope":
        assert spread_shown(at) < 1e-4
    elif method == "alibi":
        assert spread_shown(at) == 0.0  # a bias of the offset alone: exactly offset-only
    else:  # an added table: the spread the page states is the one of the scores it drew
        want = expected_spread(cfg, method, P, train_len=train_len, causal=cfg.causal)
        assert spread_shown(at) == pytest.approx(want, rel=1e-2, abs=1e-9)
    if method == "learned" and cfg.seq_len > train_len:
        assert f"only positions 0 to {train_len - 1} have a row" in texts(at)


@pytest.mark.slow
def test_sidebar_controls_to_extremes_then_page_controls():
    at = run_ok(app(POS, {"method": "alibi"}))
    move_sidebar_to_extremes(at)
    cfg = at.session_state["whatif"]
    assert (cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.temperature) == (512, 1024, 16, 10.0)
    assert spread_shown(at) == 0.0  # ALiBi: exactly offset-only
    at.radio(key="pos_method").set_value("rope")
    at.slider(key="pos_train_len").set_value(64)
    at.selectbox(key="pos_head").set_value(16)
    run_ok(at)
    assert spread_shown(at) < 1e-4
    assert "offsets up to 511 now occur where training saw at most 63" in texts(at)
