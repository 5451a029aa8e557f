"""A class on one server: N students speaking Streamlit's websocket protocol (no browsers), one real Chromium
tab beside them, and the server's latency, CPU and memory.

Each student opens the scenario's link (a websocket session, see benchmarks/protocol.py), waits until everyone
is in, then moves one slider ``--changes`` times with a random think time between changes (or, with ``--burst``,
all students change at the same moment, round after round). Every change is timed from the BackMsg to the
``script_finished`` ForwardMsg and verified: the page that comes back shows the new value, in the widget and in
the URL. The server runs pinned with ``taskset`` (``--cores``); CPU time and peak memory are the server
process's. A real Chromium tab moves the same slider meanwhile and reports what one student waits for the page
to be redrawn.

    python benchmarks/classroom.py --scenario why_scale --cores 0,1            # 30 students, 10 changes each
    python benchmarks/classroom.py --scenario why_scale --burst --cores 0,1
    python benchmarks/classroom.py --scenario playground_128x8 --capacity 10,20,30,45,60 --cores 0,1
    python benchmarks/classroom.py --url http://host/app --server-pid 1234 ...  # an existing server (nginx)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.protocol import PeakRSS, RunResult, StreamlitClient, Widget, cpu_seconds, machine, start_server  # noqa: E402
from harness.server import CHROMIUM_FLAGS  # noqa: E402
from ui.classroom.presets import load_presets  # noqa: E402
from ui.skeleton.controls import TEMPERATURES  # noqa: E402

CAPACITY_THINK = (1.5, 2.5)  # seconds between a student's changes in --capacity runs: a change about every 2 s

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid="stSkeleton"]')
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && document.querySelector('[data-testid="stMainBlockContainer"] h1');
}"""
WATCH_JS = """() => {
  window.__runs = [];
  let last = null;
  setInterval(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    if (state !== last) { window.__runs.push(state); last = state; }
  }, 5);
}"""


ARRIVE = 10.0  # seconds over which the students open the link
OPEN_TIMEOUT = 300.0  # seconds a first page may take before the student counts as failed
CHANGE_TIMEOUT = 120.0  # seconds a change may take before it counts as an error
REDRAW_TIMEOUT_MS = 180000  # the Chromium tab's wait for one redraw


@dataclass(frozen=True)
class Scenario:
    """What the class opens and which slider the students move."""

    name: str  # command-line name
    title: str  # row title in the report
    path: str  # page and query string, as in the shared link
    label: str  # label of the slider every student moves (with the live maps off)
    param: str  # URL parameter that must name the new value after a change
    panel: str = ""  # the live maps' panel whose temperature is that slider (Compare: "A")


def scenarios() -> dict[str, Scenario]:
    """One scenario per preset (its link; Compare presets move A's temperature) and the large Playground."""
    out = {}
    for p in load_presets()[0]:
        name = p.slug.split("_", 1)[1] if p.slug[0].isdigit() else p.slug
        page = Path(p.page).stem.replace("_", " ")
        compare = p.page.endswith("Compare.py")
        label, param = ("temperature (A)", "a_temperature") if compare else ("temperature", "temperature")
        out[name] = Scenario(
            name, f'{page}, preset "{p.name}"', p.link("").lstrip("/"), label, param, "A" if compare else ""
        )
    out["playground_128x8"] = Scenario(
        "playground_128x8",
        "Playground, 128 tokens x 8 heads (d_model 512)",
        "Playground?seq_len=128&d_model=512&heads=8",
        "temperature",
        "temperature",
    )
    return out


LIVE_TOGGLE = "live maps (redraw in the browser while a control moves)"


def pick(w: Widget, rng: random.Random):
    """A value for widget ``w`` other than the one it shows: another option, or another number in range."""
    if w.options:
        return rng.choice([o for o in w.options if o != w.value])
    if w.kind == "slider":
        lo, hi = int(w.proto.min), int(w.proto.max)
        return rng.choice([v for v in range(lo, hi + 1) if v != w.value][:200])
    raise ValueError(f"the benchmark moves sliders; {w.label!r} is a {w.kind}")


@dataclass(frozen=True)
class Load:
    """What one load run measured."""

    students: int  # sessions that were opened
    results: tuple[RunResult, ...]  # one per change
    open_errors: tuple[str, ...]  # sessions that failed to open
    cpu: float  # server CPU seconds during the changes (nan without a pid)
    wall: float  # seconds from the first change to the last
    peak_rss: int  # bytes, the whole run (0 without a pid)
    tab: tuple[float, ...]  # the Chromium tab's waits, seconds
    tab_note: str  # why there are no tab figures, if there are none
    client_cpu: float = float("nan")  # CPU seconds of this process (every student's client) during the changes


