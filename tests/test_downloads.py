"""Download sizes are stated before building, and large runs offer one head's CSV and an .npz instead."""

import io

import numpy as np
import pytest

from attention_core import WhatIf, run_whatif
from tests.apptest_util import app, run_ok
from ui.lessons.playground.downloads import LARGE, human_size, weights_csv_size, weights_npz
from ui.lessons.playground.export import weights_csv


@pytest.mark.parametrize(
    "cfg",
    [WhatIf(), WhatIf(input_kind="sentence", sentence='a, "b" c\u00e9'), WhatIf(seq_len=64, d_model=64, n_heads=16)],
    ids=["default", "quoted", "64x16"],
)
def test_size_estimate_is_within_five_percent(cfg):
    run = run_whatif(cfg)
    for head in (None, 0):
        real = len(weights_csv(run, head=head).encode())
        est = weights_csv_size(run, heads=None if head is None else 1)
        assert abs(est - real) / real < 0.05, (est, real)


def test_one_head_csv_and_npz_hold_the_weights():
    run = run_whatif(WhatIf(seq_len=6, n_heads=4))
    lines = weights_csv(run, head=2).splitlines()
    assert len(lines) == 1 + 36 and lines[1].startswith("3,1,t1,1,t1,")
    data = np.load(io.BytesIO(weights_npz(run)))
    np.testing.assert_array_equal(data["weights"], run.weights.astype(np.float32))
    assert list(data["tokens"]) == run.tokens


def test_human_size():
    assert [human_size(n) for n in (850, 12_345, 3_400_000)] == ["850 bytes", "12 KB", "3.4 MB"]


@pytest.mark.slow
def test_playground_states_sizes_and_splits_large_runs():
    at = run_ok(app("pages/Playground.py"))
    labels = [b.label for b in at.get("download_button")]
    assert any(lab.startswith("Weights (CSV, every head, about ") for lab in labels), labels
    big = {"seq_len": "512", "d_model": "1024", "heads": "16"}
    at = run_ok(app("pages/Playground.py", big))
    labels = [b.label for b in at.get("download_button")]
    run = run_whatif(WhatIf(seq_len=512, d_model=1024, n_heads=16))
    assert weights_csv_size(run) > LARGE
    assert not any("every head, about" in lab and "CSV" in lab and lab.startswith("Weights (") for lab in labels)
    assert any(lab.startswith("Weights of head 1 (CSV, about ") for lab in labels), labels
    assert any(lab.startswith("Weights, every head (.npz, float32, about 16.8 MB") for lab in labels), labels
