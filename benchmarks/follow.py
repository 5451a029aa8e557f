"""The class follows the teacher: how long after the teacher's change every student's page is at the teacher's
page and setting, with thirty protocol-level students on one server and a hundred and fifty on two replicas behind
nginx sharing Redis (ui/classroom/follow.py; the push: ui/classroom/pulse_push.py).

The teacher takes three steps: a setting (seq_len 6 -> 9 on the Playground), a page (Compare), another page
(Masks). Each student's page takes what the server sends it unasked, as a browser does (benchmarks/pulse_client.py,
``follow_step``): "moved" is when its URL and page were the teacher's, "drawn" when the full run there had ended,
both from the moment the teacher's change left its client. The baseline, measured in the same run on the same
server: what a class does without following, every student opening the teacher's new link at once (a link read out
to the room, all opening it in the same second). The CPU is the app processes' during the step, per student, and
the machine's load average is printed beside.

The servers move the followers' pages two at a time (ui/classroom/pulse_push.MOVES_IN_FLIGHT); each setup also runs
with all moved at once (``AEXP_FOLLOW_IN_FLIGHT=0``), the before of that choice, in the same run.

    python benchmarks/follow.py [--runs 3] [--setups one:30:0,one:30:2,two:150:0,two:150:2] [--before <checkout>]

``--before`` serves another checkout too (an older commit), alternating with this one setup by setup, the order
reversed every other run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine, start_server  # noqa: E402
from benchmarks.pulse import percentiles  # noqa: E402
from benchmarks.pulse_client import PulseClient, follow_step  # noqa: E402

PAGE = "Playground?seq_len=6&d_model=16&heads=2&seed=3"


def steps(teacher: PulseClient):
    """The teacher's three steps, each a coroutine function."""
    return [
        ("seq_len 6 -> 9", lambda: teacher.change("seq_len", 9, param="seq_len")),
        ("page: Compare", lambda: teacher.switch_page("Compare")),
        ("page: Masks", lambda: teacher.switch_page("Masks")),
    ]


async def open_all(url: str, path: str, n: int, cookie: bool) -> tuple[list[PulseClient], float, list[str]]:
    """``n`` students open ``path`` at once; returns them, the seconds until every page was drawn, and errors."""
    clients = [PulseClient(url, path, cookie=cookie) for _ in range(n)]
    t0 = time.monotonic()
    results = await asyncio.gather(*(c.open() for c in clients))
    return clients, time.monotonic() - t0, [e for r in results for e in r.errors]


async def lesson(url: str, pids: list[int], n: int, cookie: bool) -> list[list[str]]:
    cpu = lambda: sum(cpu_seconds(p) for p in pids)  # noqa: E731
    teacher = PulseClient(url, PAGE, cookie=cookie)
    await teacher.open()
    await teacher.start_class()
    students, opened, errors = await open_all(url, teacher.student_path(), n, cookie)
    rows = []
    for name, act in steps(teacher):
        c0, own0 = cpu(), time.process_time()
        result, times = await follow_step(teacher, students, act)
        spent, own = cpu() - c0, time.process_time() - own0
        moved = [m for m, _ in times if m is not None]
        drawn = [d for _, d in times if d is not None]
        errors += list(result.errors)
        load = os.getloadavg()[0]
        # the baseline: the same class opening the teacher's new link (a new session each), at once
        link = f"{teacher.page_name}?{teacher.query_string}"
        c0 = cpu()
        others, seconds, errs = await open_all(url, link, n, cookie)
        base_cpu = cpu() - c0
        for c in others:
            await c.close()
        rows.append(
            [
                name,
                f"{len(moved)} / {n}: {percentiles(moved)}" if moved else "–",
                f"{len(drawn)} / {n}: {percentiles(drawn)}" if drawn else "–",
                f"{1e3 * spent / n:.0f} ms",
                f"{1e3 * own / n:.0f} ms",
                f"{seconds:.2f} s, {1e3 * base_cpu / n:.0f} ms",
                f"{load:.1f}",
                str(len(errors) + len(errs)),
            ]
        )
    for c in [teacher, *students]:
        await c.close()
    return rows


def run_setup(setup: str, n: int, in_flight: str, app_dir: Path = ROOT) -> list[list[str]]:
    env = {"AEXP_FOLLOW_IN_FLIGHT": in_flight}  # ui/classroom/pulse_push.MOVES_IN_FLIGHT of the servers
    if setup == "two":
        from harness.local_cluster import local_cluster
        from harness.redis_server import redis_server

        with (
            redis_server() as redis,
            local_cluster(2, env={"AEXP_REDIS_URL": redis.url, **env}, cwd=app_dir) as cluster,
        ):
            pids = [r.proc.pid for r in cluster.replicas]
            return asyncio.run(lesson(cluster.url, pids, n, True))
    saved = os.environ.get("AEXP_FOLLOW_IN_FLIGHT")
    os.environ.update(env)  # start_server passes the environment on
    try:
        with start_server(app_dir=app_dir) as server:
            return asyncio.run(lesson(server.url, [server.pid], n, False))
    finally:
        os.environ.pop("AEXP_FOLLOW_IN_FLIGHT")
        if saved is not None:
            os.environ["AEXP_FOLLOW_IN_FLIGHT"] = saved


LABELS = {"one": "1 server, embedded store", "two": "2 replicas + nginx, Redis"}
MOVES = {"0": "all at once", "2": "two at a time"}
HEADER = [
    "version",
    "setup",
    "students",
    "pages moved",
    "run",
    "teacher's step",
    "pages moved (seconds after the teacher's change)",
    "pages drawn there",
    "server CPU per student",
    "the clients' CPU per student (this process, on the same cores)",
    "baseline: all open the new link at once (all drawn; CPU per student)",
    "load average (1 min)",
    "errors",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--setups",
        default="one:30:0,one:30:2,two:150:0,two:150:2",
        help="setup:students:pages moved at a time (0: all at once), comma separated; setup is one or two",
    )
    ap.add_argument(
        "--before", type=Path, help="another checkout (an older commit) to run beside this one, alternating with it"
    )
    args = ap.parse_args()
    versions = [("this checkout", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rows = []
    for k in range(1, args.runs + 1):
        for item in args.setups.split(","):  # alternating, so that the machine's load falls on every setup alike
            setup, n, in_flight = item.split(":")
            for name, app_dir in versions if k % 2 else versions[::-1]:
                for r in run_setup(setup, int(n), in_flight, app_dir):
                    rows.append([name, LABELS[setup], n, MOVES.get(in_flight, f"{in_flight} at a time"), str(k), *r])
                    print(rows[-1], flush=True)
    print()
    print(table(HEADER, rows))
    print(f"\n{machine()}.")


if __name__ == "__main__":
    main()
