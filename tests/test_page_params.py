"""ui/skeleton/page_params.py: reading a page control from the URL (good and bad values of every kind), fitting a value to
the current setting, and the kept values across a page switch (AppTest)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.apptest_util import app, run_ok
from ui.skeleton.page_params import Fitted, PageParam, fit, head_param, link_text, parse_param, show

COUNT = PageParam("k_count", "count", 3, lo=1, hi=10, integer=True, why="for seq_len 10")
SCALE = PageParam("k_scale", "scale", 0.5, lo=0.0, hi=2.0)
BASE = PageParam("k_base", "base", 100.0, choices=(10.0, 100.0, 1000.0))
KV = PageParam("k_kv", "kv", 2, choices=(1, 2, 4), integer=True, why="for 4 query heads")
METHOD = PageParam("k_method", "method", "rope", choices=("rope", "alibi"))
FLAG = PageParam("k_flag", "flag", False, boolean=True)


GOOD = {  # parameter: {what the URL says: what is read}
    COUNT: {"7": 7, " 7 ": 7, "7.0": 7, "1e1": 10},
    SCALE: {"1.25": 1.25, "0": 0.0},
    BASE: {"1000": 1000.0},
    KV: {"4": 4},
    METHOD: {"alibi": "alibi"},
    FLAG: {"1": True, "on": True, "FALSE": False, "0": False},
}
BAD = {  # parameter: {what the URL says: (what is used, the notice)}
    COUNT: {
        "abc": (3, "count='abc' is not a whole number; using 3."),
        "2.5": (3, "count='2.5' is not a whole number; using 3."),
        "nan": (3, "count='nan' is not a whole number; using 3."),
        "inf": (3, "count='inf' is not a whole number; using 3."),
        "99": (10, "count=99 is outside 1 to 10 for seq_len 10; using 10."),
        "-5": (1, "count=-5 is outside 1 to 10 for seq_len 10; using 1."),
    },
    SCALE: {
        "x": (0.5, "scale='x' is not a finite number; using 0.5."),
        "-inf": (0.5, "scale='-inf' is not a finite number; using 0.5."),
        "3": (2.0, "scale=3 is outside 0 to 2; using 2."),
    },
    BASE: {
        "7": (10.0, "base=7 is not allowed (allowed: 10, 100, 1000); using 10."),
        "600": (1000.0, "base=600 is not allowed (allowed: 10, 100, 1000); using 1000."),
    },
    KV: {
        "3": (2, "kv=3 is not allowed for 4 query heads (allowed: 1, 2, 4); using 2."),
        "1.5": (2, "kv='1.5' is not a whole number; using 2."),
    },
    METHOD: {
        "nope": ("rope", "method='nope' is not allowed (allowed: rope, alibi); using rope."),
        "ROPE": ("rope", "method='ROPE' is not allowed (allowed: rope, alibi); using rope."),
    },
    FLAG: {"maybe": (False, "flag='maybe' is not 1 or 0; using 0.")},
}


def _cases(table: dict) -> list:
    return [
        pytest.param(p, raw, want, id=f"{p.url}={raw!r}") for p, rows in table.items() for raw, want in rows.items()
    ]


@pytest.mark.parametrize("p, raw, value", _cases(GOOD))
def test_good_url_values_are_read_without_a_notice(p, raw, value):
    got, notice = parse_param(p, raw)
    assert got == value and type(got) is type(value) and notice is None


@pytest.mark.parametrize("p, raw, want", _cases(BAD))
def test_bad_url_values_say_what_was_given_what_is_allowed_and_what_is_used(p, raw, want):
    value, notice = want
    got = parse_param(p, raw)
    assert got == (value, notice) and type(got[0]) is type(value)


def test_a_long_bad_value_is_shortened_in_the_notice():
    _, notice = parse_param(METHOD, "x" * 500)
    assert notice == f"method={'x' * 40!r} is not allowed (allowed: rope, alibi); using rope."


def test_fit_moves_a_kept_value_to_the_current_setting():
    head = head_param("k_head", 4)
    assert fit(head, 9) == (4, "head=9 is outside 1 to 4 (there are 4 heads); using 4.")
    assert fit(head, 3) == (3, None)
    assert fit(PageParam("k", "w", 1, lo=1, integer=True), -2) == (1, "w=-2 is below 1; using 1.")
    assert fit(PageParam("k", "w", 1, hi=5, integer=True), 9) == (5, "w=9 is above 5; using 5.")
    assert fit(FLAG, True) == (True, None)


@given(st.text(max_size=30))
def test_any_url_text_gives_an_allowed_value(raw):
    for p in (COUNT, SCALE, BASE, KV, METHOD, FLAG):
        value, notice = parse_param(p, raw)
        assert fit(p, value) == (value, None)  # what is used is allowed
        if notice is not None:
            assert notice.startswith(f"{p.url}=") and f"using {show(value)}." in notice


@given(st.integers(-(10**6), 10**6))
def test_whole_numbers_are_kept_inside_the_range_and_clamped_outside(n):
    value, notice = parse_param(COUNT, str(n))
    assert value == min(max(n, 1), 10)
    assert (notice is None) == (1 <= n <= 10)
    if notice:
        assert "is outside 1 to 10 for seq_len 10" in notice


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_numbers_round_trip_through_the_url_text(x):
    value, notice = parse_param(SCALE, show(x))
    assert math.isclose(value, min(max(float(show(x)), 0.0), 2.0))
    if 0 <= x <= 2 and float(show(x)) == x:
        assert value == x and notice is None


@given(st.integers(-100, 100))
def test_numbers_not_offered_move_to_the_nearest_choice(n):
    value, notice = parse_param(KV, str(n))
    assert value in KV.choices
    assert abs(value - n) == min(abs(c - n) for c in KV.choices)
    assert (notice is None) == (n in KV.choices)


def test_a_page_control_survives_a_switch_to_another_page_and_back():
    at = run_ok(app("pages/Efficient_attention.py"))
    at.slider(key="eff_window").set_value(6)
    run_ok(at)
    assert at.query_params["window"] == "6"
    at.switch_page("pages/Positions.py")
    run_ok(at)
    at.slider(key="pos_train_len").set_value(17)
    run_ok(at)
    at.switch_page("pages/Efficient_attention.py")
    run_ok(at)
    assert at.slider(key="eff_window").value == 6 and at.query_params["window"] == "6"
    at.switch_page("pages/Positions.py")
    run_ok(at)
    assert at.slider(key="pos_train_len").value == 17 and at.query_params["train_len"] == "17"


def test_a_notice_stays_until_a_page_control_changes():
    at = run_ok(app("pages/Positions.py", {"train_len": "900"}))
    assert any("train_len=900 is outside 1 to 512; using 512." in w.value for w in at.warning)
    at.radio(key="pos_method").set_value("alibi")
    run_ok(at)
    assert not any("train_len=900" in w.value for w in at.warning)
    assert at.slider(key="pos_train_len").value == 512


def test_a_head_beyond_a_smaller_head_count_moves_with_a_notice():
    at = run_ok(app("pages/Sinks_and_linear_attention.py", {"heads": "8", "d_model": "16"}))
    at.selectbox(key="sk_head").set_value(8)
    run_ok(at)
    at.sidebar.select_slider(key="ctl_n_heads").set_value(2)
    run_ok(at)
    assert any("head=8 is outside 1 to 2 (there are 2 heads); using 2." in w.value for w in at.warning)
    assert at.selectbox(key="sk_head").value == 2 and at.query_params["head"] == "2"


# ---- text controls: free text with a length cap, and typed text read by a parser (a matrix, a pair of numbers)


def _pair(raw: str) -> tuple[int, int]:
    """``"3x4"`` -> (3, 4); anything else raises ValueError saying what is allowed."""
    parts = raw.split("x")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError("write two whole numbers joined by x, e.g. 3x4")
    return int(parts[0]), int(parts[1])


TEXT = PageParam("k_text", "text", "the default", chars=12, omit_default=True, fallback="the class's sentence")
PAIR = PageParam("k_pair", "pair", None, parse=_pair, format=lambda v: f"{v[0]}x{v[1]}", fallback="no pair")


def test_text_and_typed_values_round_trip_through_the_link():
    for raw in ("a <b>cat</b>", "", "  spaced  ", "émoji 🐶"):
        assert parse_param(TEXT, raw) == (raw, None) and link_text(TEXT, raw) == raw
    assert link_text(TEXT, "the default") is None  # the default is left out of the link (omit_default)
    assert parse_param(PAIR, "3x4") == ((3, 4), None) and link_text(PAIR, (3, 4)) == "3x4"
    assert link_text(PAIR, None) is None  # None: not in the link


def test_bad_or_oversized_text_gives_the_default_and_says_what_is_allowed():
    assert parse_param(TEXT, "x" * 13) == (
        "the default",
        "text= is 13 characters long; at most 12 are allowed. Using the class's sentence.",
    )
    assert parse_param(PAIR, "3 by 4" + "!" * 50) == (
        None,
        f"pair={('3 by 4' + '!' * 50)[:40]!r} is not read: write two whole numbers joined by x, e.g. 3x4. Using no pair.",
    )


def _capped_pair(raw: str) -> tuple[int, int] | Fitted:
    """``_pair``, with each number over 9 moved to 9 (as :class:`Fitted`, saying so)."""
    a, b = _pair(raw)
    if max(a, b) <= 9:
        return a, b
    return Fitted((min(a, 9), min(b, 9)), f"pair: numbers above 9 are not allowed; using {min(a, 9)}x{min(b, 9)}.")


CAPPED = PageParam("k_capped", "capped", (1, 1), chars=8, parse=_capped_pair, format=lambda v: f"{v[0]}x{v[1]}")


def test_text_parse_read_in_part_gives_its_fitted_value_and_notice():
    assert parse_param(CAPPED, "3x4") == ((3, 4), None)
    assert parse_param(CAPPED, "3x40") == ((3, 9), "pair: numbers above 9 are not allowed; using 3x9.")
    assert parse_param(CAPPED, "3 by 4") == (
        (1, 1),
        "capped='3 by 4' is not read: write two whole numbers joined by x, e.g. 3x4. Using (1, 1).",
    )
    assert parse_param(CAPPED, "30x40000")[0] == (9, 9)  # 8 characters: read, and fitted
    assert parse_param(CAPPED, "30x400000") == (
        (1, 1),
        "capped= is 9 characters long; at most 8 are allowed. Using (1, 1).",
    )


@given(st.text(max_size=20))
def test_any_link_text_gives_a_value_the_link_can_carry(raw):
    value, notice = parse_param(TEXT, raw)
    assert (notice is None) == (len(raw) <= 12)
    assert value == (raw if notice is None else "the default")
    assert link_text(TEXT, value) == (None if value == "the default" else value)
    value, notice = parse_param(PAIR, raw)
    assert (value is None) == (notice is not None)


def _text_page():
    """A page of one free-text control (drawn) and one typed control (set from code), as a page uses them."""
    import streamlit as st

    from ui.skeleton import page_params as pp
    from ui.skeleton.page_params import PageParam

    text = PageParam("t_text", "text", "the default", chars=12, omit_default=True, fallback="the default")
    pair = PageParam(
        "t_pair",
        "pair",
        None,
        parse=lambda raw: tuple(int(x) for x in raw.split("x", 1)),
        format=lambda v: f"{v[0]}x{v[1]}",
        fallback="no pair",
    )
    pp.start_visit()
    value = pp.draw(text)
    pair_value = pp.restore([pair])["pair"]
    if st.button("double", key="t_double") and pair_value is not None:
        pp.set_value(pair, (2 * pair_value[0], 2 * pair_value[1]))
    pp.write_params([text, pair])
    pp.show_notes()
    st.markdown(f"text: {value!r}; pair: {st.session_state['t_pair']!r}")


def _text_app(query: dict) -> AppTest:
    at = AppTest.from_function(_text_page)
    for k, v in query.items():
        at.query_params[k] = v
    return run_ok(at)


def test_a_text_control_seeds_from_the_link_and_writes_what_is_typed():
    at = _text_app({"text": "<b>hi</b>", "pair": "3x4"})
    assert at.text_input(key="t_text").value == "<b>hi</b>" and not at.warning
    assert at.query_params["text"] == "<b>hi</b>" and at.query_params["pair"] == "3x4"
    at.text_input(key="t_text").input("a cat")
    at.button(key="t_double").click()
    run_ok(at)
    assert at.query_params["text"] == "a cat" and at.query_params["pair"] == "6x8"
    at.text_input(key="t_text").input("the default")
    run_ok(at)
    assert "text" not in at.query_params  # the default is left out


def test_an_oversized_or_unreadable_link_value_is_refused_with_a_notice_and_the_default_kept():
    at = _text_app({"text": "x" * 13, "pair": "3 by 4"})
    notices = " ".join(w.value for w in at.warning)
    assert "text= is 13 characters long; at most 12 are allowed. Using the default." in notices
    assert "pair='3 by 4' is not read: invalid literal for int()" in notices and "Using no pair." in notices
    assert at.text_input(key="t_text").value == "the default"
    assert "text" not in at.query_params and "pair" not in at.query_params
    assert "text: 'the default'; pair: None" in at.markdown[0].value
