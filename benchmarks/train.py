"""Speed of the Train page's work, one thread: a training step plus the redraw of the live views at the
default size, the induction phase change in wall time, and opening the ready experiments from the shipped
trajectories.

    .venv/bin/python -m benchmarks.train [--skip-landmark]

Targets (issue 13): step + redraw <= 100 ms; the phase change within 30 s on 2 cores; ready runs open < 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from attention_core.training import TrainConfig, Trainer
from attention_core.training.ready import READY, ready_path
from attention_core.training.trajectory import from_trainer, load_trajectory
from benchmarks._timing import median_ms, table
from ui.training import phase_change_step, snapshot_view
from ui.training_views import curve_frame, curves_chart, qk_chart, score_frame, scores_chart


def redraw(trainer: Trainer, playing: bool = True) -> None:
    """What the live fragment computes on every rerun besides the training chunk: the run as a trajectory
    (with the current state evaluated), the curve and score frames and chart specs, maps, parity, q/k picture."""
    traj = from_trainer(trainer, current=not playing)  # paused: the current state is evaluated too
    df, sf = curve_frame(traj, "live"), score_frame(traj, "live")
    for metric in ("loss", "accuracy"):
        json.dumps(curves_chart(df, metric, metric))
    for score in dict.fromkeys(sf["score"]):
        json.dumps(scores_chart(sf, score, score))
    view = snapshot_view(traj.cfg, traj.params[-1], 1, 0)
    json.dumps(qk_chart(view.qk, view.tokens))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-landmark", action="store_true", help="skip the phase-change run (about 15-30 s)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    trainer = Trainer(TrainConfig())
    trainer.train(50)
    step_ms = median_ms(lambda: trainer.train(1), repeat=30, warmup=3)
    redraw_ms = median_ms(lambda: redraw(trainer), repeat=7, warmup=1)
    paused_ms = median_ms(lambda: redraw(trainer, playing=False), repeat=7, warmup=1)
    rows += [
        ["one training step (2 layers x 2 heads x d_model 32, batch 64)", f"{step_ms:.1f} ms", ""],
        ["redraw while playing (frames, charts, maps, parity, q/k)", f"{redraw_ms:.1f} ms", ""],
        ["step + redraw", f"{step_ms + redraw_ms:.1f} ms", "<= 100 ms"],
        ["redraw when paused (also evaluates the current step)", f"{paused_ms:.1f} ms", ""],
    ]
    if not args.skip_landmark:
        t0, tr = time.perf_counter(), Trainer(TrainConfig())
        cliff = None
        while cliff is None and tr.step < 3000:
            tr.train(25)
            cliff = phase_change_step(from_trainer(tr))  # the page's own detector, one trajectory per check
        secs = time.perf_counter() - t0
        rows.append(
            [f"induction phase change detected (step {cliff}, found at step {tr.step})", f"{secs:.1f} s", "<= 30 s"]
        )
    for exp in READY:

        def open_ready(name=exp.name):
            traj = load_trajectory(ready_path(name))
            curve_frame(traj), score_frame(traj)
            snapshot_view(traj.cfg, traj.params[-1], traj.cfg.n_layers - 1, 0)

        rows.append(
            [
                f"open ready run {exp.name} (load, frames, last snapshot's views; uncached)",
                f"{median_ms(open_ready, repeat=3, warmup=1):.0f} ms",
                "< 1 s",
            ]
        )
    print(f"torch threads: {torch.get_num_threads()}, load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(table(["what", "time", "target"], rows))


if __name__ == "__main__":
    main()
