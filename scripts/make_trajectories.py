"""Regenerate the shipped trajectories of the Train page's ready experiments, bit for bit, from their seeds.

    .venv/bin/python scripts/make_trajectories.py            # write every file in trajectories/
    .venv/bin/python scripts/make_trajectories.py --check    # retrain and compare with the shipped files
    .venv/bin/python scripts/make_trajectories.py --check --steps 200 --only induction_2layer   # a prefix

Torch runs on one thread: that is what makes the runs reproducible.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_core.training.ready import READY, READY_BY_NAME, generate, ready_path  # noqa: E402
from attention_core.training.trajectory import find_phase_change, load_trajectory, save_trajectory  # noqa: E402


def compare_prefix(shipped, fresh) -> list[str]:
    """Names of the arrays where ``fresh`` (possibly a prefix run) differs from ``shipped``."""
    n, s = fresh.n_steps, len(fresh.steps)
    bad = []
    if shipped.cfg != fresh.cfg:
        bad.append("cfg")
    for name in ("train_loss", "train_acc"):
        if not np.array_equal(getattr(shipped, name)[:n], getattr(fresh, name)):
            bad.append(name)
    for name in ("steps", "params", "heldout_loss", "heldout_acc", "scores"):
        if not np.array_equal(getattr(shipped, name)[:s], getattr(fresh, name), equal_nan=True):
            bad.append(name)
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(READY_BY_NAME), action="append", help="only this experiment")
    parser.add_argument("--check", action="store_true", help="compare with the shipped files instead of writing")
    parser.add_argument("--steps", type=int, default=None, help="train only this many steps (with --check)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    status = 0
    for exp in READY:
        if args.only and exp.name not in args.only:
            continue
        t0 = time.perf_counter()
        traj = generate(exp.name, args.steps if args.check else None)
        secs = time.perf_counter() - t0
        if args.check:
            bad = compare_prefix(load_trajectory(ready_path(exp.name)), traj)
            verdict = "identical" if not bad else f"DIFFERS in {bad}"
            print(f"{exp.name}: {traj.n_steps} steps in {secs:.1f} s: {verdict}")
            status |= bool(bad)
            continue
        path = save_trajectory(traj, ready_path(exp.name))
        best = np.nanmax(traj.scores[..., 1], axis=(1, 2))
        cliff = find_phase_change(traj.steps, best)
        print(
            f"{exp.name}: {traj.n_steps} steps in {secs:.1f} s, {path.stat().st_size / 1e6:.2f} MB, "
            f"held-out loss {traj.heldout_loss[0]:.2f} -> {traj.heldout_loss[-1]:.2f}, "
            f"best prefix-matching {best[-1]:.2f}, phase change at step {cliff}"
        )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
