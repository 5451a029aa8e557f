"""The Train page's sentences (ui/lessons/train/text.py) at their edges; tests/test_app_train.py reads them on screen."""

import numpy as np

from attention_core.training import TrainConfig
from attention_core.training.trajectory import Trajectory
from ui.lessons.train.text import (
    check_questions,
    live_phase_change_sentence,
    live_step_sentence,
    phase_change_sentence,
    probe_caption,
    server_status,
)


def run(loss: list[float], acc: float = 0.5) -> Trajectory:
    """A run with a snapshot every 100 steps and these held-out losses (nothing else is read)."""
    s = len(loss)
    return Trajectory(
        TrainConfig(),
        np.arange(s) * 100,
        np.zeros((s, 1), np.float16),
        np.array(loss, np.float32),
        np.full(s, acc, np.float32),
        np.zeros((s, 2, 2, 3), np.float32),
        np.zeros(s * 100, np.float32),
        np.zeros(s * 100, np.float32),
    )


TWO = run([3.0, 2.9, 2.8, 2.7, 2.6, 2.0, 1.5, 0.5, 0.25, 0.25, 0.125])
ONE = run([3.0, 2.5, 2.375])
PM2 = np.array([0.0, 0.0, 0.0, 0.0, 0.125, 0.5, 0.75, 0.875, 0.9, 0.9, 0.9375])
PM1 = np.array([0.0, 0.125, np.nan])


def test_the_ready_sentence_names_the_cliff_and_whether_one_layer_had_one():
    said = phase_change_sentence((TWO, ONE), (500, None), (PM2, PM1))
    assert said == (
        "With **2 layers** the held-out loss (on sequences never trained on) sat on a plateau (3.00 → 2.60 by step "
        "400), then fell off a cliff at about **step 500** to 0.50 by step 700, as the best head's prefix-matching "
        "score jumped (0.12 → 0.88; 0.94 at step 1000). With **1 layer** the same data and seed never gave one: its "
        "best prefix-matching score reaches only 0.12 and the loss ends at 2.38."
    )
    said = phase_change_sentence((TWO, ONE), (500, 200), (PM2, PM1))
    assert "With **1 layer** the same data and seed gave a phase change at step 200: its best" in said


def test_no_cliff_in_the_two_layer_run_says_so_alone():
    for cliff in (None, 0):  # step 0 counts as none, as on the page
        said = phase_change_sentence((TWO, ONE), (cliff, 200), (PM2, PM1))
        assert said == "No phase change was detected in the shipped two-layer run."


def test_the_live_lines_at_a_spent_budget_and_a_paused_run():
    said = server_status((2, 0), 3000, 3000)
    assert said == "Server: 2 training now, 0 waiting. Your budget: 0 of 3000 live steps left."
    said = live_step_sentence(0, 1, False, ONE)
    assert said == "**Step 0** of 1 (paused); held-out loss 2.375, held-out accuracy 50.0%."
    assert live_step_sentence(7, 40, True, ONE).startswith("**Step 7** of 40 (training);")
    best = np.array([0.125, np.nan, 0.75, 0.5])  # the highest score, not the last, and NaN skipped
    said = live_phase_change_sentence(30, best)
    assert said == "Phase change at about **step 30**: the best head's prefix-matching score went from 0.12 to 0.75."


def test_the_probe_and_the_check_questions():
    said = probe_caption(("SEP", "3", "3′", "3(4)"))
    assert said == (
        "The probe (a fixed test sequence: a run of random tokens repeated, ′ marking each repeat): SEP 3 3′ 3(4). "
        "Rows are queries, columns keys (colour 0 to 1)."
    )
    questions = check_questions()
    assert [q for q, _ in questions] == [
        "Why can one layer not form an induction head?",
        "Why do the repeat lengths vary from sequence to sequence?",
    ]
    assert all(answer.endswith(".") for _, answer in questions)
