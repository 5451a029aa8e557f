"""Step by step: the walkthrough core (parity with attention_core) and the page (class-notes example, edited
matrices, the key booster, token-labelled tables, fixed colour scale, Step 9 over the A rows)."""

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import class_notes_weights, scaled_dot_product_attention
from attention_core.walkthrough import walkthrough
from tests.apptest_util import app, chart_datasets, run_ok, tables, texts
from ui.text import fmt

PAGE = "pages/Step_by_step.py"
LABELS = ["A1", "A2", "B3", "A4"]


@given(
    symbols=st.lists(st.sampled_from("AB"), min_size=1, max_size=8),
    ws=arrays(np.float64, (3, 2, 2), elements=st.floats(-5, 5)),
    scaled=st.booleans(),
    tau=st.floats(0.1, 10),
)
@settings(max_examples=60, deadline=None)
def test_walkthrough_equals_scaled_dot_product_attention(symbols, ws, scaled, tau):
    wt = walkthrough(symbols, *ws, scaled=scaled, temperature=tau)
    z, a = scaled_dot_product_attention(wt.Q, wt.K, wt.V, scaled=scaled, temperature=tau)
    np.testing.assert_allclose(wt.A, a, atol=1e-12)
    np.testing.assert_allclose(wt.Z, z, atol=1e-12)
    np.testing.assert_allclose(wt.S_scaled * (math.sqrt(2) if scaled else 1.0), wt.S, atol=1e-9)
    np.testing.assert_allclose(wt.A.sum(1), 1.0)


def test_walkthrough_class_notes_and_errors():
    wt = walkthrough("A A B A".split(), *class_notes_weights())
    s = 10 / math.sqrt(2)
    assert wt.labels == tuple(LABELS) and wt.d_k == 2
    np.testing.assert_allclose(wt.A[:, 2], math.exp(s) / (3 + math.exp(s)))
    assert wt.shift("A", 1) == pytest.approx(math.exp(s) / (3 + math.exp(s)))  # over the A rows only
    assert walkthrough(["B"], *class_notes_weights()).shift("A", 1) is None
    with pytest.raises(ValueError, match="each one of"):
        walkthrough(["C"], *class_notes_weights())
    with pytest.raises(ValueError, match="W_k must have 2 rows"):
        walkthrough(["A"], np.eye(2), np.eye(3), np.eye(2))
    with pytest.raises(ValueError, match="same number of columns"):
        walkthrough(["A"], np.eye(2), np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match="temperature"):
        walkthrough(["A"], np.eye(2), np.eye(2), np.eye(2), temperature=0)


def frames(at):
    """The tables' numbers (written as text by ui.text.fmt, as the sentences and maps write them)."""
    return [t.apply(lambda col: col.astype(float)) for t in tables(at)]


def shown(x: float) -> float:
    """``x`` as the page writes it (3 significant digits), read back."""
    return float(fmt(x))


def weights_frame(at):
    return next(f for f in frames(at) if "row sum" in f.columns)


def z_frame(at):
    return frames(at)[-1]


def charts(at):
    return {json.loads(el.proto.spec)["title"]: json.loads(el.proto.spec) for el in at.get("vega_lite_chart")}


def score_domain(at):
    return charts(at)["scores S = Q Kᵀ"]["layer"][0]["encoding"]["color"]["scale"]["domain"]


def edit(at, name, version, edits):
    at.session_state[f"sbs_{name}_{version}"] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}


def test_default_walkthrough_matches_hand_computation():
    at = run_ok(app(PAGE))
    s = 10 / math.sqrt(2)
    b = math.exp(s) / (3 + math.exp(s))
    A = weights_frame(at)
    np.testing.assert_allclose(A["B3"], shown(b))
    np.testing.assert_allclose(A["row sum"], 1.0)
    np.testing.assert_allclose(z_frame(at)["z1"], shown(b))
    t = texts(at)
    assert "looking for B" in t and "d_k = 2" in t
    # every T x T table is headed by the tokens on rows and columns
    square = [f for f in frames(at) if len(f.index) == 4 and "A1" in f.columns]
    assert len(square) == 3 and all(list(f.columns[:4]) == LABELS and list(f.index) == LABELS for f in square)
    # Step 9: over the A rows only
    assert f"Averaged over the 3 A rows only (a B row already is B), the second coordinate moved by {b:.3g}" in t
    assert "0.747" not in t
    assert score_domain(at) == [-10.0, 10.0] and "fixed at −10 to 10 (the booster's range)" in t
    assert "Check yourself" in t