async def student(
    url: str,
    sc: Scenario,
    changes: int,
    think: tuple[float, float],
    rng: random.Random,
    results: list,
    errors: list,
    opened: asyncio.Barrier,
    rounds: asyncio.Barrier | None,
    arrive: float,
) -> None:
    client = StreamlitClient(url, sc.path, timeout=CHANGE_TIMEOUT)
    ok = False
    try:
        await asyncio.sleep(rng.uniform(0, arrive))  # students open the link over a few seconds
        r = await client.open(timeout=OPEN_TIMEOUT)  # not timed: a busy server may take long to draw 30 first pages
        ok = r.ok
        # the Playground's and Compare's temperatures are the live maps' own controls (drawn in the browser) while
        # they are on, as they are when a student opens the link: the student lets go of the maps' slider, as a
        # browser reports it (benchmarks/protocol.StreamlitClient.release)
        live = ok and sc.label not in {w.label for w in client.page.widgets()}
        if not ok:
            errors.append("; ".join(r.errors) or r.status)
    except Exception as exc:  # noqa: BLE001 - a student who cannot connect is a result
        errors.append(f"{type(exc).__name__}: {exc}"[:200])
    await opened.wait()
    for _ in range(changes):
        if rounds is not None:
            await rounds.wait()
        else:
            await asyncio.sleep(rng.uniform(*think))
        if ok:
            try:
                if live:
                    now = client.live_settings()[sc.panel]["temperature"]
                    tau = rng.choice([t for t in TEMPERATURES if t != now])
                    r = await client.release(sc.panel, tau, sc.param)
                else:
                    r = await client.change(sc.label, pick(client.page.widget(sc.label), rng), param=sc.param)
            except LookupError as exc:
                r = RunResult(0.0, 0, 0, 0, "closed", (str(exc)[:200],), False)
            results.append(r)
            ok = r.status not in ("closed", "timeout")
        if rounds is not None:
            await rounds.wait()
            await asyncio.sleep(think[0])
    await client.close()


def niced(exe: str, nice: int, folder: Path) -> str:
    """A script in ``folder`` that runs ``exe`` with its arguments at niceness ``nice`` (``exe`` itself for 0).

    The tab stands for one student's laptop. On this machine it shares the server's two cores, and Chromium
    rendering a page of charts takes more CPU than the server spends on the change: at the same priority it
    doubled the server's CPU per change and its p95. At nice 19 it gets only the CPU the server leaves, as a
    browser on another machine would take none of it; its waits then include that lower priority."""
    if nice == 0:
        return exe
    script = folder / "chromium-niced"
    script.write_text(f'#!/bin/sh\nexec nice -n {int(nice)} "{exe}" "$@"\n')
    script.chmod(0o755)
    return str(script)


