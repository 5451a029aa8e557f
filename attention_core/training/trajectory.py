"""A finished (or paused) run as plain arrays: save it, load it, find its phase change.

A :class:`Trajectory` is what the page scrubs and what ``scripts/make_trajectories.py`` ships in
``trajectories/*.npz``: per-step training curves, and per snapshot the weights (float16), the held-out
metrics and the head scores. Everything else (attention maps, the query/key picture, parity) is
recomputed from the weights.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .config import TrainConfig
from .trainer import Snapshot, Trainer

FORMAT = 1  # bumped when the file layout changes


@dataclass(frozen=True)
class Trajectory:
    """A run's curves and snapshots (read-only arrays). S snapshots, N steps, P parameters."""

    cfg: TrainConfig  # the run's settings (seed included)
    steps: np.ndarray  # (S,) int64 step of each snapshot
    params: np.ndarray  # (S, P) float16 weights at each snapshot
    heldout_loss: np.ndarray  # (S,) float32
    heldout_acc: np.ndarray  # (S,) float32
    scores: np.ndarray  # (S, L, H, 3) float32 head scores (see scores.SCORE_NAMES)
    train_loss: np.ndarray  # (N,) float32 loss of the batch of every step 1..N
    train_acc: np.ndarray  # (N,) float32

    @property
    def n_steps(self) -> int:
        """Steps taken."""
        return int(self.train_loss.shape[0])

    def snapshot(self, index: int) -> Snapshot:
        """The index-th snapshot (negative counts from the end)."""
        s = len(self.steps)
        if not -s <= index < s:
            raise ValueError(f"snapshot index {index} out of range; this run has {s} snapshots")
        return Snapshot(
            int(self.steps[index]),
            self.params[index],
            float(self.heldout_loss[index]),
            float(self.heldout_acc[index]),
            self.scores[index],
        )

    def index_at(self, step: int) -> int:
        """Index of the last snapshot at or before ``step``."""
        return max(0, int(np.searchsorted(self.steps, step, side="right")) - 1)


def from_trainer(trainer: Trainer, current: bool = False) -> Trajectory:
    """The trainer's run so far as a :class:`Trajectory` (copies); with ``current`` the present state is
    appended as a last snapshot when it is not one already (after single steps between snapshots)."""
    snaps = trainer.snapshots
    if current and snaps[-1].step != trainer.step:
        snaps = [*snaps, trainer.snapshot()]
    return Trajectory(
        cfg=trainer.cfg,
        steps=np.array([s.step for s in snaps], dtype=np.int64),
        params=np.stack([s.params for s in snaps]).astype(np.float16),
        heldout_loss=np.array([s.heldout_loss for s in snaps], dtype=np.float32),
        heldout_acc=np.array([s.heldout_acc for s in snaps], dtype=np.float32),
        scores=np.stack([s.scores for s in snaps]).astype(np.float32),
        train_loss=np.array(trainer.train_loss, dtype=np.float32),
        train_acc=np.array(trainer.train_acc, dtype=np.float32),
    )


_ARRAYS = ("steps", "params", "heldout_loss", "heldout_acc", "scores", "train_loss", "train_acc")


def save_trajectory(traj: Trajectory, path) -> Path:
    """Write ``traj`` to a compressed ``.npz`` (its config as JSON inside)."""
    path = Path(path)
    meta = json.dumps({"format": FORMAT, "config": asdict(traj.cfg)}, sort_keys=True)
    np.savez_compressed(path, meta=np.array(meta), **{name: getattr(traj, name) for name in _ARRAYS})
    return path


def load_trajectory(path) -> Trajectory:
    """Read a file written by :func:`save_trajectory`; raises ValueError on a file of another layout."""
    with np.load(Path(path), allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path}: trajectory format {meta.get('format')!r}, expected {FORMAT}")
        arrays = {name: data[name] for name in _ARRAYS}
    for a in arrays.values():
        a.flags.writeable = False
    return Trajectory(cfg=TrainConfig(**meta["config"]), **arrays)


def find_phase_change(steps, score, min_rise: float = 0.3) -> int | None:
    """The step where a score jumps: where it first crosses halfway from its start to its maximum.

    Args:
        steps: ``(S,)`` snapshot steps; score: ``(S,)`` a score at those steps (e.g. the best head's
            prefix-matching score).
        min_rise: the maximum must exceed the start by at least this much, else there is no phase change.

    Returns:
        The first step at or above the midpoint, or None when the score never rose by ``min_rise``.
    """
    steps, score = np.asarray(steps), np.asarray(score, dtype=np.float64)
    if steps.shape != score.shape or steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"steps and score must be 1-D of the same length; got {steps.shape} and {score.shape}")
    finite = np.isfinite(score)
    if not finite.any():
        return None
    start, top = score[finite][0], np.nanmax(score)
    if top - start < min_rise:
        return None
    above = np.flatnonzero(finite & (score >= start + 0.5 * (top - start)))
    return int(steps[above[0]])