def test_the_booster_in_one_click():
    at = run_ok(app(PAGE))
    s1 = 1 / math.sqrt(2)
    plain = math.exp(s1) / (3 + math.exp(s1))
    t = texts(at)
    assert f"**0.997** of its weight on B3 with W_k = 10·I and **{fmt(plain)}** with W_k = I" in t
    assert "Your W_k now: W_k = 10·I (the booster)" in t
    edit(at, "W_q", 0, {0: {"0": 1.0, "1": 0.0}})  # an edit that the booster buttons must keep
    run_ok(at)
    at.button(key="sbs_wk_plain").click()
    run_ok(at)
    A = weights_frame(at)
    np.testing.assert_allclose(A.loc["B3", "B3"], shown(math.exp(s1) / (3 + math.exp(s1))))
    assert A.loc["A1", "A2"] > A.loc["A1", "B3"]  # the edited W_q (A looks for A) survived the click
    assert "Your W_k now: W_k = I" in texts(at)
    assert score_domain(at) == [-10.0, 10.0]  # the colour scale did not re-stretch
    at.button(key="sbs_wk_boost").click()
    run_ok(at)
    assert "Your W_k now: W_k = 10·I (the booster)" in texts(at)
    assert at.query_params["wk"] == "10,0;0,10"


def test_edited_w_q_changes_scores_weights_and_outputs():
    at = run_ok(app(PAGE))
    edit(at, "W_q", 0, {0: {"0": 1.0, "1": 0.0}})  # A now looks for A, B still looks for B
    run_ok(at)
    A = weights_frame(at)
    s = 10 / math.sqrt(2)
    a_row = math.exp(s) / (3 * math.exp(s) + 1)  # A query: three A keys score 10, B scores 0
    np.testing.assert_allclose(A.loc["A1", "A2"], shown(a_row))
    np.testing.assert_allclose(A.loc["B3", "B3"], shown(math.exp(s) / (3 + math.exp(s))))
    Z = z_frame(at)
    assert Z.loc["A1", "z0"] > 0.99 and Z.loc["B3", "z1"] > 0.99
    assert at.query_params["wq"] == "1,0;0,1"
    t = texts(at)
    assert "looking for B" not in t.split("#### 2.")[1].split("#### 3.")[0]
    assert "which is what *looking for B* asked for" not in t


def test_big_scores_widen_the_stated_scale():
    at = run_ok(app(PAGE))
    edit(at, "W_k", 0, {1: {"1": 25.0}})
    run_ok(at)
    assert score_domain(at) == [-25.0, 25.0] and "wider than the booster's ±10" in texts(at)


def test_non_finite_edit_is_refused_and_last_good_kept():
    at = run_ok(app(PAGE))
    edit(at, "W_k", 0, {1: {"1": None}})
    run_ok(at)
    assert any("W_k has an empty or invalid entry at row 2, column 2" in e.value for e in at.error)
    np.testing.assert_allclose(weights_frame(at)["B3"], 0.997)


def test_scaling_and_temperature_act_on_this_page():
    at = run_ok(app(PAGE))
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    np.testing.assert_allclose(weights_frame(at)["B3"], shown(math.exp(10) / (3 + math.exp(10))))
    assert "Scaling is off in the sidebar, so the top score stays 10" in texts(at)
    at.sidebar.select_slider(key="ctl_temperature").set_value(10.0)
    run_ok(at)
    np.testing.assert_allclose(weights_frame(at)["B3"], shown(math.exp(1) / (3 + math.exp(1))))
    assert "then the temperature 10 divides it again" in texts(at)
    at.sidebar.number_input(key="ctl_seed").set_value(3)
    run_ok(at)


def test_presets_and_tokens():
    at = run_ok(app(PAGE))
    at.radio(key="sbs_preset").set_value("identity")
    run_ok(at)
    A = weights_frame(at)  # identity: each token matches its own symbol
    assert A.loc["A1", "B3"] < A.loc["A1", "A2"]
    at.radio(key="sbs_preset").set_value("seeded random")
    run_ok(at)
    at.text_input(key="sbs_tokens").input("B A <b>x</b>")
    run_ok(at)
    assert any("each A or B" in e.value for e in at.error)
    at.text_input(key="sbs_tokens").input("B A")
    run_ok(at)
    assert list(weights_frame(at).index) == ["B1", "A2"]
    assert "Averaged over the A row only" in texts(at)
    at.text_input(key="sbs_tokens").input("B")
    run_ok(at)
    assert "There is no A token" in texts(at)
    at.text_input(key="sbs_tokens").input(" ".join("AB" * 8))
    run_ok(at)
    assert len(weights_frame(at)) == 16 and "Averaged over the 8 A rows only" in texts(at)


