"""The ready experiments: runs shipped precomputed in ``trajectories/`` so a class opens them instantly.

The landmark (Olsson et al., 2022): an attention-only transformer with 2 layers x 2 heads x d_model 32
(13k parameters) on induction with repeat lengths 4-16 sits on a loss plateau, then drops off a cliff as
an induction head forms; the same run with one layer never forms one.
``scripts/make_trajectories.py`` regenerates every file from these configs: bit for bit on the CPU kernels that
made them, to float32 rounding on others (its ``--check`` says which).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import TrainConfig
from .trainer import Trainer
from .trajectory import Trajectory, from_trainer

TRAJECTORY_DIR = Path(__file__).resolve().parents[2] / "trajectories"


@dataclass(frozen=True)
class ReadyExperiment:
    """One shipped run."""

    name: str  # file stem in trajectories/ and the value in the page's URL
    label: str  # what the page calls it
    cfg: TrainConfig  # the run's settings, seed included


LANDMARK_STEPS = 1500
READY = (
    ReadyExperiment(
        "induction_2layer",
        "Induction, 2 layers (the landmark)",
        TrainConfig(task="induction", n_layers=2, n_heads=2, d_model=32, steps=LANDMARK_STEPS),
    ),
    ReadyExperiment(
        "induction_1layer",
        "Induction, 1 layer (the control)",
        TrainConfig(task="induction", n_layers=1, n_heads=2, d_model=32, steps=LANDMARK_STEPS),
    ),
)
READY_BY_NAME = {r.name: r for r in READY}


def ready_path(name: str) -> Path:
    """Where the ready experiment ``name`` is shipped."""
    if name not in READY_BY_NAME:
        raise ValueError(f"no ready experiment {name!r}; choose one of {sorted(READY_BY_NAME)}")
    return TRAJECTORY_DIR / f"{name}.npz"


def generate(name: str, steps: int | None = None) -> Trajectory:
    """Train the ready experiment ``name`` from its seed (one thread: bit-identical runs on one machine).

    Args:
        name: one of READY_BY_NAME; steps: train only this many steps (a prefix of the shipped run).
    """
    import torch

    exp = READY_BY_NAME.get(name)
    if exp is None:
        raise ValueError(f"no ready experiment {name!r}; choose one of {sorted(READY_BY_NAME)}")
    n = exp.cfg.steps if steps is None else steps
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= exp.cfg.steps:
        raise ValueError(f"steps must be an integer between 0 and {exp.cfg.steps}; got {steps!r}")
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    return from_trainer(Trainer(exp.cfg).train(n))
