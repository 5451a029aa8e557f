"""scripts/make_trajectories.py: regenerating the shipped runs matches them, to the bit where torch's float32
kernels are those that made the files, and within a float32 tolerance that a real change clearly exceeds."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_core.training import Trainer
from attention_core.training.ready import READY, ready_path
from attention_core.training.trajectory import from_trainer, load_trajectory

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_trajectories.py"
CHECK_STEPS = 30


@pytest.fixture(scope="module")
def script():
    """The script as a module (its ATEN_CPU_CAPABILITY default is not left in this process's environment)."""
    spec = importlib.util.spec_from_file_location("make_trajectories", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ATEN_CPU_CAPABILITY", raising=False)
        spec.loader.exec_module(module)
    torch.set_num_threads(1)
    return module


def prefix_run(cfg, steps: int = CHECK_STEPS, extra_step: bool = False):
    """The first ``steps`` steps of ``cfg``; with ``extra_step`` a run that took one optimiser step more than it
    records (the bug of a loop that steps once before it starts counting)."""
    trainer = Trainer(cfg)
    if extra_step:
        trainer.train(1)
        trainer.step, trainer.snapshots = 0, [trainer.snapshot()]
        trainer.train_loss.clear()
        trainer.train_acc.clear()
    return from_trainer(trainer.train(steps))


def test_regenerating_a_shipped_trajectory_reproduces_it_to_float32_rounding(script):
    """--check retrains the first 30 steps of every ready run in its own process (torch picks its CPU kernels
    once per process; the script asks for AVX2 before importing torch, as the files were made) and passes
    only if every array is bit for bit the shipped one ("identical") or within the float32 tolerance. On this
    Intel Xeon MKL's matrix products round differently from the AMD EPYC that made the files: a loss 1-2 units
    in the last place off, one weight one float16 step off."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--steps", str(CHECK_STEPS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "torch kernels: AVX2" in out.stdout or "torch kernels: DEFAULT" in out.stdout  # never AVX-512's
    for exp in READY:
        line = next(x for x in out.stdout.splitlines() if x.startswith(f"{exp.name}: {CHECK_STEPS} steps in"))
        assert line.endswith(": identical") or ": same within float32 tolerance, not bit for bit" in line, line


def test_strict_mode_demands_every_bit_and_the_tolerance_forgives_rounding(script):
    shipped = load_trajectory(ready_path(READY[0].name))
    assert shipped.cfg == READY[0].cfg and shipped.n_steps == READY[0].cfg.steps
    assert script.compare_prefix(shipped, shipped) == [] and script.describe(shipped, shipped) == "identical"
    rounded = dataclasses.replace(shipped, train_loss=np.nextafter(shipped.train_loss, np.float32(np.inf)))
    assert script.compare_prefix(shipped, rounded) == ["train_loss"]  # one float32 step anywhere is a difference
    assert script.compare_prefix(shipped, rounded, strict=False) == []  # ... and within the tolerance
    flipped = np.array(shipped.params)
    flipped[5, 7] = np.nextafter(flipped[5, 7], np.float16(np.inf))  # a weight rounded to the next float16
    assert script.compare_prefix(shipped, dataclasses.replace(shipped, params=flipped), strict=False) == []
    flipped[5, 7] = np.nextafter(flipped[5, 7], np.float16(np.inf))  # two float16 steps on a weight of -2.1
    assert float(shipped.params[5, 7]) == pytest.approx(-2.1, abs=1e-3)
    assert script.compare_prefix(shipped, dataclasses.replace(shipped, params=flipped), strict=False) == ["params"]
    other_cfg = dataclasses.replace(shipped, cfg=shipped.cfg.replace(seed=1))
    assert script.compare_prefix(shipped, other_cfg, strict=False) == ["cfg"]


CHANGES = {
    "another seed": lambda cfg: prefix_run(cfg.replace(seed=cfg.seed + 1)),
    "learning rate 1% higher": lambda cfg: prefix_run(cfg.replace(lr=cfg.lr * 1.01)),
    "one more training step": lambda cfg: prefix_run(cfg, extra_step=True),
}


def test_a_rerun_on_other_kernels_is_well_inside_the_tolerance(script):
    """This process's own rerun (no AVX2 request: on an AVX-512 CPU its log_softmax rounds differently too) passes,
    every float32 array below a tenth of the tolerance (measured here: 0.01-0.02)."""
    exp = READY[1]  # the 1-layer run: 30 steps in 0.3 s
    shipped = load_trajectory(ready_path(exp.name))
    same = prefix_run(exp.cfg)
    assert script.compare_prefix(shipped, same, strict=False) == []
    largest = script.largest_differences(shipped, same)
    assert all(ratio < 0.1 for name, (_, ratio) in largest.items() if name != "params"), largest


@pytest.mark.parametrize("change", CHANGES)
def test_a_real_change_fails_the_check_by_far(script, change):
    """Each change fails by more than 10x the tolerance on the loss curves and the weights (measured: 20x or
    more for a 1% learning rate, 100x or more for a seed or one more step)."""
    exp = READY[1]
    shipped = load_trajectory(ready_path(exp.name))
    changed = dataclasses.replace(CHANGES[change](exp.cfg), cfg=exp.cfg)  # only the arrays can tell
    bad = script.compare_prefix(shipped, changed, strict=False)
    assert {"train_loss", "heldout_loss", "params"} <= set(bad), bad
    largest = script.largest_differences(shipped, changed)
    assert min(largest[name][1] for name in ("train_loss", "heldout_loss", "params")) > 10, largest
    assert script.describe(shipped, changed).startswith("DIFFERS in ")


def test_the_writer_reads_every_file_back_bit_for_bit(script, tmp_path, monkeypatch, capsys):
    """Writing (no --check) saves each run and reads it back in strict mode: a file that lost a bit is an error."""
    run = prefix_run(READY[1].cfg, steps=3)
    monkeypatch.setattr(script, "generate", lambda name, steps=None: run)
    monkeypatch.setattr(script, "ready_path", lambda name: tmp_path / f"{name}.npz")
    assert script.main(["--only", READY[1].name]) == 0
    assert script.compare_prefix(load_trajectory(tmp_path / f"{READY[1].name}.npz"), run) == []
    assert f"{READY[1].name}: 3 steps in" in capsys.readouterr().out
    save = script.save_trajectory
    lossy = dataclasses.replace(run, train_loss=np.nextafter(run.train_loss, np.float32(np.inf)))
    monkeypatch.setattr(script, "save_trajectory", lambda traj, path: save(lossy, path))
    with pytest.raises(RuntimeError, match="does not read back"):
        script.main(["--only", READY[1].name])