def test_matrices_from_link_and_bad_link():
    at = run_ok(app(PAGE, {"wq": "1,0;1,0"}))
    assert weights_frame(at).loc["B3", "A1"] > 0.3  # everyone looks for A now
    assert "*looking for A*" in texts(at)
    assert at.query_params["wq"] == "1,0;1,0"  # the link's matrix round-trips into the URL
    assert at.query_params["wk"] == "10,0;0,10" and at.query_params["wv"] == "1,0;0,1"  # the preset's, beside it
    assert not any("is not read" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "raw, why",
    [
        ("1,nan;0", "W_q has rows of different lengths (1 and 2 numbers); write rows of equal length separated by"),
        ("1,0", "W_q must be 2 x 2; got 1 x 2"),
        ("1,x;0,1", "W_q has 'x' in row 1, which is not a number; write rows separated by ';' and numbers by ','"),
        ("1,inf;0,1", "only finite numbers between"),
        ("", "W_q is empty; write rows separated by ';' and numbers by ','"),
    ],
)
def test_a_bad_matrix_in_the_link_is_refused_with_what_is_allowed_and_the_preset_kept(raw, why):
    at = run_ok(app(PAGE, {"wq": raw, "wk": "2,0;0,2"}))
    notices = [w.value for w in at.warning if f"wq={raw[:40]!r} is not read" in w.value]
    assert len(notices) == 1 and why in notices[0] and "Using the preset." in notices[0], [w.value for w in at.warning]
    assert not raw or notices[0].count(repr(raw[:40])) == 1  # the link's text is quoted once
    np.testing.assert_allclose(weights_frame(at).loc["B3", "B3"], shown(_b3_weight(wk=2.0)))  # W_q: the preset's
    assert at.query_params["wq"] == "0,1;0,1" and at.query_params["wk"] == "2,0;0,2"  # the good one still read
    at.radio(key="sbs_preset").set_value("identity")  # a change of the matrices: the notice no longer applies
    run_ok(at)
    assert not any("is not read" in w.value for w in at.warning)
    assert "wq" not in at.query_params  # the identity preset, unedited: no matrix in the link


def test_a_matrix_from_the_link_survives_a_switch_to_another_page_and_back():
    at = run_ok(app(PAGE, {"wq": "1,0;1,0"}))
    at.switch_page("pages/Masks.py")
    run_ok(at)
    at.switch_page(PAGE)
    run_ok(at)
    assert at.query_params["wq"] == "1,0;1,0" and "*looking for A*" in texts(at)


def _b3_weight(wk: float) -> float:
    """B3's weight on itself with the preset's W_q (everyone looks for B) and W_k = wk I: three A keys score 0."""
    s = wk / math.sqrt(2)
    return math.exp(s) / (3 + math.exp(s))


@pytest.mark.parametrize("query", [{}, {"temperature": "0.1"}, {"temperature": "10", "scaled": "0"}])
def test_one_weight_reads_the_same_in_the_map_its_tooltip_the_table_and_the_sentence(query):
    """One formatter (ui.text.fmt): A1's weight on its favourite key was 0.998 on the map, 0.9975 in the table and
    0.997 in the sentence; now every place writes it once, rounded once."""
    at = run_ok(app(PAGE, query))
    cfg = at.session_state["whatif"]
    wt = walkthrough("A A B A".split(), *class_notes_weights(), scaled=cfg.scaled, temperature=cfg.temperature)
    top = int(np.argmax(wt.A[0]))
    written = fmt(wt.A[0, top])
    table = next(t for t in tables(at) if "row sum" in t.columns)
    assert table.loc["A1", LABELS[top]] == written
    (chart,) = [el for el in at.get("vega_lite_chart") if json.loads(el.proto.spec)["title"] == "weights α"]
    spec = json.loads(chart.proto.spec)
    for layer in spec["layer"]:  # the rect's and the number's tooltips both show the written number
        assert [t["field"] for t in layer["encoding"]["tooltip"]][-1] == "text"
    (cells,) = chart_datasets(chart)
    assert cells.loc[(cells["r"] == 0) & (cells["c"] == top), "text"].item() == written
    t = texts(at)
    assert f"Query A1 puts {written} of its weight on {LABELS[top]}" in t
    assert f"{LABELS[top]}, with weight {written} (row A1 of α)." in t  # the check question's answer


@pytest.mark.parametrize(
    "raw", ["[Sign in](https://example.org)", "![x](https://example.org/p.png)", "<b>1</b>", "`1`,$x$;*0*,1"]
)
def test_the_links_text_quoted_in_a_notice_stays_text(raw):
    """A notice quotes the link's text inside Markdown: a link, an image, HTML, code, math or emphasis someone put in a
    shared link is shown as the characters typed (escaped), never drawn (ui.text.md_text)."""
    at = run_ok(app(PAGE, {"wq": raw}))
    (notice,) = [w.value for w in at.warning if "is not read" in w.value]
    for mark in ("[", "]", "<", ">", "`", "$", "*"):
        if mark in raw:
            assert f"\\{mark}" in notice and not re.search(rf"(?<!\\){re.escape(mark)}", notice), (mark, notice)
