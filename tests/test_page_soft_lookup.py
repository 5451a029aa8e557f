"""The Soft lookup page: every sentence and chart states the numbers of the setting on screen, at the default and at
the extremes (the query at cat, halfway and at dog; cat stored twice; τ = 0.1 and 10), the controls move them and
the URL keeps them, and classroom mode holds the limit τ → 0 back until the student has predicted it.

The expected numbers are worked out here from the softmax formula, not from attention_core.lookup."""

import json
import math

import numpy as np
import pytest

from tests.apptest_util import app, chart_datasets, heatmaps, run_ok, set_widget, texts, widget_count
from ui.text import fmt

PAGE = "pages/Soft_lookup.py"
CAT, DOG, CAR = np.array([2.0, 1.0]), np.array([1.0, 2.0]), np.array([1.0, -2.0])


def expected(t: float, tau: float, twin: bool = False) -> np.ndarray:
    """The weights softmax(q·k / (√2 τ)) over cat, dog, car (and cat again), by hand."""
    q = (1 - t) * CAT + t * DOG
    keys = [CAT, DOG, CAR] + ([CAT] if twin else [])
    e = np.exp(np.array([q @ k for k in keys]) / (math.sqrt(2) * tau))
    return e / e.sum()


def charts(at) -> dict[str, tuple[dict, list]]:
    """The page's charts by group or title: (spec, datasets). A heatmap drawn on a canvas (the weights map) is
    (its data, [its cells r, c, v, t]) by its data's group; a Vega-Lite chart (the plane, the sweep) is
    (its spec, its datasets) by ui.draw.charts' usermeta group."""
    out = {h["group"] or h["title"]: (h, [h["cells"]]) for h in heatmaps(at)}
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        name = (spec.get("usermeta") or {}).get("group") or spec.get("title")
        out[name] = (spec, chart_datasets(el))
    return out


def cells(at) -> np.ndarray:
    """The weights map as drawn: (rows, N)."""
    df = charts(at)["lookup"][1][0]
    return df.pivot(index="r", columns="c", values="v").to_numpy()


def mix(w, values=(10, 20, 30, 40)) -> str:
    answer = float(np.dot(w, values[: len(w)]))
    return " + ".join(f"{fmt(x)} × {v}" for x, v in zip(w, values)) + f" = **{fmt(answer)}**"


def test_default_the_dict_finds_cat_and_attention_mixes_every_value():
    at = run_ok(app(PAGE))
    shown = texts(at)
    w = expected(0.0, 1.0)
    assert "A Python dict returns **10**: the query (2, 1) is exactly the key **cat**." in shown
    assert mix(w) in shown  # 0.657 × 10 + 0.324 × 20 + 0.0191 × 30 = 13.6
    assert (
        f"the weights are **peaked** (one key clearly takes more than its share): the largest is {fmt(w[0])}" in shown
    )
    assert "uniform would be 0.333 each" in shown
    assert "the hard lookup returns its value, **10**, as the dict does" in shown
    # cat holds 99% where e^(-g/τ) + e^(-h/τ) = 0.01 (1 + ...), g = 1/√2, h = 5/√2: solved here by bisection
    lo, hi = 0.01, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected(0.0, mid)[0] >= 0.99 else (lo, mid)
    assert f"**cat** holds 99% of the weight below τ = {fmt(lo)}; at τ = 1 it holds {fmt(w[0])}." in shown
    drawn = cells(at)
    assert drawn.shape == (2, 3)
    np.testing.assert_allclose(drawn[0], w, atol=1e-4)
    np.testing.assert_allclose(drawn[1], [1, 0, 0])
    table = at.dataframe[0].value
    assert list(table.index) == ["cat", "dog", "car"]
    np.testing.assert_allclose(table["score q·k/√d_k"], [5 / math.sqrt(2), 4 / math.sqrt(2), 0.0])
    np.testing.assert_allclose(table["weight × value"].sum(), np.dot(w, [10, 20, 30]))
    assert "Every key has length 2.24" in shown  # √5: cat, dog and car are equally long
    assert len({float(np.linalg.norm(k)) for k in (CAT, DOG, CAR)}) == 1


