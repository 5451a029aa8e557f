"""Presets, share links, exports and classroom mode (the Compare page: tests/test_page_compare.py)."""

import json
import subprocess
import sys
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif
from tests.apptest_util import ROOT, app, chart_titles, run_ok, tables, texts
from tests.script_output import parse_printed_weights
from ui.classroom.presets import MAX_LINK, load_presets, parse_preset
from ui.lessons.playground.export import output_csv, qkv_csv, snippet_core, snippet_torch, weights_csv
from ui.session.url import to_query_params

PRESETS, ERRORS = load_presets()
PAGE_SET = {"streamlit_app.py"} | {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}


def test_repo_presets_are_all_valid():
    assert ERRORS == []
    names = {p.name for p in PRESETS}
    assert {
        "Looking for B",
        "Why scale?",
        "Causal decoder",
        "One head vs eight",
        "Temperature",
        "It refers to the animal",
    } <= names
    for p in PRESETS:
        assert len(p.link("https://attention-explorer.streamlit.app")) < MAX_LINK


@pytest.mark.parametrize("preset", PRESETS, ids=[p.slug for p in PRESETS])
def test_every_preset_loads_and_sets_its_controls(preset):
    at = run_ok(app("streamlit_app.py"))
    at.button(key=f"preset_{preset.slug}").click()
    run_ok(at)
    page_title = {
        "pages/Playground.py": "Playground",
        "pages/Step_by_step.py": "Step by step",
        "pages/Compare.py": "Compare",
    }[preset.page]
    assert at.title[0].value.endswith(page_title)
    assert at.session_state["whatif"] == preset.settings
    if preset.a is not None:
        assert at.session_state["whatif_a"] == preset.a and at.session_state["whatif_b"] == preset.b
    for k, v in preset.matrices.items():
        assert at.query_params.get(k, v) == v  # in the link unless equal to the page's default preset
    assert at.query_params["preset"] == preset.slug
    assert preset.question.replace('"', "") in texts(at).replace("\\", "").replace('"', "")  # the preset's question
    if preset.page == "pages/Step_by_step.py":
        assert "looking for B" in texts(at)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        (
            '{"name": "x", "description": "y", "question": "q", "look_for": "l", "page": "pages/9_Nope.py"}',
            "does not exist",
        ),
        (
            '{"name": "x", "description": "y", "question": "q", "look_for": "l", "page": "pages/Playground.py", "settings": {"heads": "3", "d_model": "10"}}',
            "heads=3 does not divide",
        ),
        (
            '{"name": "x", "description": "y", "question": "q", "look_for": "l", "page": "pages/Playground.py", "settings": {"colour": "red"}}',
            "unknown parameters",
        ),
        (
            '{"name": "x", "description": "y", "question": "q", "look_for": "l", "page": "pages/Playground.py", "a": {}}',
            "only for the Compare page",
        ),
        (
            '{"name": "x", "description": "y", "question": "q", "look_for": "l", "page": "pages/Step_by_step.py", "matrices": {"wq": "1,nan;0,1"}}',
            "invalid entry",
        ),
        (
            '{"name": "", "description": "y", "question": "q", "look_for": "l", "page": "pages/Playground.py"}',
            "non-empty text field 'name'",
        ),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_preset_is_rejected_with_reason(text, message):
    with pytest.raises(ValueError, match=message):
        parse_preset("bad", text, PAGE_SET)


def test_bad_preset_files_are_skipped_and_reported(tmp_path, monkeypatch):
    (tmp_path / "a_good.json").write_text((ROOT / "presets" / "5_temperature.json").read_text())
    (tmp_path / "b_broken.json").write_text("{oops")
    (tmp_path / "c_bad_heads.json").write_text(
        json.dumps(
            {
                "name": "x",
                "description": "y",
                "question": "q",
                "look_for": "l",
                "page": "pages/Playground.py",
                "settings": {"heads": 7},
            }
        )
    )
    presets, errors = load_presets(tmp_path, PAGE_SET)
    assert [p.name for p in presets] == ["Temperature"]
    assert [e.split(":")[0] for e in errors] == ["b_broken.json", "c_bad_heads.json"]
    monkeypatch.setattr("ui.classroom.presets.PRESETS_DIR", tmp_path)
    at = run_ok(app("streamlit_app.py"))
    warnings = [w.value for w in at.warning]
    assert any("b_broken.json" in w for w in warnings) and any("c_bad_heads.json" in w for w in warnings)
    assert [b.key for b in at.button if b.key.startswith("preset_")] == ["preset_a_good"]


def test_share_link_round_trips():
    at = run_ok(app("pages/Playground.py", {"seq_len": "6", "heads": "2", "mask": "causal", "temperature": "0.5"}))
    link = at.sidebar.code[0].value
    query = dict(parse_qsl(urlsplit(link).query))
    again = run_ok(app("pages/Playground.py", query))
    assert again.session_state["whatif"] == at.session_state["whatif"]
    step = run_ok(app("pages/Step_by_step.py"))
    step.session_state["sbs_W_q_0"] = {"edited_rows": {0: {"0": 2.0}}, "added_rows": [], "deleted_rows": []}
    run_ok(step)
    link = step.sidebar.code[0].value
    assert "wq=2%2C1%3B0%2C1" in link
    reopened = run_ok(app("pages/Step_by_step.py", dict(parse_qsl(urlsplit(link).query))))
    np.testing.assert_array_equal(reopened.session_state["sbs_good"]["W_q"], [[2, 1], [0, 1]])


