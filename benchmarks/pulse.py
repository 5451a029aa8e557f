"""Class pulse under a class: thirty protocol-level students answer within ten seconds while the teacher's view
refreshes by itself. How long after the last answer the teacher's tally is complete, and the server CPU per answer,
on one server with the embedded store and on two replicas behind nginx sharing Redis.

Every tab behaves as a browser's would (benchmarks/pulse_client.py): the teacher's page ticks its tally fragment
every ``ui.classroom.pulse_panel.TEACHER_EVERY`` seconds; every student's page takes what the server sends it unasked (the
reveal pushed by ui/classroom/pulse_push.py) and ticks its reveal watcher at the interval the page gave it (never while its
own run is going, as the front end skips a tick then); each student, at a random moment of the window, picks a key
and sends it (two runs: the pick, the send). The baseline is the same class without a class pulse (classroom mode
locked, each student picks and reveals on their own page). The CPU is the app processes' (Redis's apart), page
loads excluded, from the window's start until the tally was complete (the baseline: until every student revealed),
divided by the students; the reveal's CPU (every student's verdict and page rerun) is apart. "After the last
answer" is measured from the moment the last student's send left the client, and from the moment its page came
back ("Sent"), to the end of the first teacher refresh that counted every answer. Then the teacher reveals: the
time from the press until each student's page shows its verdict in the question's box, and until the page's full
run shows the weights.

    python benchmarks/pulse.py [--students 30] [--window 10] [--runs 3] [--setups baseline,embedded,redis]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine, start_server  # noqa: E402
from benchmarks.pulse_client import PulseClient  # noqa: E402
from ui.classroom.pulse_panel import STUDENT_IDLE, TEACHER_EVERY  # noqa: E402

PAGE = "Playground?seq_len=6&d_model=16&heads=2&seed=3"
KEYS = ["sharper", "softer", "the same"]  # the Playground's question: head 1 with the scaling flipped
VERDICTS = ("Right: you predicted", "Not this time")  # ui.classroom.mode.verdict


@dataclass
class Result:
    counted: int = 0  # answers on the teacher's view at the end
    sends: list[tuple[float, float]] = field(default_factory=list)  # (sent, page back) of each student's answer
    complete: float = float("nan")  # when the first teacher refresh that counted every answer came back
    shown: list[float] = field(default_factory=list)  # per student: seconds from the reveal to its page's weights
    verdicts: list[float] = field(default_factory=list)  # and to its verdict in the question's box
    reveal_at: float = float("nan")  # when the teacher pressed "Reveal to the class"
    teacher_ticks: list[float] = field(default_factory=list)  # seconds per refresh, client-side
    student_ticks: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cpu: float = 0.0  # app processes' CPU seconds from the window's start until the tally was complete
    reveal_cpu: float = 0.0  # and from then until every student's page showed the weights
    redis_cpu: float = 0.0


async def student_tab(c: PulseClient, start_at: float, class_on: bool, res: Result, stop: asyncio.Event) -> None:
    busy, seen = asyncio.Lock(), {}

    def look(page: PulseClient) -> None:
        """As each run of the page ends (whichever run: one the server pushed, or the watcher's tick): the first
        moment it shows the verdict, and the weights after a full run that followed the reveal. (A browser draws an
        element as it arrives, a little before its run ends: these times are a little late, never early; looking
        after every message instead cost the 31 clients' process more than a second of its own CPU at the reveal.)"""
        if res.reveal_at != res.reveal_at:  # nan: the teacher has not pressed yet
            seen["runs"] = page.full_runs
            return
        now = time.monotonic()
        if "verdict" not in seen and any(t.startswith(VERDICTS) for t in page.page.texts()):
            seen["verdict"] = now
            res.verdicts.append(now - res.reveal_at)
        if "weights" not in seen and page.full_runs > seen.get("runs", 0) and "Attention weights" in page.text():
            seen["weights"] = now
            res.shown.append(now - res.reveal_at)

    c.on_run_end = look

    async def watcher():
        """What the student's browser does while it waits: it takes what the server sends unasked (the pushed
        reveal) and ticks its watcher fragment at the interval the page gave it."""
        next_tick = time.monotonic() + next(iter(c.auto_reruns.values()), STUDENT_IDLE)
        while not stop.is_set():
            async with busy:
                await c.listen(0.05)
                if class_on and c.auto_reruns and time.monotonic() >= next_tick:
                    r = await c.tick()
                    res.student_ticks.append(r.seconds)
                    res.errors += r.errors
                    next_tick = time.monotonic() + next(iter(c.auto_reruns.values()), STUDENT_IDLE)
            await asyncio.sleep(0)  # the answer below may take the tab now

    task = asyncio.create_task(watcher())
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    async with busy:
        sent = time.monotonic()
        if class_on:
            r = await c.predict(random.choice(KEYS))
        else:
            r = await c.change("Your prediction", random.choice(KEYS))
            r = await c.click("Reveal the answer") if r.ok else r
        res.sends.append((sent, time.monotonic()))
        res.errors += r.errors
    await stop.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def teacher_tab(t: PulseClient, n: int, res: Result, stop: asyncio.Event, deadline: float, cpu) -> None:
    while time.monotonic() < deadline:
        r = await t.tick()
        res.teacher_ticks.append(r.seconds)
        res.errors += r.errors
        res.counted = t.answers() or 0
        if res.counted >= n and len(res.sends) == n:
            res.complete, res.cpu = time.monotonic(), cpu()
            break
        await asyncio.sleep(TEACHER_EVERY)
    res.reveal_at = time.monotonic()  # the teacher's press: a student's page can show it before the click returns
    r = await t.click("Reveal to the class")
    res.errors += r.errors
    while (len(res.shown) < n or len(res.verdicts) < n) and time.monotonic() < res.reveal_at + 30:
        await asyncio.sleep(0.05)
    res.reveal_cpu = cpu() - res.cpu
    stop.set()


async def lesson(url: str, pids: list[int], redis_pid: int | None, n: int, window: float, class_on: bool) -> Result:
    cookie = redis_pid is not None  # behind nginx: carry its sticky cookie, as browsers do
    res, stop = Result(), asyncio.Event()
    path = f"{PAGE}&classroom=lock"
    teacher = None
    if class_on:
        teacher = PulseClient(url, PAGE, cookie=cookie)
        await teacher.open()
        await teacher.start_class()
        await teacher.tick()
        path = teacher.student_path()
    students = [PulseClient(url, path, cookie=cookie) for _ in range(n)]
    for s in students:
        r = await s.open()
        res.errors += r.errors
    cpu0 = sum(cpu_seconds(p) for p in pids)
    cpu = lambda: sum(cpu_seconds(p) for p in pids) - cpu0
    redis0 = cpu_seconds(redis_pid) if redis_pid else 0.0
    t0 = time.monotonic()
    tabs = [student_tab(s, t0 + random.uniform(0, window), class_on, res, stop) for s in students]
    if class_on:
        tabs.append(teacher_tab(teacher, n, res, stop, t0 + window + 30, cpu))
    else:
        tabs.append(_stop_when_done(res, n, stop))
    await asyncio.gather(*tabs)
    if not class_on:
        res.cpu = cpu()
    res.redis_cpu = cpu_seconds(redis_pid) - redis0 if redis_pid else 0.0
    for c in [*students, *([teacher] if teacher else [])]:
        await c.close()
    return res


async def _stop_when_done(res: Result, n: int, stop: asyncio.Event) -> None:
    while len(res.sends) < n:
        await asyncio.sleep(0.05)
    stop.set()


async def warm(url: str) -> None:
    c = PulseClient(url, PAGE)
    await c.open()
    await c.close()


def run_setup(setup: str, n: int, window: float) -> Result:
    if setup == "redis":
        from harness.local_cluster import local_cluster
        from harness.redis_server import redis_server

        with redis_server() as redis, local_cluster(2, env={"AEXP_REDIS_URL": redis.url}) as cluster:
            for rep in cluster.replicas:
                asyncio.run(warm(rep.base))
            pids = [r.proc.pid for r in cluster.replicas]
            return asyncio.run(lesson(cluster.url, pids, redis.proc.pid, n, window, True))
    with start_server() as server:
        asyncio.run(warm(server.url))
        return asyncio.run(lesson(server.url, [server.pid], None, n, window, setup != "baseline"))


LABELS = {
    "baseline": "no class pulse (classroom=lock, each reveals alone), 1 server",
    "embedded": "class pulse, 1 server, embedded store",
    "redis": "class pulse, 2 replicas + nginx, Redis",
}


def percentiles(xs: list[float]) -> str:
    """p50, p95 and max of ``xs`` (seconds), the p95 by the nearest rank."""
    xs = sorted(xs)
    p95 = xs[max(0, math.ceil(0.95 * len(xs)) - 1)]
    return f"p50 {statistics.median(xs):.2f} s, p95 {p95:.2f} s, max {xs[-1]:.2f} s"


def row(setup: str, k: int, n: int, r: Result) -> list[str]:
    class_on = setup != "baseline"
    last_sent = max((s for s, _ in r.sends), default=float("nan"))
    last_back = max((b for _, b in r.sends), default=float("nan"))
    after = f"{r.complete - last_sent:.2f} s / {r.complete - last_back:+.2f} s" if class_on else "–"
    shown = f"{len(r.shown)} / {n}: {percentiles(r.shown)}" if r.shown else "–"
    verdicts = f"{len(r.verdicts)} / {n}: {percentiles(r.verdicts)}" if r.verdicts else "–"
    med = lambda xs: f"{1e3 * statistics.median(xs):.0f} ms" if xs else "–"
    return [
        LABELS[setup],
        str(k),
        f"{r.counted} / {n}" if class_on else f"{len(r.sends)} / {n} revealed",
        after,
        verdicts,
        shown,
        med(r.teacher_ticks),
        med(r.student_ticks),
        f"{1e3 * r.cpu / n:.0f} ms",
        f"{1e3 * r.reveal_cpu / n:.0f} ms" if class_on else "–",
        f"{1e3 * r.redis_cpu / n:.2f} ms" if setup == "redis" else "–",
        str(len(r.errors)),
    ]


HEADER = [
    "setup",
    "run",
    "answers on the teacher's view",
    "tally complete after the last answer (sent / page back)",
    "verdict in the question's box after the reveal (seconds from the teacher's click)",
    "pages showing the weights after the reveal (seconds from the teacher's click)",
    "teacher refresh (median)",
    "student watcher tick (median)",
    "server CPU per answer (every run until the tally is complete)",
    "server CPU per student for the reveal",
    "Redis CPU per answer",
    "errors",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--window", type=float, default=10.0, help="seconds in which every student answers once")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--setups", default="baseline,embedded,redis")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    random.seed(args.seed)
    rows = []
    for k in range(1, args.runs + 1):
        for setup in args.setups.split(","):  # alternating, so that the machine's load falls on every setup alike
            rows.append(row(setup, k, args.students, run_setup(setup, args.students, args.window)))
            print(rows[-1], flush=True)
    print()
    print(table(HEADER, rows))
    print(
        f"\n{args.students} students, each answering once at a random moment of {args.window:g} s; teacher refresh "
        f"every {TEACHER_EVERY:g} s; the reveal pushed to the students' pages (ui/classroom/pulse_push.py), their watcher "
        f"ticking every {STUDENT_IDLE:g} s as a safety net. {machine()}."
    )


if __name__ == "__main__":
    main()
