"""What a browser test pays to open a page: a new browser context, a new page in a context that has drawn the app
before, or the same page navigated again (what tests/page_pool.py lends), in Chromium against one server.

Each row: the median over ``--repeat`` loads (after one not counted) of the wall time from ``goto`` to the app drawn
(harness.server.wait_for_app), the machine's CPU over that time (every process: Chromium's, the server's, this
script's; /proc/stat), and the server's own CPU. Ratios are against the new context, measured in the same run.

    python benchmarks/browser_pages.py [--repeat 5] [--page Playground]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine  # noqa: E402
from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app  # noqa: E402

VIEWPORT = {"width": 1400, "height": 1000}


def machine_cpu() -> float:
    """CPU seconds every process of the machine has used (user, nice, system, irq, softirq, steal; /proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields[:3] + fields[5:8]) / os.sysconf("SC_CLK_TCK")


def measure(load, server_pid: int, repeat: int) -> tuple[float, float, float]:
    """Median (wall s, machine CPU s, server CPU s) of ``load()`` over ``repeat`` runs after one not counted."""
    load()
    rows = []
    for _ in range(repeat):
        c0, s0, t0 = machine_cpu(), cpu_seconds(server_pid), time.perf_counter()
        load()
        rows.append((time.perf_counter() - t0, machine_cpu() - c0, cpu_seconds(server_pid) - s0))
    return tuple(statistics.median(r[i] for r in rows) for i in range(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--page", default="Playground", help="the page's address, as in /Playground")
    args = ap.parse_args()
    with streamlit_server() as (base, proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        url = f"{base}/{args.page}"

        def new_context():
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            page.goto(url)
            wait_for_app(page)
            ctx.close()

        warm = browser.new_context(viewport=VIEWPORT)

        def new_page():
            page = warm.new_page()
            page.goto(url)
            wait_for_app(page)
            page.close()

        kept = warm.new_page()

        def same_page():  # as tests/page_pool.py lends it: left on about:blank by the last test
            kept.goto("about:blank")
            kept.goto(url)
            wait_for_app(kept)

        ways = {
            "a new context": new_context,
            "a new page of a context that drew the app": new_page,
            "the same page again (tests/page_pool.py)": same_page,
        }
        results = {name: measure(load, proc.pid, args.repeat) for name, load in ways.items()}
        browser.close()
    first = results["a new context"]
    rows = [[name, f"{w:.2f}", f"{c:.2f}", f"{s:.2f}", f"{c / first[1]:.2f}"] for name, (w, c, s) in results.items()]
    print(f"/{args.page} at 1400 x 1000, median of {args.repeat} loads\n")
    print(table(["way", "wall (s)", "machine CPU (s)", "server CPU (s)", "CPU / new context"], rows))
    print(f"\n{machine()}")


if __name__ == "__main__":
    main()