def test_csv_exports_have_labels_and_numbers():
    run = run_whatif(WhatIf(seq_len=3, d_model=4, n_heads=2, input_kind="sentence", sentence="a <b> a"))
    w = weights_csv(run).splitlines()
    assert w[0] == "head,query,query_token,key,key_token,weight" and len(w) == 1 + 2 * 3 * 3
    assert w[1].startswith("1,1,a,1,a,")
    assert float(w[2].split(",")[-1]) == pytest.approx(float(run.weights[0, 0, 1]), rel=1e-6)
    q = qkv_csv(run).splitlines()
    assert q[0] == "matrix,head,position,token,d0,d1" and len(q) == 1 + 3 * 2 * 3
    z = output_csv(run).splitlines()
    assert z[0] == "position,token,z0,z1,z2,z3" and z[2].startswith("2,<b>,")


@pytest.mark.parametrize(
    "cfg",
    [
        WhatIf(),
        WhatIf(input_kind="sentence", sentence="it was it, wasn't it", mask="causal", scaled=False, temperature=0.5),
        WhatIf(
            input_kind="one_hot", seq_len=6, d_model=4, n_heads=2, mask="causal+padding", pad_count=2, positional=True
        ),
    ],
    ids=["default", "sentence-causal", "one-hot-padding-pe"],
)
def test_reproduce_snippets_print_the_pages_weights(cfg, tmp_path):
    at = app("pages/Playground.py", to_query_params(cfg))
    at.session_state["pg_scripts"] = True  # the reader opened "Show the reproduce scripts" (sent only then)
    run_ok(at)
    assert at.session_state["whatif"] == cfg
    codes = [c.value.strip() for c in at.code]
    assert (
        snippet_core(cfg).strip() in codes and snippet_torch(cfg).strip() in codes
    )  # what the page offers is what we run
    page_weights = run_whatif(cfg).weights
    for name, src in (("core.py", snippet_core(cfg)), ("torch_only.py", snippet_torch(cfg))):
        path = tmp_path / name
        path.write_text(src)
        out = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 0, out.stderr
        heads = parse_printed_weights(out.stdout)
        assert len(heads) == cfg.n_heads
        n = min(16, page_weights.shape[1])
        for h, printed in enumerate(heads):
            np.testing.assert_allclose(printed, page_weights[h][:n, :n], atol=2e-6)
    assert "attention_core" not in snippet_torch(cfg)


def test_classroom_mode_hides_then_reveals():
    """The Playground asks a question a student can reason out (what turning the scaling off does to a head), hides
    the maps and the saturation that answer it, and asks again for another head."""
    at = run_ok(app("pages/Playground.py"))
    at.sidebar.toggle(key="classroom_on").set_value(True)
    run_ok(at)
    assert not any(t.startswith("head ") for t in chart_titles(at))
    assert "If you turned scaling off, would its rows get sharper, softer or stay the same?" in texts(at)
    assert "Softmax saturation of head" not in texts(at)  # the twin's numbers would answer it
    at.radio(key="guess_playground.twin").set_value(1)  # "softer": unscaled is sharper, so wrong
    at.button(key="reveal_playground.twin").click()
    run_ok(at)
    assert sum(t.startswith("head ") for t in chart_titles(at)) == 4
    assert any("Not this time: you predicted **softer**" in w.value and "**sharper**" in w.value for w in at.warning)
    at.selectbox(key="pg_head").set_value(1)  # another head: asked again
    run_ok(at)
    assert not any(t.startswith("head ") for t in chart_titles(at))
    at.radio(key="guess_playground.twin").set_value(0)
    at.button(key="reveal_playground.twin").click()
    run_ok(at)
    assert any(s.value.startswith("Right: you predicted **sharper**") for s in at.success), [
        s.value for s in at.success
    ]
    at.switch_page("pages/Step_by_step.py")
    run_ok(at)
    assert at.sidebar.toggle(key="classroom_on").value is True
    assert not any("row sum" in t.columns for t in tables(at))
    shown = texts(at)  # the booster's sentence keeps query 1's weights back too: they would answer the question
    assert "The key booster" in shown and "appear with the others after your prediction" in shown
    assert "0.997" not in shown and "5. Scores" not in shown
    at.button(key="reveal_step.key").click()  # nothing chosen: the page asks for a choice, it reveals nothing
    run_ok(at)
    assert "Choose one of the answers first" in texts(at) and "5. Scores S" not in texts(at)
    at.radio(key="guess_step.key").set_value(2)
    at.button(key="reveal_step.key").click()
    run_ok(at)
    shown = texts(at)
    assert "Right: you predicted **B3**" in shown
    assert "query A1 puts **0.997** of its weight on B3 with W_k = 10·I" in shown and "5. Scores S" in shown
