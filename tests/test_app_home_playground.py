"""AppTest: the shared controls (the home page: tests/test_page_home.py; the Playground page itself:
tests/test_page_playground.py)."""

import pytest

from attention_core import WhatIf
from tests.apptest_util import app, run_ok

PLAY = "pages/Playground.py"


@pytest.mark.parametrize(
    "query, notice",
    [
        ({"seq_len": "-3"}, "seq_len=-3 is outside 1 to 512; using 1"),
        ({"heads": "abc"}, "heads='abc' is not a whole number"),
        ({"d_model": "10", "heads": "3"}, "heads=3 does not divide d_model=10; using 2"),
        ({"temperature": "nan"}, "temperature='nan' is not a finite number"),
    ],
)
def test_bad_url_gives_notice_and_valid_page(query, notice):
    at = run_ok(app(PLAY, query))
    assert any(notice in w.value for w in at.warning), [w.value for w in at.warning]
    cfg = at.session_state["whatif"]
    assert isinstance(cfg, WhatIf)
    assert cfg.d_model % cfg.n_heads == 0


def test_url_values_are_used_and_written_back():
    at = run_ok(app(PLAY, {"seq_len": "5", "d_model": "32", "heads": "8", "scaled": "0", "temperature": "2.0"}))
    cfg = at.session_state["whatif"]
    assert (cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.scaled, cfg.temperature) == (5, 32, 8, False, 2.0)
    assert at.query_params["heads"] == "8" and not at.warning


def test_long_sentence_is_truncated_with_notice():
    at = run_ok(
        app(
            PLAY, {"input": "sentence", "sentence": " ".join(f"w{i}" for i in range(600)), "d_model": "8", "heads": "1"}
        )
    )
    assert any("only the first 512 are used" in i.value for i in at.info)


def test_empty_sentence_is_refused_and_state_kept():
    at = run_ok(app(PLAY, {"input": "sentence", "sentence": "hello world"}))
    at.sidebar.text_area(key="ctl_sentence").input("   ")
    run_ok(at)
    assert at.session_state["whatif"].sentence == "hello world"
    assert any("empty" in w.value for w in at.warning)


def test_d_model_change_adjusts_heads_with_notice():
    at = run_ok(app(PLAY))
    at.sidebar.slider(key="ctl_d_model").set_value(10)
    run_ok(at)
    assert at.session_state["whatif"].n_heads == 5
    assert any("switched to 5 heads" in w.value for w in at.warning)