async def chromium_tab(
    url: str,
    sc: Scenario,
    opened: asyncio.Event,
    done: asyncio.Event,
    changes: int,
    think: tuple[float, float],
    rng: random.Random,
    nice: int = 19,
) -> tuple[list[float], str]:
    """Open the link in Chromium (at niceness ``nice``, see :func:`niced`), then click the slider's track until
    the load ends; the waits to redraw."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        opened.set()
        return [], "no Chromium installed"
    folder = Path(tempfile.mkdtemp(prefix="classroom-tab-"))
    exe = niced(exe, nice, folder)
    from playwright.async_api import async_playwright

    waits: list[float] = []
    note = ""
    async with async_playwright() as p:
        browser = None
        try:
            browser = await p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
            page = await browser.new_page(viewport={"width": 1300, "height": 900})
            await page.goto(f"{url.rstrip('/')}/{sc.path}", timeout=REDRAW_TIMEOUT_MS)
            await page.wait_for_function(IDLE_JS, timeout=REDRAW_TIMEOUT_MS, polling=50)
            slider = (
                page.locator('[data-testid="stSlider"]')
                .filter(has=page.locator(f'input[type="range"][aria-label^="{sc.label}"]'))
                .first
            )
            if not await slider.count():
                # the slider is the live maps' own control: the tab turns them off, as one student may, and moves
                # the page's slider (the protocol students let go of the live maps' slider)
                await page.get_by_text(LIVE_TOGGLE).first.click()
                await slider.wait_for(timeout=REDRAW_TIMEOUT_MS)
                await page.wait_for_function(IDLE_JS, timeout=REDRAW_TIMEOUT_MS, polling=50)
            await page.evaluate(WATCH_JS)
            opened.set()
            i = 0
            while not done.is_set() and i < changes:
                await asyncio.sleep(rng.uniform(*think))
                await slider.scroll_into_view_if_needed()  # sidebar sliders may sit below the fold
                box = await slider.locator('input[type="range"]').first.evaluate(
                    "e => { const r = e.closest('[data-orientation]').getBoundingClientRect(); "
                    "return {x: r.x, y: r.y, w: r.width, h: r.height}; }"
                )
                frac = (0.35, 0.65)[i % 2]  # two far-apart points of the track: always another value
                before, url_before = await page.evaluate("window.__runs.length"), page.url
                t0 = await page.evaluate("performance.now()")
                await page.mouse.click(box["x"] + box["w"] * frac, box["y"] + box["h"] / 2)
                await page.wait_for_function(
                    f"""() => (window.__runs.slice({before}).includes('running')
                               || window.location.href !== {json.dumps(url_before)}) && ({IDLE_JS})()""",
                    timeout=REDRAW_TIMEOUT_MS,
                    polling=20,
                )
                waits.append((await page.evaluate("performance.now()") - t0) / 1000)
                i += 1
            if await page.locator('[data-testid="stException"]').count():
                note = "the tab shows an exception"
        except Exception as exc:  # noqa: BLE001 - the tab is reported beside the load, never stops it
            note = f"tab failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            opened.set()
        finally:
            if browser is not None:
                await browser.close()
            shutil.rmtree(folder, ignore_errors=True)
    return waits, note


async def load(
    url: str,
    pid: int | None,
    sc: Scenario,
    students: int,
    changes: int,
    think: tuple[float, float],
    burst: bool,
    browser: bool,
    seed: int,
    tab_nice: int = 19,
) -> Load:
    results: list[RunResult] = []
    errors: list[str] = []
    opened = asyncio.Barrier(students + 1)
    rounds = asyncio.Barrier(students) if burst else None
    tab_open, done = asyncio.Event(), asyncio.Event()
    with PeakRSS(pid) if pid else NoPeak() as peak:
        tab = (
            asyncio.create_task(
                chromium_tab(url, sc, tab_open, done, changes, think, random.Random(seed + 1), tab_nice)
            )
            if browser
            else None
        )
        tasks = [
            asyncio.create_task(
                student(
                    url, sc, changes, think, random.Random(seed * 1000 + i), results, errors, opened, rounds, ARRIVE
                )
            )
            for i in range(students)
        ]
        if tab is not None:
            await tab_open.wait()
        await opened.wait()  # every student is in: the changes begin
        cpu0, t0, own0 = cpu_seconds(pid) if pid else float("nan"), time.perf_counter(), time.process_time()
        await asyncio.gather(*tasks)
        cpu1, wall = cpu_seconds(pid) if pid else float("nan"), time.perf_counter() - t0
        own = time.process_time() - own0  # the clients share the server's cores here: their CPU is taken from it
        done.set()
        waits, note = await tab if tab is not None else ([], "not run (--no-browser)")
    return Load(students, tuple(results), tuple(errors), cpu1 - cpu0, wall, peak.peak, tuple(waits), note, own)


class NoPeak:
    peak = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def q(values, p: float) -> float:
    """The p-quantile (0..1) of ``values``, nearest rank."""
    s = sorted(values)
    return s[max(0, math.ceil(p * len(s)) - 1)] if s else float("nan")


def row(title: str, r: Load) -> list[str]:
    lat = [x.seconds for x in r.results]
    n = len(r.results)
    errs = sum(1 for x in r.results if x.errors) + len(r.open_errors)
    verified = sum(1 for x in r.results if x.verified)
    kb = statistics.mean(x.wire_bytes for x in r.results) / 1024 if n else float("nan")
    tab = f"{statistics.median(r.tab):.2f} / {max(r.tab):.2f} s ({len(r.tab)})" if r.tab else r.tab_note
    return [
        title,
        str(r.students),
        f"{q(lat, 0.5):.2f} s",
        f"{q(lat, 0.95):.2f} s",
        f"{max(lat, default=float('nan')):.2f} s",
        str(errs),
        f"{verified} / {n}",
        f"{kb:.0f} KB",
        f"{1e3 * r.cpu / max(n, 1):.0f} ms",
        f"{r.peak_rss / 2**20:.0f} MB" if r.peak_rss else "n/a",
        f"{100 * r.cpu / r.wall:.0f}%",
        f"{1e3 * r.client_cpu / max(n, 1):.0f} ms",
        tab,
    ]


def table(header: list[str], rows: list[list[str]]) -> str:
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


HEADER = [
    "scenario",
    "students",
    "p50",
    "p95",
    "max",
    "errors",
    "verified",
    "per change",
    "server CPU / change",
    "server peak RSS",
    "server busy (% of one core)",
    "clients' CPU / change",
    "Chromium tab p50 / max",
]


def main() -> None:
    sc_all = scenarios()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", action="append", choices=sorted(sc_all), help="repeatable; default why_scale")
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--changes", type=int, default=10, help="slider changes per student")
    ap.add_argument("--think", default="1-3", help="seconds between a student's changes, 'lo-hi' (uniform)")
    ap.add_argument("--burst", action="store_true", help="all students change at the same moment, round by round")
    ap.add_argument("--cores", help="pin the server with taskset -c CORES, e.g. 0,1")
    ap.add_argument(
        "--flag",
        action="append",
        default=[],
        help="extra `streamlit run` flag, e.g. --flag=--runner.postScriptGC=false",
    )
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout to serve (e.g. an older commit)")
    ap.add_argument("--url", help="use this running server instead of starting one")
    ap.add_argument("--server-pid", type=int, help="with --url: the server's pid, for its CPU and memory")
    ap.add_argument("--no-browser", action="store_true", help="skip the real Chromium tab")
    ap.add_argument(
        "--tab-nice",
        type=int,
        default=19,
        help="niceness of the Chromium tab (0: the server's priority; it then competes for the server's cores)",
    )
    ap.add_argument(
        "--capacity",
        help=f"comma-separated student counts at --think {CAPACITY_THINK[0]:g}-{CAPACITY_THINK[1]:g}: where p95 "
        "crosses 1 s",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    lo, _, hi = args.think.partition("-")
    think = (float(lo), float(hi or lo))
    if args.students < 1 or args.changes < 1 or not 0 <= think[0] <= think[1]:
        ap.error("--students and --changes must be >= 1 and --think 'lo-hi' with 0 <= lo <= hi")
    chosen = [sc_all[n] for n in (args.scenario or ["why_scale"])]
    flags = tuple(f for fl in args.flag for f in fl.split("=", 1))
    pinned = f", taskset -c {args.cores}" if args.cores and not args.url else ""
    think_text = (
        f"{CAPACITY_THINK[0]:g}-{CAPACITY_THINK[1]:g} (a change about every 2 s)" if args.capacity else args.think
    )
    extra = ", " + " ".join(flags) if flags else ""
    print(
        f"Server: {'--url ' + args.url if args.url else 'streamlit run'}{pinned}{extra}; "
        f"{os.cpu_count()} cores on this machine, shared with the clients, the Chromium tab (nice {args.tab_nice}) "
        "and other jobs. "
        f"{'Burst: all students change at once.' if args.burst else f'Think time {think_text} s.'}\n",
        flush=True,
    )

    def run(sc: Scenario, students: int, think_: tuple[float, float], browser: bool) -> Load:
        def on(url: str, pid: int | None) -> Load:
            the_load = load(url, pid, sc, students, args.changes, think_, args.burst, browser, args.seed, args.tab_nice)
            return asyncio.run(the_load)

        if args.url:
            return on(args.url, args.server_pid)
        with start_server(args.cores, flags, app_dir=args.app_dir) as server:
            return on(server.url, server.pid)

    if args.capacity:
        counts = [int(c) for c in args.capacity.split(",")]
        for sc in chosen:
            rows, crossed, cpu_per_change = [], None, []
            for n in counts:
                r = run(sc, n, CAPACITY_THINK, False)
                cpu_per_change.append(r.cpu / max(len(r.results), 1))
                rows.append(row(sc.title, r)[:12])
                print(f"  {n} students: p95 {rows[-1][3]}", flush=True)
                if q([x.seconds for x in r.results], 0.95) > 1.0:
                    crossed = n
                    break
            print(table(HEADER[:12], rows))
            ok = [c for c in counts if crossed is None or c < crossed]
            print(
                f"\np95 stays <= 1 s up to {ok[-1] if ok else 'none'} students"
                + (f" and crosses it at {crossed}" if crossed else " (the largest count tried)")
                + "."
            )
            c = statistics.median(cpu_per_change)
            print(
                f"For comparison, the CPU bound: at {1e3 * c:.0f} ms of server CPU per change, one Streamlit process "
                f"(mostly one core: the GIL) is saturated by {2 / c:.0f} students changing every 2 s.\n"
            )
        return
    rows = []
    for sc in chosen:
        r = run(sc, args.students, think, not args.no_browser)
        rows.append(row(sc.title + (" (burst)" if args.burst else ""), r))
        print(f"  done: {rows[-1]}", flush=True)
        for e in list(r.open_errors[:3]) + [e for x in r.results for e in x.errors][:5]:
            print("  error:", e)
    print(table(HEADER, rows))
    print(f"\nLoad average (1 min) of the machine at the end: {os.getloadavg()[0]:.1f}; {machine()}.")


if __name__ == "__main__":
    main()