def test_the_sweep_draws_the_weights_over_temperature_with_rules_at_tau_and_the_threshold():
    at = run_ok(app(PAGE, {"tau": "2"}))
    spec, (df,) = charts(at)["over temperature"]
    for tau in (0.1, 1.0, 10.0):  # the log grid has 81 points from 0.1 to 10: these are on it
        row = df[np.isclose(df["tau"], tau)].set_index("key").loc[["cat", "dog", "car"], "weight"]
        np.testing.assert_allclose(row, expected(0.0, tau), atol=1e-9)
    rules = [layer["encoding"]["x"]["datum"] for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    assert rules[0] == 2.0 and 0.15 < rules[1] < 0.16
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]


@pytest.mark.parametrize(("tau", "word"), [(10.0, "nearly uniform"), (0.1, "sharp")])
def test_temperature_extremes(tau, word):
    at = run_ok(app(PAGE, {"tau": str(tau)}))
    shown = texts(at)
    w = expected(0.0, tau)
    assert f"At τ = {tau:g} the weights are **{word}**" in shown
    assert mix(w) in shown
    if tau == 10:  # 0.38, 0.354, 0.267: the answer is near the average 20
        assert w.max() < 0.4 and f"The answer {fmt(np.dot(w, [10, 20, 30]))} is close to the plain average" in shown
    else:  # 0.999 on cat: the soft lookup is the dict's answer to 3 digits
        assert w[0] > 0.999 and "= **10**" in shown
        assert "plain average" not in shown


def test_a_query_halfway_between_two_keys_is_a_key_error_for_the_dict_and_an_even_split_for_attention():
    at = run_ok(app(PAGE, {"query": "0.5", "tau": "0.1"}))
    shown = texts(at)
    assert "A Python dict raises **KeyError**: the query (1.5, 1.5), 50% of the way from cat to dog" in shown
    assert "**cat** and **dog** score the same (3.18)" in shown  # 4.5/√2
    assert "the hard lookup returns their average, **15**, where the dict raised KeyError" in shown
    np.testing.assert_allclose(cells(at)[0][:2], [0.5, 0.5], atol=1e-4)  # even at τ = 0.1
    assert mix(expected(0.5, 0.1)) in shown


def test_a_query_near_halfway_needs_a_temperature_below_the_slider():
    at = run_ok(app(PAGE, {"query": "0.45", "tau": "0.1"}))
    shown = texts(at)
    w = expected(0.45, 0.1)
    assert (
        "the key with the highest score: the hard lookup returns its value, **10**, where the dict raised KeyError"
        in shown
    )
    assert "under this slider's smallest τ = 0.1" in shown and f"at τ = 0.1 it holds {fmt(w[0])}." in shown
    assert w[0] < 0.99
    rules = [layer for layer in charts(at)["over temperature"][0]["layer"] if layer["mark"]["type"] == "rule"]
    assert len(rules) == 1  # the threshold lies off the chart: no dashed rule


def test_a_key_stored_twice_the_dict_keeps_the_last_value_and_attention_averages_both():
    at = run_ok(app(PAGE, {"twin": "1"}))
    shown = texts(at)
    assert "A Python dict returns **40**: the query (2, 1) equals a key stored 2 times" in shown
    assert "(10 was overwritten)" in shown
    assert "**cat** and **cat (2nd)** score the same" in shown
    assert "the hard lookup returns their average, **25**, where the dict returned 40" in shown
    w = expected(0.0, 1.0, twin=True)
    assert mix(w) in shown and w[0] == w[3]
    assert list(at.dataframe[0].value.index) == ["cat", "dog", "car", "cat (2nd)"]
    np.testing.assert_allclose(cells(at)[1], [0.5, 0, 0, 0.5])
    plane = charts(at)["keys and the query (area ∝ weight)"][1][0]
    assert "cat, cat (2nd)" in list(plane["name"])  # one point, both names
    np.testing.assert_allclose(plane.set_index("name").loc["cat, cat (2nd)", "w"], 2 * w[0])


