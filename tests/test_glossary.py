"""The words for how attention looks are defined once (ui/glossary.py), with the thresholds attention_core uses, and
the pages say them with the numbers that decide them."""

from pathlib import Path

import pytest

from attention_core import WhatIf, run_whatif, saturation_metrics
from attention_core.readout import (
    NEARLY_UNIFORM_BELOW,
    PEAKED_FROM,
    SHARP_FROM,
    SHARPNESS_LEVELS,
    sharpness,
    uniform_max_weight,
)
from tests.apptest_util import app, run_ok, texts
from ui import glossary

ROOT = Path(__file__).resolve().parents[1]


def test_the_scale_states_the_thresholds_attention_core_uses(monkeypatch):
    said = glossary.scale_sentence()
    for t in (NEARLY_UNIFORM_BELOW, PEAKED_FROM, SHARP_FROM):
        assert f"{t:g}" in said
    monkeypatch.setattr(glossary, "PEAKED_FROM", 0.37)
    assert "**soft** below 0.37" in glossary.scale_sentence()  # said from the constant, not copied
    assert set(glossary.MEANINGS) == set(SHARPNESS_LEVELS)
    assert glossary.position(0.25, 0.25) == 0 and glossary.position(1.0, 0.25) == 1


def test_no_page_calls_less_than_half_of_the_weight_most():
    for path in [
        ROOT / "streamlit_app.py",
        *sorted((ROOT / "pages").glob("*.py")),
        *sorted((ROOT / "ui").rglob("*.py")),
    ]:
        assert "takes most of a row" not in path.read_text(), path


@pytest.mark.parametrize("query", [{}, {"temperature": "0.1"}, {"temperature": "10"}, {"seq_len": "1"}])
def test_the_playground_names_the_level_with_the_number_that_decides_it(query):
    at = run_ok(app("pages/Playground.py", query))
    cfg = WhatIf(**{k: {"temperature": float, "seq_len": int}[k](v) for k, v in query.items()})
    run = run_whatif(cfg)
    m = saturation_metrics(run.weights[0]).summary()["max_weight"]
    uniform = uniform_max_weight(run.mask, run.T, run.T)
    level = sharpness(m, uniform)
    shown = texts(at)
    assert f"Head 1 is **{level}** here" in shown and glossary.MEANINGS[level] in shown
    if uniform < 1:
        assert f"(r = {glossary.position(m, uniform):.3g})" in shown
    assert "How sharp rows are, in words" in shown  # the words on this page, with their thresholds
