"""The sentences of the Train page, computed from its runs (attention_core/training) for the setting on screen: each
function is named for what it says, so that pages/Train.py reads as its lesson (the loss, the ready experiment's
phase change, a live run, one snapshot's maps, query/key picture and parity).

Every number comes from the run, its snapshot or its settings; the probe's tokens are the page's own labels
(ui/lessons/train/rationing.probe_labels), never typed text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the types only: the training modules load torch
    from attention_core.training import TrainConfig
    from attention_core.training.trajectory import Trajectory
    from attention_core.training.views import SnapshotView

LOSS_CAPTION = (
    "The **loss**, the number training makes smaller, is the cross-entropy of the next token: minus the log of the "
    "probability the model gave the true next token, averaged over the N positions. Training lowers it one step at "
    "a time (a **step**: one update of the weights from one batch of sequences). On a run of p random tokens "
    "repeated, an induction head at a repeated token looks at the token that followed its earlier copy (its "
    "**prefix-matching score**, its weight on such tokens, is then 1), then copies it."
)


def phase_change_sentence(
    runs: tuple[Trajectory, Trajectory], cliffs: tuple[int | None, int | None], best: tuple[np.ndarray, np.ndarray]
) -> str:
    """The ready experiment: the two-layer run's plateau, its cliff and its best head's prefix-matching jump,
    against the one-layer run's (or that no phase change was found). Each pair is (2 layers, 1 layer)."""
    (two, one), (cliff, cliff_one), (pm2, pm1) = runs, cliffs, best
    before = two.index_at(cliff - 100) if cliff else 0
    after = two.index_at(cliff + 200) if cliff else -1
    return (
        f"With **2 layers** the held-out loss (on sequences never trained on) sat on a plateau ({two.heldout_loss[0]:.2f} → "
        f"{two.heldout_loss[before]:.2f} by step {two.steps[before]}), then fell off a cliff at about "
        f"**step {cliff}** to {two.heldout_loss[after]:.2f} by step {two.steps[after]}, as the best head's "
        f"prefix-matching score jumped ({pm2[before]:.2f} → {pm2[after]:.2f}; {pm2[-1]:.2f} at step "
        f"{two.steps[-1]}). With **1 layer** the same data and seed "
        + (f"gave a phase change at step {cliff_one}" if cliff_one else "never gave one")
        + f": its best prefix-matching score reaches only {np.nanmax(pm1):.2f} and the loss ends at "
        f"{one.heldout_loss[-1]:.2f}."
        if cliff
        else "No phase change was detected in the shipped two-layer run."
    )


def ready_runs_caption(c: TrainConfig) -> str:
    """Under the ready experiment: both runs' settings, and where the red dashed line (the phase change) is put."""
    return (
        f"Both runs: attention only (no feed-forward layers), {c.n_heads} heads x d_model {c.d_model}, vocab "
        f"{c.vocab} (kinds of token), context {c.context} (tokens per sequence), AdamW (the optimiser: the rule that "
        f"updates the weights) with learning rate lr {c.lr:g} (how far one step moves the weights), batch {c.batch} (sequences per step), seed {c.seed}, "
        "repeat lengths 4-16 per sequence, "
        f"{c.steps} steps; the red dashed line is the phase change, found where the best head's prefix-matching "
        "score first crosses halfway from its start to its maximum. A head's previous-token score is its mean weight "
        "on the token just before."
    )


def probe_caption(tokens: tuple[str, ...]) -> str:
    """Under the head maps: what the probe is, its tokens, and how to read the maps."""
    return (
        f"The probe (a fixed test sequence: a run of random tokens repeated, ′ marking each repeat): "
        f"{' '.join(tokens)}. Rows are queries, columns keys (colour 0 to 1)."
    )


QK_LABELLED = 6  # the query/key picture writes the tokens of this many of its strongest query -> key lines


def query_key_caption(explained: float) -> str:
    """Under the query/key picture: how the points were moved and projected, the share of their spread the
    plane keeps (``explained``), and what the lines mean."""
    return (
        f"Keys moved to the queries' centroid (their mean point) and q, k rescaled to the same mean length (neither "
        f"changes a softmax row), then one PCA (principal component analysis: the plane in which the points spread "
        f"most) of both clouds: the two axes keep {explained:.0%} of the points' spread (variance). "
        "Lines join each query to its two most attended keys (darker = more weight); the tokens are written at the "
        f"ends of the {QK_LABELLED} strongest lines only (hover any point for its token). After AttentionViz "
        "(Yeh et al., 2023)."
    )


def parity_sentence(step: int, cfg: TrainConfig, view: SnapshotView) -> str:
    """attention_core's NumPy attention against the model's own at ``step``: the largest difference over all heads,
    in float64 and with the model in float32."""
    return (
        f"**Parity at step {step}:** attention_core's NumPy `multi_head_attention`, given the model's own "
        f"W_q, W_k, W_v, W_o and each layer's own input, recomputes all {cfg.n_layers * cfg.n_heads} heads' "
        f"weights with a largest difference of **{view.parity:.1e}** (both in float64; "
        f"{view.parity32:.1e} with the model in float32 as it trains)."
    )


def queue_notice(limit: int, place: int) -> str:
    """While a live run waits: how many trainings run, this session's place in the queue, and what still works."""
    return (
        f"⏳ {limit} trainings are running on this server; you are number {place} in the queue. "
        "Your run starts by itself when a place is free (the ready experiment is instant meanwhile)."
    )


def budget_warning(budget: int) -> str:
    """When the session has spent its ``budget`` of live steps: why, and what still works."""
    return (
        f"This session has used its {budget} live training steps (the server is shared by the class). "
        "The ready experiment and the scrubber still work."
    )


def live_step_sentence(step: int, steps: int, playing: bool, traj: Trajectory) -> str:
    """The live run's step of ``steps``, whether it trains, and its newest held-out loss and accuracy."""
    status = "training" if playing else "paused"
    return (
        f"**Step {step}** of {steps} ({status}); held-out loss "
        f"{traj.heldout_loss[-1]:.3f}, held-out accuracy {traj.heldout_acc[-1]:.1%}."
    )


def server_status(queue: tuple[int, int], used: int, budget: int) -> str:
    """Who trains on the server and who waits (``queue``: QUEUE.status()), and what is left of the session's
    ``budget`` of live steps after ``used``."""
    running, waiting = queue
    return (
        f"Server: {running} training now, {waiting} waiting. Your budget: {budget - used} of {budget} live steps left."
    )


def live_phase_change_sentence(cliff: int, best: np.ndarray) -> str:
    """The live run's phase change: its step and how far the best head's prefix-matching score rose."""
    return (
        f"Phase change at about **step {cliff}**: the best head's prefix-matching score went from "
        f"{best[0]:.2f} to {np.nanmax(best):.2f}."
    )


def check_questions() -> list[tuple[str, str]]:
    """The page's check questions: why one layer cannot form an induction head, and why the repeat lengths vary."""
    return [
        (
            "Why can one layer not form an induction head?",
            'An induction head needs two steps: a previous-token head writes "the token before me was X" into each '
            "position, and a head in the next layer matches the current token against that. With one layer the keys "
            'only know their own token and position, so no head can look for "the token after my earlier copy".',
        ),
        (
            "Why do the repeat lengths vary from sequence to sequence?",
            "With a fixed period p the target is always p − 1 positions back, and one layer fakes induction with a "
            "fixed-offset positional head; varying p forces the content-based two-layer circuit (heads of two layers working as one).",
        ),
    ]
