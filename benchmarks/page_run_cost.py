"""Server CPU of a full page run: what each student's page costs when the class follows the teacher to a new step.

One protocol-level student in a class (a teacher starts it and stays connected) switches pages in the sidebar's
way, Compare -> Masks -> Playground, ``--cycles`` times; the cost is the server process's CPU time (user + system,
all threads) over those switches divided by their number, a round. Rounds alternate between this checkout and
``--before`` (an older commit's checkout), each with a fresh server, and the table gives every round and the
median of each version's rounds, so the machine's drift falls on both alike.

    python benchmarks/page_run_cost.py [--rounds 6] [--cycles 30] [--before <checkout>]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine, start_server  # noqa: E402
from benchmarks.pulse_client import PulseClient  # noqa: E402

PAGE = "Playground?seq_len=6&d_model=16&heads=2&seed=3"
CYCLE = ("Compare", "Masks", "Playground")


async def cost(url: str, pid: int, cycles: int) -> float:
    """Milliseconds of server CPU per page switch of a student in a class (after one warm-up cycle)."""
    teacher = PulseClient(url, PAGE)
    await teacher.open()
    await teacher.start_class()
    student = PulseClient(url, teacher.student_path())
    await student.open()
    try:
        for name in CYCLE * 2:  # warm: every page's caches and imports
            r = await student.switch_page(name)
            if not r.ok:
                raise AssertionError(r.errors)
        c0 = cpu_seconds(pid)
        for _ in range(cycles):
            for name in CYCLE:
                r = await student.switch_page(name)
                if not r.ok:
                    raise AssertionError(r.errors)
        return 1e3 * (cpu_seconds(pid) - c0) / (cycles * len(CYCLE))
    finally:
        await student.close()
        await teacher.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--before", type=Path, help="another checkout (an older commit) to alternate with this one")
    args = ap.parse_args()
    versions = [("this checkout", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    got: dict[str, list[float]] = {name: [] for name, _ in versions}
    rows = []
    for k in range(1, args.rounds + 1):
        for name, app_dir in versions if k % 2 else versions[::-1]:
            load = os.getloadavg()[0]
            with start_server(app_dir=app_dir) as server:
                ms = asyncio.run(cost(server.url, server.pid, args.cycles))
            got[name].append(ms)
            rows.append([str(k), name, f"{ms:.1f}", f"{load:.1f}"])
            print(rows[-1], flush=True)
    print()
    print(table(["round", "version", "server CPU per page switch (ms)", "load average at its start"], rows))
    print()
    medians = {name: statistics.median(v) for name, v in got.items()}
    summary = [[name, f"{m:.1f}"] for name, m in medians.items()]
    if args.before:
        summary[0].append(f"{medians['this checkout'] / medians['before']:.2f}x")
        summary[1].append("1.00x")
    print(table(["version", "median (ms)"] + (["against before"] if args.before else []), summary))
    print(f"\n{machine()}.")


if __name__ == "__main__":
    main()
