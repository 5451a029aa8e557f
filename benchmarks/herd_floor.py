"""Streamlit's own floor for a herd: every student's page reruns at once, on a page of a title, a slider and a line
(benchmarks/bare_app), served and measured as benchmarks/follow.py serves and measures the app's class: thirty
protocol-level students on one server, seventy-five on one, a hundred and fifty on two replicas behind nginx (the
deployment's conf), with the app's own server settings (.streamlit/config.toml: no collection after every run,
reruns queued; Streamlit's default collection alone made a bare rerun cost 26-48 ms here). A student's rerun is a
change of its slider, all sent in the same instant; the times are from that instant until each run has ended, the
CPU the server processes' per student. What the class following the teacher costs above this is the app's page
runs (docs/BENCHMARKS.md).

    python benchmarks/herd_floor.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.config_option import ConfigOption  # noqa: E402

import harness.local_cluster as local_cluster  # noqa: E402
from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine  # noqa: E402
from benchmarks.pulse import percentiles  # noqa: E402
from benchmarks.pulse_client import PulseClient  # noqa: E402
from harness.server import streamlit_server  # noqa: E402

BARE = ROOT / "benchmarks" / "bare_app"


def app_settings() -> dict[str, str]:
    """The app's server settings (.streamlit/config.toml's runner, global, server and client options) as the
    environment variables Streamlit reads (``runner.postScriptGC`` -> ``STREAMLIT_RUNNER_POST_SCRIPT_GC``)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    env = {}
    for section in ("runner", "global", "server", "client"):
        for name, value in config.get(section, {}).items():
            env[ConfigOption(f"{section}.{name}").env_var] = (
                str(value).lower() if isinstance(value, bool) else str(value)
            )
    return env


async def herd(url: str, n: int, cookie: bool, pids: list[int], rounds: int) -> list[list[str]]:
    """``n`` students open the page (ten at a time), then all rerun at once, ``rounds`` times."""
    clients = [PulseClient(url, "", cookie=cookie) for _ in range(n)]
    for i in range(0, n, 10):
        await asyncio.gather(*(c.open() for c in clients[i : i + 10]))
    cpu = lambda: sum(cpu_seconds(p) for p in pids)  # noqa: E731
    rows = []
    for k in range(rounds):
        c0, t0 = cpu(), time.monotonic()

        async def one(c: PulseClient, value: int = 10 + k) -> tuple[float, int]:
            r = await c.change("x", value)
            return time.monotonic() - t0, len(r.errors)

        done = await asyncio.gather(*(one(c) for c in clients))
        spent = cpu() - c0
        errors = sum(e for _, e in done)
        rows.append(
            [
                str(k + 1),
                percentiles([t for t, _ in done]),
                f"{1e3 * spent / n:.1f} ms",
                f"{os.getloadavg()[0]:.1f}",
                str(errors),
            ]
        )
    for c in clients:
        await c.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows = []
    env = app_settings()
    with streamlit_server(cwd=BARE, env=env) as (url, proc):
        for n in (30, 75):
            for r in asyncio.run(herd(url, n, False, [proc.pid], args.rounds)):
                rows.append(["1 server", str(n), *r])
                print(rows[-1], flush=True)
    local_cluster.streamlit_server = functools.partial(streamlit_server, cwd=BARE)
    with local_cluster.local_cluster(2, env=env) as cluster:
        pids = [r.proc.pid for r in cluster.replicas]
        for r in asyncio.run(herd(cluster.url, 150, True, pids, args.rounds)):
            rows.append(["2 replicas + nginx", "150", *r])
            print(rows[-1], flush=True)
    header = [
        "setup",
        "students",
        "round",
        "all reruns ended (seconds after they were sent)",
        "server CPU per student",
        "load average (1 min)",
        "errors",
    ]
    print()
    print(table(header, rows))
    print(f"\n{machine()}.")


if __name__ == "__main__":
    main()
