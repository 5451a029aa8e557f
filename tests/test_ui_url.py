"""The WhatIf's round trip through the URL (ui/session/url.py): bad values clamped with notices, good ones kept."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import attention_core as ac
from ui.session.url import from_query_params, to_query_params


@pytest.mark.parametrize(
    "params, expect, notice",
    [
        ({"seq_len": "-3"}, {"seq_len": 1}, "seq_len=-3 is outside 1 to 512; using 1"),
        ({"heads": "abc"}, {"n_heads": 4}, "heads='abc' is not a whole number"),
        ({"d_model": "10", "heads": "3"}, {"d_model": 10, "n_heads": 2}, "heads=3 does not divide d_model=10; using 2"),
        ({"temperature": "nan"}, {"temperature": 1.0}, "temperature='nan' is not a finite number"),
        ({"temperature": "50"}, {"temperature": 10.0}, "temperature=50 is outside"),
        ({"mask": "<b>x</b>"}, {"mask": "none"}, "mask='<b>x</b>' is not one of"),
        ({"scaled": "maybe"}, {"scaled": True}, "scaled='maybe' is not 1 or 0"),
        ({"seq_len": "1e9"}, {"seq_len": 512}, "using 512"),
    ],
)
def test_whatif_from_bad_query_params(params, expect, notice):
    cfg, notices = from_query_params(params)
    for k, v in expect.items():
        assert getattr(cfg, k) == v
    assert any(notice in n for n in notices), notices


@given(
    st.integers(1, 512),
    st.sampled_from([8, 12, 64, 96, 1024]),
    st.booleans(),
    st.floats(0.1, 10),
    st.sampled_from(ac.MASK_KINDS),
    st.sampled_from(ac.INPUT_KINDS),
    st.integers(0, 2**31 - 1),
    st.text(min_size=1, max_size=30).filter(lambda s: s.split()),
)
def test_whatif_query_params_round_trip(seq_len, d_model, scaled, t, mask, kind, seed, sentence):
    heads = ac.allowed_heads(d_model)[-1]
    cfg = ac.WhatIf(
        seq_len=seq_len,
        d_model=d_model,
        n_heads=heads,
        scaled=scaled,
        temperature=round(t, 3),
        mask=mask,
        input_kind=kind,
        seed=seed,
        sentence=sentence,
    )
    back, notices = from_query_params(to_query_params(cfg))
    assert notices == []
    assert back == cfg or (kind != "sentence" and back == cfg.replace(sentence=ac.WhatIf().sentence))
