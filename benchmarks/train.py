"""Speed of the Train page's work, one thread: a training step plus the redraw of the live views at the
default size, the induction phase change in wall time, and opening the ready experiments from the shipped
trajectories.

    .venv/bin/python -m benchmarks.train [--skip-landmark] [--browser]

Targets (issue 13): step + redraw <= 100 ms; the phase change within 30 s on 2 cores; ready runs open < 1 s.
The phase change is timed twice, and the two differ: the training loop alone (this process, no server, no
browser), and with ``--browser`` the page itself: `streamlit run` and headless Chromium on the same cores, Play
pressed on the default live run, until the page says "Phase change at about step" (the page trains in short
chunks between redraws, and the browser draws every redraw).
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
from attention_core.training.views import phase_change_step, snapshot_view
from benchmarks._timing import median_ms, table
from ui.lessons.train.charts import curve_frame, curves_chart, qk_chart, score_frame, scores_chart


def redraw(trainer: Trainer, playing: bool = True) -> None:
    """What the live fragment computes on every rerun besides the training chunk: the run as a trajectory
    (with the current state evaluated), the curve and score frames and chart specs, maps, parity, q/k picture."""
    traj = from_trainer(trainer, current=not playing)  # paused: the current state is evaluated too
    df, sf = curve_frame(traj, "live"), score_frame(traj, "live")
    for metric in ("loss", "accuracy"):
        json.dumps(curves_chart(df, metric, metric), default=len)  # Arrow datasets are bytes
    for score in dict.fromkeys(sf["score"]):
        json.dumps(scores_chart(sf, score, score), default=len)
    view = snapshot_view(traj.cfg, traj.params[-1], 1, 0)
    json.dumps(qk_chart(view.qk, view.tokens))


def page_phase_change_seconds() -> tuple[float, str]:
    """Seconds from Play on the Train page's default live run to "Phase change at about step N" in Chromium,
    with the server and the browser on this machine's cores; and the sentence the page showed."""
    from playwright.sync_api import sync_playwright

    from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app

    with streamlit_server() as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/Train?mode=live")
        wait_for_app(page, 240_000)
        page.get_by_role("button", name="▶ Play").click()
        t0 = time.perf_counter()
        page.wait_for_function("() => document.body.innerText.includes('Phase change at about step')", timeout=600_000)
        secs = time.perf_counter() - t0
        said = page.get_by_text("Phase change at about step").first.inner_text()
        browser.close()
    return secs, said


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-landmark", action="store_true", help="skip the phase-change run (about 15-30 s)")
    parser.add_argument("--browser", action="store_true", help="also time the phase change on the page in Chromium")
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
            [
                f"induction phase change, training loop alone (step {cliff}, found at step {tr.step})",
                f"{secs:.1f} s",
                "<= 30 s",
            ]
        )
    if args.browser:
        secs, said = page_phase_change_seconds()
        rows.append([f"the same on the page, server + Chromium on these cores ({said[:60]})", f"{secs:.1f} s", ""])
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
