"""A class beside clients that flood the server: does one student who sends reruns as fast as a socket allows slow
down the others?

29 students speak Streamlit's websocket protocol (benchmarks/classroom.py: each opens the scenario's link, then
moves one slider ``--changes`` times with 1-3 s between changes, every change timed to its ``script_finished``
and verified). Beside them ``--flooders`` clients open the same link and, a few seconds into the class, each
send ``--requests`` rerun requests back to back (a script, or an arrow key held on a slider that reruns per
value) without waiting for an answer, every request a new value of the same slider, then read until their page
shows the last value they sent. Every configuration runs ``--runs`` times on a fresh server; the table has the
class's latency, its errors, the flooders' runs and the server's peak memory.

    python benchmarks/flood.py                                   # 0, 1 and 3 flooders, 3 runs each
    python benchmarks/flood.py --app-dir /tmp/before --label before   # the same on another checkout
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from benchmarks.classroom import (  # noqa: E402
    ARRIVE,
    CHANGE_TIMEOUT,
    LIVE_TOGGLE,
    OPEN_TIMEOUT,
    NoPeak,
    Scenario,
    q,
    scenarios,
    student,
    table,
)
from benchmarks.protocol import PeakRSS, RunResult, StreamlitClient, cpu_seconds, machine, start_server  # noqa: E402

FLOOD_AFTER = (3.0, 6.0)  # seconds after the class's first changes when each flooder starts, uniform
FLOOD_TIMEOUT = 120.0  # seconds a flooder waits for its page to show its last value


@dataclass(frozen=True)
class FloodResult:
    """What one flooding client sent and saw."""

    sent: int  # rerun requests sent back to back
    send_seconds: float  # time to send them all
    runs_started: int  # runs the session reported starting (new_session messages) from the first request on
    runs_finished: int  # script_finished messages from the first request on (any status)
    seconds: float  # from the first request to the end of the run that showed the last value (or the timeout)
    shows_last: bool  # the page ended showing the last value sent, in the widget and in the URL
    notices: tuple[str, ...]  # the toasts the page showed meanwhile, in order, each once
    errors: tuple[str, ...]  # exception elements, a closed socket, a timeout


def flood_values(options: list[Any], shown: Any, n: int) -> list[Any]:
    """``n`` values cycling through ``options`` whose last one differs from ``shown`` (so that showing it proves
    the last request won)."""
    others = [o for o in options if o != shown]
    if not others or n < 1:
        raise ValueError(f"need n >= 1 and an option other than {shown!r}; options: {options}")
    values = [options[i % len(options)] for i in range(n - 1)]
    return values + [others[(n - 1) % len(others)]]


async def flood(
    client: StreamlitClient, label: str, values: list[Any], param: str | None = None, timeout: float = FLOOD_TIMEOUT
) -> FloodResult:
    """Send one rerun request per value of the widget ``label`` without waiting, then read until a finished run
    shows the last value (or ``timeout`` passes). ``client`` has its page open."""
    ws = client.ws
    assert ws is not None, "open the client first"
    messages = [client.rerun_message(client.client_state(label, v)) for v in values]
    last = values[-1]
    errors: list[str] = []
    notices: list[str] = []
    counts = {"started": 0, "finished": 0}
    all_sent = asyncio.Event()

    async def read() -> bool:
        while True:
            raw = await ws.recv(decode=False)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            if msg.WhichOneof("type") == "new_session":
                counts["started"] += 1
            done = client.handle(msg, errors)
            if done is None and msg.WhichOneof("type") == "script_finished":
                done = "stopped"  # an interrupted run (finished early for a rerun) also ends
            if done is None:
                continue
            counts["finished"] += 1
            for k, p, _ in client.page.nodes.values():
                if k == "toast" and p.body not in notices:
                    notices.append(p.body)
            if all_sent.is_set() and done in ("finished", "fragment finished") and client.shows(label, last, param):
                return True

    t0 = time.perf_counter()
    reader = asyncio.create_task(read())
    for m in messages:
        await ws.send(m)
    send_seconds = time.perf_counter() - t0
    all_sent.set()
    shows = False
    try:
        shows = await asyncio.wait_for(reader, timeout)
    except TimeoutError:
        errors.append(f"the page did not show the last value within {timeout:g} s")
    except Exception as exc:  # noqa: BLE001 - a closed socket is a result
        errors.append(f"socket closed: {type(exc).__name__}: {exc}"[:300])
    return FloodResult(
        len(messages),
        send_seconds,
        counts["started"],
        counts["finished"],
        time.perf_counter() - t0,
        shows,
        tuple(notices),
        tuple(errors),
    )


async def flooder(url: str, sc: Scenario, requests: int, opened: asyncio.Barrier, delay: float) -> FloodResult:
    """One flooding client: opens the link with the class, waits ``delay`` seconds into the class, floods."""
    client = StreamlitClient(url, sc.path, timeout=CHANGE_TIMEOUT)
    try:
        await client.open(timeout=OPEN_TIMEOUT)
        await opened.wait()
        await asyncio.sleep(delay)
        if sc.label not in {w.label for w in client.page.widgets()}:
            # the slider is the live maps' own control (drawn by the browser): the flooder floods the page's own
            # slider, with the maps drawn by the server (the heavier page)
            await client.change(LIVE_TOGGLE, False)
        w = client.page.widget(sc.label)
        return await flood(client, sc.label, flood_values(w.options, w.value, requests), sc.param)
    finally:
        await client.close()


@dataclass(frozen=True)
class Run:
    """One class with its flooders on a fresh server."""

    results: tuple[RunResult, ...]  # the students' changes
    open_errors: tuple[str, ...]
    floods: tuple[FloodResult, ...]
    cpu: float  # server CPU seconds from the first change to the last
    peak_rss: int  # bytes


async def class_with_flood(
    url: str, pid: int | None, sc: Scenario, students: int, flooders: int, requests: int, changes: int, seed: int
) -> Run:
    results: list[RunResult] = []
    errors: list[str] = []
    opened = asyncio.Barrier(students + flooders + 1)
    rng = random.Random(seed)
    with PeakRSS(pid) if pid else NoPeak() as peak:
        tasks = [
            asyncio.create_task(
                student(
                    url, sc, changes, (1.0, 3.0), random.Random(seed * 1000 + i), results, errors, opened, None, ARRIVE
                )
            )
            for i in range(students)
        ]
        floods = [
            asyncio.create_task(flooder(url, sc, requests, opened, rng.uniform(*FLOOD_AFTER))) for _ in range(flooders)
        ]
        await opened.wait()
        cpu0 = cpu_seconds(pid) if pid else float("nan")
        await asyncio.gather(*tasks)
        done = await asyncio.gather(*floods)
        cpu1 = cpu_seconds(pid) if pid else float("nan")
    return Run(tuple(results), tuple(errors), tuple(done), cpu1 - cpu0, peak.peak)


HEADER = [
    "version",
    "flooders",
    "run",
    "class p50",
    "class p95",
    "class max",
    "errors",
    "verified",
    "flooder runs / requests",
    "flooder saw its last value",
    "server CPU",
    "server peak RSS",
    "machine load (1 min)",
]


def row(version: str, flooders: int, run: int, r: Run) -> list[str]:
    lat = [x.seconds for x in r.results]
    errs = sum(1 for x in r.results if x.errors) + len(r.open_errors) + sum(len(f.errors) for f in r.floods)
    runs = ", ".join(f"{f.runs_started} / {f.sent}" for f in r.floods) or "-"
    last = ", ".join(f"yes ({f.seconds:.1f} s)" if f.shows_last else "NO" for f in r.floods) or "-"
    return [
        version,
        str(flooders),
        str(run),
        f"{q(lat, 0.5):.2f} s",
        f"{q(lat, 0.95):.2f} s",
        f"{max(lat, default=float('nan')):.2f} s",
        str(errs),
        f"{sum(1 for x in r.results if x.verified)} / {len(r.results)}",
        runs,
        last,
        f"{r.cpu:.1f} s",
        f"{r.peak_rss / 2**20:.0f} MB" if r.peak_rss else "n/a",
        f"{os.getloadavg()[0]:.1f}",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="why_scale", choices=sorted(scenarios()))
    ap.add_argument("--students", type=int, default=29)
    ap.add_argument("--flooders", default="0,1,3", help="comma-separated numbers of flooding clients")
    ap.add_argument("--requests", type=int, default=400, help="rerun requests each flooder sends back to back")
    ap.add_argument("--changes", type=int, default=10, help="slider changes per student")
    ap.add_argument("--runs", type=int, default=3, help="fresh servers per configuration")
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout to serve (e.g. main before a change)")
    ap.add_argument("--label", default="this checkout", help="the version column's text")
    ap.add_argument("--seed", type=int, default=1, help="the first run's number and seed; run i has seed + i")
    args = ap.parse_args()
    counts = [int(c) for c in args.flooders.split(",")]
    if args.students < 1 or args.requests < 1 or args.runs < 1 or any(c < 0 for c in counts):
        ap.error("--students, --requests and --runs must be >= 1 and --flooders >= 0")
    sc = scenarios()[args.scenario]
    print(
        f"{sc.title}: {args.students} students, {args.changes} changes each, 1-3 s apart; flooders send "
        f"{args.requests} rerun requests each, {FLOOD_AFTER[0]:g}-{FLOOD_AFTER[1]:g} s into the class. "
        f"Server: streamlit run in {args.app_dir}.\n",
        flush=True,
    )
    rows = []
    for i in range(args.runs):
        for n in counts:
            with start_server(app_dir=args.app_dir) as server:
                the_class = class_with_flood(
                    server.url, server.pid, sc, args.students, n, args.requests, args.changes, args.seed + 100 * i
                )
                r = asyncio.run(the_class)
            rows.append(row(args.label, n, args.seed + i, r))
            print("  ", " | ".join(rows[-1]), flush=True)
            for e in list(r.open_errors[:3]) + [e for x in r.results for e in x.errors][:3]:
                print("  error:", e)
            for f in r.floods:
                for e in f.errors[:2]:
                    print("  flooder error:", e)
                if f.notices:
                    print("  flooder's notice:", f.notices[-1][:200])
    rows.sort(key=lambda r: (int(r[1]), int(r[2])))
    print(table(HEADER, rows))
    print(f"\nLoad average (1 min) at the end: {os.getloadavg()[0]:.1f}; {machine()}.")


if __name__ == "__main__":
    main()
