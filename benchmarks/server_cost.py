"""Server CPU per slider change, one client, warm caches, page by page; with Streamlit's post-run GC on and off.

For each page one protocol client (benchmarks/protocol.py) opens the page, moves a slider through three values
twice to warm every cache, then moves it ``--changes`` more times through the same values. Each change is
measured as the server process's CPU time (user + system, all threads) from sending the BackMsg to the
``script_finished``, the wall time, and the bytes that came back. Medians are reported. The whole set runs once
per ``--runner.postScriptGC`` setting (fresh server each), so the two columns and their ratio come from one run.

Memory mode (``--memory``): a fresh server per page opens it at the largest sizes (seq_len 512, d_model 1024,
16 heads) and steps through ``--settings`` distinct settings (the seed; seq_len where a page has no seed), then
reports the server's peak resident memory (VmRSS, polled every 50 ms).

    python benchmarks/server_cost.py                        # every page, GC on and off
    python benchmarks/server_cost.py --gc off --cores 0,1
    python benchmarks/server_cost.py --memory --pages Playground,Compare --settings 200
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.classroom import scenarios, table  # noqa: E402
from benchmarks.protocol import PeakRSS, StreamlitClient, cpu_seconds, machine, rss_bytes, size_query, start_server  # noqa: E402
from ui.skeleton.controls import TEMPERATURES  # noqa: E402

LARGEST = size_query(512, 16)


@dataclass(frozen=True)
class Case:
    """One page setting to measure."""

    title: str  # row title
    path: str  # page and query string
    label: str  # the slider that is moved ("" = the first slider on the page)


@dataclass(frozen=True)
class Cost:
    """Medians over the measured changes of one case."""

    cpu_ms: float  # server CPU per change
    wall_ms: float  # BackMsg to script_finished
    kb: float  # bytes on the socket per change, KiB
    errors: int  # changes with an error or not verified
    n: int  # changes measured


def cases(pages: list[tuple[str, str]]) -> list[Case]:
    """The named cases first (presets, defaults, the large Playground), then every other page at its default."""
    sc = scenarios()
    key = lambda name: name.lower().replace("-", " ").replace("_", " ")  # noqa: E731 ("Multi head" = "Multi-head")
    by_name = {key(name): path for name, path in pages}
    out = [
        Case(sc["why_scale"].title, sc["why_scale"].path, sc["why_scale"].label),
        Case(sc["looking_for_b"].title, sc["looking_for_b"].path, sc["looking_for_b"].label),
    ]
    for name in ("Playground", "Multi-head"):
        if key(name) in by_name:
            out.append(Case(f"{name}, default", by_name[key(name)], "temperature"))
    out.append(Case(sc["playground_128x8"].title, sc["playground_128x8"].path, "temperature"))
    for name, path in pages:
        if key(name) not in ("playground", "multi head"):
            out.append(Case(f"{name if path else 'Home'}, default", path, "temperature"))
    return out


def slider_of(client: StreamlitClient, label: str):
    if label:
        try:
            return client.page.widget(label)
        except LookupError:
            pass
    sliders = [w for w in client.page.widgets() if w.kind == "slider" and not w.disabled]
    if not sliders:
        raise LookupError("no slider on the page")
    return sliders[0]


def three_values(w) -> list:
    """The slider's value and its two neighbours (options or numbers)."""
    if w.options:
        i = w.options.index(w.value)
        return [w.options[(i + k) % len(w.options)] for k in (0, 1, 2)]
    lo, hi, v = int(w.proto.min), int(w.proto.max), int(w.value)
    start = min(max(v, lo), hi - 2)
    return [start, start + 1, start + 2]


def live_release(c: StreamlitClient, label: str):
    """Where the temperature ``label`` is the live maps' own control (the Playground's, Compare's A), the three
    temperatures to cycle and how to let go of one, as the browser reports it; None elsewhere."""
    if label not in ("temperature", "temperature (A)") or any(w.label == label for w in c.page.widgets()):
        return None
    try:
        settings = c.live_settings()
    except LookupError:
        return None
    panel, param = ("", "temperature") if "" in settings else ("A", "a_temperature")  # Compare: A's
    now = settings[panel]["temperature"]
    i = TEMPERATURES.index(now) if now in TEMPERATURES else 0
    values = [TEMPERATURES[(i + k) % len(TEMPERATURES)] for k in (0, 1, 2)]
    return values, lambda v: c.release(panel, v, param)


async def measure(url: str, pid: int, case: Case, changes: int) -> Cost:
    async with StreamlitClient(url, case.path, timeout=120) as c:
        live = live_release(c, case.label)
        if live:
            values, change = live
        else:
            w = slider_of(c, case.label)
            values = three_values(w)

            def change(v, label=w.label):
                return c.change(label, v)

        seq = [values[(i + 1) % 3] for i in range(6 + changes)]  # never "change" to the value it shows
        cpu, wall, kb, errors = [], [], [], 0
        for i, v in enumerate(seq):
            c0 = cpu_seconds(pid)
            r = await change(v)
            c1 = cpu_seconds(pid)
            if i >= 6:  # two warm-up passes over the three values
                cpu.append(1e3 * (c1 - c0))
                wall.append(1e3 * r.seconds)
                kb.append(r.wire_bytes / 1024)
                errors += not r.ok
        return Cost(statistics.median(cpu), statistics.median(wall), statistics.median(kb), errors, len(cpu))


def page_list(url: str) -> list[tuple[str, str]]:
    async def get():
        async with StreamlitClient(url, "") as c:
            return c.app_pages

    return asyncio.run(get())


