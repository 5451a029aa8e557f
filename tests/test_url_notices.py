"""A bad URL value is ignored with a notice naming it (and, mostly, what is used instead); the page still works.

One table for the pages whose own parameters are checked (and the link options every page reads); the
Efficient attention page must also still show exact numbers after the notice.
"""

from urllib.parse import parse_qsl

import pytest

from attention_core.gqa import MODELS_BY_NAME
from tests.apptest_util import app, run_ok
from tests.test_app_efficient import assert_exact

PLAYGROUND = "pages/Playground.py"
EFFICIENT = "pages/Efficient_attention.py"
POSITIONS = "pages/Positions.py"
SINKS = "pages/Sinks_and_linear_attention.py"

STILL_WORKS = {EFFICIENT: assert_exact}  # what a page must still show after the notice, beyond its charts

NOTICES = {  # page: {the URL query: what its notice says (at least)}
    PLAYGROUND: {
        "classroom=maybe": "classroom='maybe' is not 1, 0 or lock",
        "hide=colour": "hide='colour' is not a control",
        "view=giant": "view='giant' is not 'projector'",
        "preset=../../etc/passwd": "preset must be the file name of a preset",
    },
    EFFICIENT: {
        "kv=3": "kv=3 is not allowed for 4 query heads (KV heads must divide them) (allowed: 1, 2, 4); using 2.",
        "kv=3&heads=8": "using 2.",
        "step=abc": "step='abc' is not a whole number; using 5.",
        "window=999": "window=999 is outside 1 to 8 for seq_len 8; using 8.",
        "layers=0": "layers=0 is outside 1 to 32; using 1.",
        "tile=2.5": "tile='2.5' is not a whole number; using 2.",
        "fq=nan": "fq='nan' is not a whole number",
        "llm=GPT-5": f"llm='GPT-5' is not allowed (allowed: {', '.join(MODELS_BY_NAME)}); using Llama-2-70B.",
        "dtype=fp4": "dtype='fp4' is not allowed (allowed: float32, float16, bfloat16, int8); using float16.",
        "ctx=-5": "ctx=-5 is outside 1 to 1048576; using 1.",
        "batch=1e9": "batch=1000000000 is outside 1 to 1024; using 1024.",
    },
    POSITIONS: {
        "method=nope": "method='nope' is not allowed (allowed: sinusoidal, learned, rope, alibi); using rope.",
        "base=7": "base=7 is not allowed (allowed: 100, 1000, 10000, 100000, 500000, 1e+06); using 100.",
        "base=abc": "base='abc' is not a finite number; using 10000",
        "train_len=-5": "train_len=-5 is outside 1 to 512; using 1",
        "train_len=2.5": "train_len='2.5' is not a whole number",
        "head=9": "head=9 is outside 1 to 4 (there are 4 heads); using 4.",
    },
    SINKS: {
        "sinks=1,abc,3": "sinks: 'abc' for head 2 is not a finite number; using 0",
        "sinks=1,2,3,4,5,6": "sinks has 6 values but there are 4 heads; the extra ones are ignored",
        "sinks=0.3": "sinks: 0.3 for head 1 is not a multiple of 0.5 from -10 to 10; using 0.5",
        "sinks=99": "using 10",
        "nosink=maybe": "nosink='maybe' is not 1 or 0; using 0",
        "n_sink=-1": "n_sink=-1 is outside 0 to 64; using 0",
        "window=9999": "window=9999 is outside 1 to 512; using 512",
        "head=x": "head='x' is not a whole number; using 1",
        "head=7": "head=7 is outside 1 to 4 (there are 4 heads); using 4.",
    },
}
CASES = [(page, dict(parse_qsl(query)), notice) for page, rows in NOTICES.items() for query, notice in rows.items()]


@pytest.mark.parametrize("page, query, notice", CASES)
def test_bad_url_values_give_a_notice_and_a_working_page(page, query, notice):
    at = run_ok(app(page, query))
    warnings = [w.value for w in at.warning]
    assert any(notice in w for w in warnings), warnings
    assert at.get("vega_lite_chart")
    STILL_WORKS.get(page, lambda at: None)(at)
