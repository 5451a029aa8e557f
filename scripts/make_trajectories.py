"""Regenerate the shipped trajectories of the Train page's ready experiments from their seeds, or check them.

    .venv/bin/python scripts/make_trajectories.py            # write every file in trajectories/
    .venv/bin/python scripts/make_trajectories.py --check    # retrain and compare with the shipped files
    .venv/bin/python scripts/make_trajectories.py --check --steps 200 --only induction_2layer   # a prefix
    .venv/bin/python scripts/make_trajectories.py --check --strict   # fail unless every bit is the same

A rerun is bit for bit the shipped run where torch's float32 kernels are those that made the files (on an AMD
EPYC): one thread, ATen's AVX2 kernels (the script asks for them before torch is imported: an AVX-512 CPU's own
kernels round differently, log_softmax first; set ATEN_CPU_CAPABILITY yourself to choose otherwise) and the
same matrix products from MKL. MKL picks its sgemm code by CPU vendor and model: on an Intel Xeon (Sapphire
Rapids) the first matrix product of step 1 already rounds differently, and none of MKL_CBWR's branches nor
MKL_ENABLE_INSTRUCTIONS rounds as the AMD did (on AMD CPUs MKL honours only MKL_CBWR=AUTO and COMPATIBLE, and
the files were made without it). There the rerun differs by float32 rounding: a loss 1-2 units in the last
place off on some steps, a few weights one float16 step off, no more over all 1500 steps. So --check passes a
run that is ``identical`` or the same within the float32 tolerance below, prints the largest difference of
every array, and fails when it differs by more (one more step, another seed, a learning rate 1% off: 20x or
more); --strict fails unless every bit is the same.
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

# Float32 arrays (losses, accuracies, head scores): the largest |difference| may be this share of the array's
# largest |value|. Other kernels put it at 2.1e-7 (2 float32 units in the last place of a loss of 4.5) after 30
# steps and after 1500; a learning rate 1% off puts it at 2.3e-4 after 30 steps. An accuracy must match exactly
# (one prediction more or less moves it by 1/1,400 or so).
RTOL = 1e-5
# Weights are stored as float16: a float32 weight 1e-7 away from a rounding boundary lands on the neighbouring
# float16, so each may be one float16 step off, or PARAMS_ATOL where that step is smaller (weights below 1e-3
# drifted by up to 2e-7 over 1500 steps). A learning rate 1% off moves some weight 2,700 steps in 25 steps.
PARAMS_ATOL = 1e-6
ARRAYS = ("train_loss", "train_acc", "steps", "params", "heldout_loss", "heldout_acc", "scores")


def _prefix_pairs(shipped, fresh):
    """(name, shipped prefix, fresh array) for every array of a trajectory; ``fresh`` may be a prefix run."""
    n, s = fresh.n_steps, len(fresh.steps)
    for name in ARRAYS:
        upto = n if name.startswith("train") else s
        yield name, getattr(shipped, name)[:upto], getattr(fresh, name)


def _excess(name: str, shipped: np.ndarray, fresh: np.ndarray) -> tuple[float, float]:
    """(largest |difference|, largest difference as a multiple of what the tolerance allows); inf if the shapes,
    the NaN positions or the snapshot steps differ."""
    a, b = shipped.astype(np.float64), fresh.astype(np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return np.inf, np.inf
    real = ~np.isnan(a)
    diff = np.abs(a - b)[real]  # (K,) K non-NaN entries
    if diff.size == 0 or not diff.any():
        return 0.0, 0.0
    if name == "steps":
        return float(diff.max()), np.inf
    if name == "params":
        allowed = np.maximum(np.spacing(np.abs(shipped)).astype(np.float64), PARAMS_ATOL)[real]  # (K,)
    else:
        allowed = RTOL * np.abs(a[real]).max()
        if allowed == 0:  # the shipped array is all zeros and the fresh one is not
            return float(diff.max()), np.inf
    return float(diff.max()), float((diff / allowed).max())


def largest_differences(shipped, fresh) -> dict[str, tuple[float, float]]:
    """Per array that is not bit for bit the same: (largest |difference|, that as a multiple of the tolerance)."""
    out = {}
    for name, a, b in _prefix_pairs(shipped, fresh):
        if not np.array_equal(a, b, equal_nan=True):
            out[name] = _excess(name, a, b)
    return out


def compare_prefix(shipped, fresh, strict: bool = True) -> list[str]:
    """Names of the arrays where ``fresh`` (possibly a prefix run) differs from ``shipped``: in any bit
    (``strict``, what the file writer demands), or beyond the float32 tolerance (RTOL, PARAMS_ATOL)."""
    bad = [] if shipped.cfg == fresh.cfg else ["cfg"]
    return bad + [k for k, (_, ratio) in largest_differences(shipped, fresh).items() if strict or ratio > 1]


def describe(shipped, fresh) -> str:
    """The verdict of --check for one run, with the largest difference of every array that is not identical."""
    diffs = largest_differences(shipped, fresh)
    bad = compare_prefix(shipped, fresh, strict=False)
    detail = ", ".join(f"{k} {d:.2g} ({ratio:.2g}x allowed)" for k, (d, ratio) in diffs.items())
    if bad:
        return f"DIFFERS in {bad}: largest differences {detail or 'none'}"
    if diffs:
        return f"same within float32 tolerance, not bit for bit: largest differences {detail}"
    return "identical"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(READY_BY_NAME), action="append", help="only this experiment")
    parser.add_argument("--check", action="store_true", help="compare with the shipped files instead of writing")
    parser.add_argument("--steps", type=int, default=None, help="train only this many steps (with --check)")
    parser.add_argument("--strict", action="store_true", help="with --check: fail unless bit for bit")
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
            shipped = load_trajectory(ready_path(exp.name))
            print(f"{exp.name}: {traj.n_steps} steps in {secs:.1f} s: {describe(shipped, traj)}")
            status |= bool(compare_prefix(shipped, traj, strict=args.strict))
            continue
        path = save_trajectory(traj, ready_path(exp.name))
        if compare_prefix(load_trajectory(path), traj):  # the file must hold the run bit for bit
            raise RuntimeError(f"{path} does not read back as the run just written")
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