def cost_mode(args, flags_for) -> None:
    columns: dict[str, dict[str, Cost | str]] = {}
    order: list[str] = []
    for gc in args.gc_modes:
        with start_server(args.cores, flags_for(gc), app_dir=args.app_dir) as server:
            pages = [p for p in page_list(server.url) if not args.pages or args.pages & set(p)]
            for case in cases(pages):
                if args.pages and not any(case.path.startswith(p) for _, p in pages):
                    continue
                if case.title not in order:
                    order.append(case.title)
                try:
                    columns.setdefault(case.title, {})[gc] = asyncio.run(
                        measure(server.url, server.pid, case, args.changes)
                    )
                except Exception as exc:  # noqa: BLE001 - one page failing is reported in its row
                    columns.setdefault(case.title, {})[gc] = f"{type(exc).__name__}: {exc}"[:60]
                print(f"  GC {gc}: {case.title}: {columns[case.title][gc]}", flush=True)
    header = ["page"] + [f"CPU ms, GC {g}" for g in args.gc_modes]
    header += ["GC on / off"] if len(args.gc_modes) == 2 else []
    header += [f"wall ms, GC {g}" for g in args.gc_modes] + ["KB per change", "errors"]
    rows = []
    for title in order:
        got = columns[title]
        costs = [got.get(g) for g in args.gc_modes]
        if not all(isinstance(c, Cost) for c in costs):  # the reason once, e.g. the home page has no slider
            reason = next(c for c in costs if isinstance(c, str)).split(": ", 1)[-1]
            rows.append([title, reason] + [""] * (len(header) - 2))
            continue
        row = [title] + [f"{c.cpu_ms:.0f}" for c in costs]
        row += [f"{costs[0].cpu_ms / max(costs[1].cpu_ms, 1e-9):.2f}"] if len(costs) == 2 else []
        row += [f"{c.wall_ms:.0f}" for c in costs] + [f"{costs[-1].kb:.0f}", str(sum(c.errors for c in costs))]
        rows.append(row)
    print(table(header, rows))
    print(
        f"\nMedian of {args.changes} changes per page after 6 warm-up changes; one client; server "
        f"{'pinned to cores ' + args.cores if args.cores else 'unpinned'}; {machine()}, shared with other "
        f"jobs (load average {os.getloadavg()[0]:.1f} at the end)."
    )


async def memory_run(url: str, pid: int, path: str, settings: int) -> tuple[int, str, int, float]:
    async with StreamlitClient(url, f"{path}?{LARGEST}&seed=0", timeout=300) as c:
        labels = [w.label for w in c.page.widgets()]
        seeds = [x for x in ("seed", "seed (A)") if x in labels]  # Compare names its two sets (A) and (B)
        if seeds:
            label, values = seeds[0], list(range(1, settings + 1))
        elif "seq_len (tokens)" in labels:
            label, values = "seq_len (tokens)", [512 - 1 - i for i in range(settings)]
        else:
            return 0, "no seed or seq_len control", 0, 0.0
        errors, t0 = 0, time.perf_counter()
        for v in values:
            errors += not (await c.change(label, v)).ok
        return len(values), label, errors, time.perf_counter() - t0


def memory_mode(args, flags_for) -> None:
    rows = []
    with start_server(args.cores, app_dir=args.app_dir) as server:
        pages = [p for p in page_list(server.url) if not args.pages or args.pages & set(p)]
    for gc in args.gc_modes:
        for name, path in pages:
            with start_server(args.cores, flags_for(gc), app_dir=args.app_dir) as server:
                idle = rss_bytes(server.pid)
                with PeakRSS(server.pid) as peak:
                    n, label, errors, secs = asyncio.run(memory_run(server.url, server.pid, path, args.settings))
                end = rss_bytes(server.pid)
            rows.append(
                [
                    name,
                    gc,
                    f"{n} ({label})",
                    f"{idle / 2**20:.0f} MB",
                    f"{peak.peak / 2**20:.0f} MB",
                    f"{end / 2**20:.0f} MB",
                    str(errors),
                    f"{secs:.0f} s",
                ]
            )
            print(f"  {rows[-1]}", flush=True)
    print(
        table(
            ["page", "postScriptGC", "distinct settings", "RSS idle", "RSS peak", "RSS at the end", "errors", "time"],
            rows,
        )
    )
    print(f"\nLargest sizes ({LARGEST}); a fresh server per page.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=int, default=15, help="measured changes per page")
    ap.add_argument("--gc", choices=("both", "on", "off"), default="both", help="runner.postScriptGC setting(s)")
    ap.add_argument("--cores", help="pin the server with taskset -c CORES")
    ap.add_argument("--pages", help="comma-separated page names or URL paths, e.g. Playground,Step_by_step")
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout to serve (e.g. an older commit)")
    ap.add_argument("--memory", action="store_true", help="memory mode: distinct settings at the largest sizes")
    ap.add_argument("--settings", type=int, default=200, help="memory mode: distinct settings per page")
    args = ap.parse_args()
    if args.changes < 1 or args.settings < 1:
        ap.error("--changes and --settings must be >= 1")
    args.gc_modes = ["on", "off"] if args.gc == "both" else [args.gc]
    args.pages = set(args.pages.split(",")) if args.pages else None

    def flags_for(gc: str) -> tuple[str, ...]:
        return ("--runner.postScriptGC", "true" if gc == "on" else "false")

    (memory_mode if args.memory else cost_mode)(args, flags_for)


if __name__ == "__main__":
    main()
