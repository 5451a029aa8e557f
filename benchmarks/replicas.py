"""The classroom benchmark through nginx: the same class on 1 and on 2 replicas (harness/local_cluster.py).

The students are benchmarks/classroom.py's protocol clients made browser-like: each first GETs the page, keeps
the aexp_route cookie nginx sets, and opens its websocket with it, as a browser does. (A client without the
cookie is routed by address and User-Agent, so thirty cookie-less clients on one machine would all land on
one replica.) Reports latency from the classroom benchmark, where the students landed, and each replica's
CPU time and peak memory.

    python benchmarks/replicas.py [--replicas 1,2] [--students 30] [--changes 10] [--scenario why_scale]
    python benchmarks/replicas.py --compose [--replicas 2] [--students 150]   # the containers of compose.yaml

With --compose the replicas are compose.yaml's containers (podman-compose, images built as tests/test_containers.py
builds them), each limited to APP_CPUS (1) core and APP_MEMORY (1.5 GB); CPU and peak memory are their cgroups'.
Where the students landed is not known there (the shipped nginx names no replica).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import benchmarks.classroom as classroom  # noqa: E402
from benchmarks import protocol  # noqa: E402
from harness.local_cluster import local_cluster  # noqa: E402

LANDED: collections.Counter = collections.Counter()  # replica address -> students whose websocket it holds


def first_cookie(origin: str) -> str:
    """GET the page without cookies, as a new browser; return the cookie nginx set ("aexp_route=...")."""
    with urllib.request.urlopen(origin + "/", timeout=60) as r:
        return r.headers["Set-Cookie"].split(";", 1)[0]


class BrowserLikeClient(protocol.StreamlitClient):
    """benchmarks/protocol.py's client, with the cookie a browser would carry after its first request."""

    async def _connect(self, wait: float, headers: dict[str, str] | None = None) -> None:
        cookie = await asyncio.to_thread(first_cookie, self.origin)
        await super()._connect(wait, {**(headers or {}), "Cookie": cookie})
        LANDED[self.ws.response.headers.get("X-Upstream", "?")] += 1


async def warm(base: str, path: str) -> None:
    async with protocol.StreamlitClient(base, path):
        pass


def measure(n: int, sc, students: int, changes: int, think: tuple[float, float], seed: int) -> list[str]:
    """One class through nginx on ``n`` fresh replicas; a table row."""
    LANDED.clear()
    with local_cluster(n) as cluster:  # the app caps its native thread pools itself (ui/server/runtime.py)
        pids = [r.proc.pid for r in cluster.replicas]
        for rep in cluster.replicas:  # each replica's first run (imports, caches) is not the class's cost
            asyncio.run(warm(rep.base, sc.path))
        with contextlib.ExitStack() as stack:
            peaks = [stack.enter_context(protocol.PeakRSS(pid)) for pid in pids]
            cpu0, t0 = [protocol.cpu_seconds(pid) for pid in pids], time.perf_counter()
            r = asyncio.run(classroom.load(cluster.url, None, sc, students, changes, think, False, False, seed))
            wall = time.perf_counter() - t0
            cpu = [protocol.cpu_seconds(pid) - c for pid, c in zip(pids, cpu0)]
        order = [rep.address for rep in cluster.replicas]
    return row(n, r, cpu, wall, [p.peak for p in peaks], " / ".join(str(LANDED[a]) for a in order))


def measure_compose(n: int, sc, students: int, changes: int, think: tuple[float, float], seed: int) -> list[str]:
    """One class through compose.yaml's nginx on ``n`` fresh replica containers; a table row."""
    from harness import containers as cu

    base = cu.base_image()
    with cu.compose_up(f"aexp-bench-{os.getpid()}", cu.build_app_image(base), base, replicas=n) as c:
        for _ in range(3 * n):  # warm the replicas (through nginx: they are not published)
            asyncio.run(warm(c.url, sc.path))
        cpu0, t0 = [cu.cpu_seconds(a) for a in c.apps], time.perf_counter()
        r = asyncio.run(classroom.load(c.url, None, sc, students, changes, think, False, False, seed))
        wall = time.perf_counter() - t0
        cpu = [cu.cpu_seconds(a) - c0 for a, c0 in zip(c.apps, cpu0)]
        peaks, limit = [cu.memory_peak(a) for a in c.apps], cu.inspect(c.apps[0])["HostConfig"]["Memory"]
    out = row(n, r, cpu, wall, peaks, "–")
    out[-1] += f" of {limit / 2**20:.0f} MB"
    return out


def row(n: int, r, cpu: list[float], wall: float, peaks: list[int], spread: str) -> list[str]:
    lat = [x.seconds for x in r.results]
    changes_done = max(len(r.results), 1)
    errors = sum(1 for x in r.results if x.errors) + len(r.open_errors)
    verified = sum(1 for x in r.results if x.verified)
    return [
        str(n),
        spread,
        f"{classroom.q(lat, 0.5):.2f} s",
        f"{classroom.q(lat, 0.95):.2f} s",
        f"{max(lat, default=float('nan')):.2f} s",
        str(errors),
        f"{verified} / {len(r.results)}",
        f"{1e3 * sum(cpu) / changes_done:.0f} ms",
        " / ".join(f"{100 * c / wall:.0f}%" for c in cpu),
        " / ".join(f"{p / 2**20:.0f} MB" for p in peaks),
    ]


HEADER = [
    "replicas",
    "students per replica",
    "p50",
    "p95",
    "max",
    "errors",
    "verified",
    "CPU per change (all replicas, incl. the class's page loads)",
    "each replica busy",
    "each replica peak RSS",
]


def main() -> None:
    sc_all = classroom.scenarios()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicas", default="1,2", help="comma-separated replica counts, e.g. 1,2")
    ap.add_argument("--scenario", default="why_scale", choices=sorted(sc_all))
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--changes", type=int, default=10)
    ap.add_argument("--think", default="1-3", help="seconds between a student's changes, 'lo-hi'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compose", action="store_true", help="the replicas of compose.yaml, run by podman-compose")
    args = ap.parse_args()
    lo, _, hi = args.think.partition("-")
    think = (float(lo), float(hi or lo))
    counts = [int(c) for c in args.replicas.split(",")]
    if min(counts) < 1 or args.students < 1 or args.changes < 1:
        ap.error("--replicas, --students and --changes must be >= 1")
    classroom.StreamlitClient = BrowserLikeClient  # the benchmark's students, with their cookie
    sc = sc_all[args.scenario]
    print(
        f"{sc.title}: {args.students} students through nginx, {args.changes} changes each, think {args.think} s; "
        f"{os.cpu_count()} cores shared by the replicas, nginx, the clients and other jobs.\n",
        flush=True,
    )
    rows = []
    for n in counts:
        run = measure_compose if args.compose else measure
        rows.append(run(n, sc, args.students, args.changes, think, args.seed))
        print("  done:", rows[-1], flush=True)
    print(classroom.table(HEADER, rows))


if __name__ == "__main__":
    main()
