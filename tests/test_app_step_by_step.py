"""AppTest: the Step-by-step page (class-notes walkthrough) with edited matrices."""

import math

import numpy as np

from tests.apptest_util import app, run_ok, texts

PAGE = "pages/2_Step_by_step.py"


def frames(at):
    return [d.value for d in at.dataframe]


def weights_frame(at):
    return next(f for f in frames(at) if "row sum" in f.columns)


def z_frame(at):
    return frames(at)[-1]


def edit(at, name, version, edits):
    at.session_state[f"sbs_{name}_{version}"] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}


def test_default_walkthrough_matches_hand_computation():
    at = run_ok(app(PAGE))
    s = 10 / math.sqrt(2)
    b = math.exp(s) / (3 + math.exp(s))
    A = weights_frame(at)
    np.testing.assert_allclose(A["B3"], round(b, 4))
    np.testing.assert_allclose(A["row sum"], 1.0)
    np.testing.assert_allclose(z_frame(at)["z1"], round(b, 4))
    assert "looking for B" in texts(at)
    assert "d_k = 2" in texts(at).replace("d_k = 2,", "d_k = 2")


def test_edited_w_q_changes_scores_weights_and_outputs():
    at = run_ok(app(PAGE))
    edit(at, "W_q", 0, {0: {"0": 1.0, "1": 0.0}})  # A now looks for A, B still looks for B
    run_ok(at)
    A = weights_frame(at)
    s = 10 / math.sqrt(2)
    a_row = math.exp(s) / (3 * math.exp(s) + 1)  # A query: three A keys score 10, B scores 0
    np.testing.assert_allclose(A.loc["A1", "A2"], round(a_row, 4))
    np.testing.assert_allclose(A.loc["B3", "B3"], round(math.exp(s) / (3 + math.exp(s)), 4))
    Z = z_frame(at)
    assert Z.loc["A1", "z0"] > 0.99 and Z.loc["B3", "z1"] > 0.99
    assert at.query_params["wq"] == "1,0;0,1"


def test_non_finite_edit_is_refused_and_last_good_kept():
    at = run_ok(app(PAGE))
    edit(at, "W_k", 0, {1: {"1": None}})
    run_ok(at)
    assert any("W_k has an empty or invalid entry at row 2, column 2" in e.value for e in at.error)
    np.testing.assert_allclose(weights_frame(at)["B3"], 0.9975)


def test_scaling_and_temperature_act_on_this_page():
    at = run_ok(app(PAGE))
    at.sidebar.toggle(key="ctl_scaled").set_value(False)
    run_ok(at)
    np.testing.assert_allclose(weights_frame(at)["B3"], round(math.exp(10) / (3 + math.exp(10)), 4))
    at.sidebar.select_slider(key="ctl_temperature").set_value(10.0)
    run_ok(at)
    np.testing.assert_allclose(weights_frame(at)["B3"], round(math.exp(1) / (3 + math.exp(1)), 4))
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


def test_matrices_from_link_and_bad_link():
    at = run_ok(app(PAGE, {"wq": "1,0;1,0"}))
    assert weights_frame(at).loc["B3", "A1"] > 0.3  # everyone looks for A now
    at = run_ok(app(PAGE, {"wq": "1,nan;0"}))
    assert any("Link ignored" in w.value for w in at.warning)