def test_moving_the_controls_changes_the_sentences_and_the_url():
    at = run_ok(app(PAGE))
    run_ok(set_widget(at, "sl_query", 1.0))
    assert "A Python dict returns **20**: the query (1, 2) is exactly the key **dog**." in texts(at)
    run_ok(set_widget(at, "sl_tau", 10.0))
    assert mix(expected(1.0, 10.0)) in texts(at)
    run_ok(set_widget(at, "sl_twin", True))
    shown = texts(at)
    assert "A Python dict returns **20**" in shown and mix(expected(1.0, 10.0, twin=True)) in shown
    assert (at.query_params["query"], at.query_params["tau"], at.query_params["twin"]) == ("1", "10", "1")


@pytest.mark.parametrize(
    ("key", "value", "now"),
    [
        ("sl_tau", 10.0, mix(expected(0.0, 10.0))),
        ("sl_query", 0.5, "A Python dict raises **KeyError**"),
        ("sl_twin", True, mix(expected(0.0, 1.0, twin=True))),
    ],
)
def test_each_control_is_a_leaf_its_change_reruns_the_drawing_alone(key, value, now):
    """With partial reruns on (as in a browser) a change redraws only the body, with the new numbers (AppTest then
    holds the body's elements alone: no widgets)."""
    at = run_ok(app(PAGE, partial=True))
    run_ok(set_widget(at, key, value))
    assert widget_count(at) == 0, f"{key}: the change reran the whole page"
    assert now in texts(at)


def test_check_questions_are_answered_with_the_numbers_on_screen():
    at = run_ok(app(PAGE, {"query": "0.5"}))
    answers = {e.label: e.markdown[0].value for e in at.expander if e.label[:1].isdigit()}
    assert len(answers) == 3
    assert answers["1. What does a Python dict return for this query?"].startswith("A Python dict raises **KeyError**")
    assert mix(expected(0.5, 1.0)) in answers["2. Work attention's answer out from the weights in the table (τ = 1)."]
    assert "**15**" in answers["3. What does the answer become as τ → 0, and below which τ is it so?"]


def test_bad_link_values_are_named_and_replaced():
    at = run_ok(app(PAGE, {"query": "abc", "tau": "-3", "twin": "maybe"}))
    shown = texts(at)
    assert "query='abc' is not a finite number; using 0." in shown
    assert "tau=-3 is outside 0.1 to 10; using 0.1." in shown
    assert "twin='maybe' is not 1 or 0; using 0." in shown
    assert "A Python dict returns **10**" in shown


@pytest.mark.parametrize(("query", "pick", "right"), [({}, "10", True), ({"twin": "1"}, "40", False)])
def test_classroom_mode_holds_the_limit_back_until_the_prediction(query, pick, right):
    at = run_ok(app(PAGE, {"classroom": "lock", **query}))
    shown = texts(at)
    assert "Predict first." in shown and "The limit τ → 0 shows once you reveal your prediction" in shown
    assert cells(at).shape[0] == 1 and "over temperature" not in charts(at)  # only the soft row, no sweep
    assert "the hard lookup returns" not in shown
    widget = at.radio(key="guess_lookup.limit") if not query else at.selectbox(key="guess_lookup.limit")
    widget.set_value(list(widget.options).index(pick))  # the options as shown; the value is the choice's index
    at.button(key="reveal_lookup.limit").click()
    run_ok(at)
    verdict = [s.value for s in (at.success if right else at.warning)]
    assert any(f"you predicted **{pick}**" in v for v in verdict), verdict
    if not right:
        assert any("The answer is **25**" in v for v in verdict)  # the average of the two cats, not the dict's 40
    assert cells(at).shape[0] == 2 and "over temperature" in charts(at)
