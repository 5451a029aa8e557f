"""Regenerate the shipped trajectories of the Train page's ready experiments, bit for bit, from their seeds.

    .venv/bin/python scripts/make_trajectories.py            # write every file in trajectories/
    .venv/bin/python scripts/make_trajectories.py --check    # retrain and compare with the shipped files
    .venv/bin/python scripts/make_trajectories.py --check --steps 200 --only induction_2layer   # a prefix

Torch runs on one thread, and on its AVX2 kernels where the CPU has them: that is what makes the runs
reproducible. The files were made with the AVX2 kernels; an AVX-512 CPU's own kernels round some float32 sums
differently (a loss 5e-7 off from step 1 on), so the script asks torch for AVX2 before torch is imported. Set
ATEN_CPU_CAPABILITY yourself to choose otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # read by torch at its first kernel: before the import

import numpy as np  # noqa: E402
import torch  # noqa: E402

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
    print(f"torch kernels: {torch.backends.cpu.get_cpu_capability()}, one thread")
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
