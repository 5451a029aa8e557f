"""Thirty students at once: one server on 127.0.0.1, 30 browser sessions (contexts of one headless
Chromium) open a shared preset link, then each moves a slider 10 times.

Reports errors, p50/p95 time from a slider change to the page re-drawn, and the server's memory
(baseline, after one session, peak, and the increment per session).

    python benchmarks/classroom.py [--students 30] [--moves 10] [--preset 2_why_scale]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from tests.server_util import CHROMIUM_FLAGS, chromium_path, streamlit_server  # noqa: E402
from ui.presets import load_presets  # noqa: E402

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid="stSkeleton"]')
      && document.querySelector('[data-testid="stMainBlockContainer"] h1');
}"""
WATCH_JS = """() => {
  // poll (not a MutationObserver: React may replace the stApp node) and keep every state change
  window.__runs = [];
  let last = null;
  setInterval(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    if (state !== last) { window.__runs.push([state, performance.now()]); last = state; }
  }, 5);
}"""


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process."""
    rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TICK


def chromium_pids() -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == "chromium":
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


class Sampler(threading.Thread):
    """Peak server memory, and the CPU time of every Chromium process seen (kept after it exits)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.browser_cpu: dict[int, float] = {}

    def run(self):
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, rss_kb(self.pid))
            except OSError:
                return
            for pid in chromium_pids():
                try:
                    self.browser_cpu[pid] = cpu_seconds(pid)
                except OSError:
                    pass
            time.sleep(0.1)


async def student(browser, url: str, slider_label: str, moves: int, latencies: list, errors: list, ready: asyncio.Event,
                  loaded: list, n: int):
    ctx = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await ctx.new_page()
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    try:
        await page.goto(url, timeout=120000)
        await page.wait_for_function(IDLE_JS, timeout=120000, polling=50)
        loaded.append(1)
        if len(loaded) == n:
            ready.set()
        await ready.wait()
        await page.evaluate(WATCH_JS)
        slider = page.locator('[data-testid="stSlider"]').filter(
            has=page.locator(f'input[type="range"][aria-label^="{slider_label}"]')).first
        for i in range(moves):
            # click the track alternately at two positions (pointer up commits the value, like a student's click)
            box = await slider.locator('input[type="range"]').first.evaluate(
                "e => { const r = e.closest('[data-orientation]').getBoundingClientRect(); "
                "return {x: r.x, y: r.y, w: r.width, h: r.height}; }")
            frac = 0.62 if i % 2 == 0 else 0.48
            before = await page.evaluate("window.__runs.length")
            url_before = page.url
            t0 = await page.evaluate("performance.now()")
            await page.mouse.click(box["x"] + box["w"] * frac, box["y"] + box["h"] / 2)
            # a run happened after the click (its state was seen, or it rewrote the URL) and nothing is left to draw
            await page.wait_for_function(
                f"""() => (window.__runs.slice({before}).some(r => r[0] === 'running')
                           || window.location.href !== {json.dumps(url_before)}) && ({IDLE_JS})()""",
                timeout=60000, polling=20)
            t1 = await page.evaluate("performance.now()")
            latencies.append((t1 - t0) / 1000)
        count = await page.locator('[data-testid="stException"]').count()
        if count:
            errors.append(f"{count} exception element(s)")
    except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
        runs = await page.evaluate("window.__runs || null") if not page.is_closed() else None
        val = await page.locator('[data-testid="stSlider"] input[type="range"]').first.input_value() if not page.is_closed() else None
        errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]} (runs {runs}, slider {val}, url {page.url[-80:]})")
        if not ready.is_set():
            loaded.append(1)
            if len(loaded) == n:
                ready.set()
    finally:
        await ctx.close()


async def run(args) -> None:
    presets = {p.slug: p for p in load_presets()[0]}
    preset = presets[args.preset]
    slider = args.slider
    with streamlit_server() as (base, proc):
        time.sleep(1.0)
        baseline = rss_kb(proc.pid)
        sampler = Sampler(proc.pid)
        sampler.start()
        url = preset.link(base)
        async with async_playwright() as p:
            # 30 tabs of one headless browser: keep background tabs from being throttled like hidden tabs
            # of a desktop browser would be (each student's tab is in the foreground on their own machine)
            browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS + [
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows"])
            # one session first, for the memory of a single student
            one_lat, one_err, ev, ld = [], [], asyncio.Event(), []
            await student(browser, url, slider, 1, one_lat, one_err, ev, ld, 1)
            after_one = rss_kb(proc.pid)
            latencies, errors, ready, loaded = [], [], asyncio.Event(), []
            cpu_server0, cpu_browser0 = cpu_seconds(proc.pid), sum(sampler.browser_cpu.values())
            t0 = time.perf_counter()
            await asyncio.gather(*(student(browser, url, slider, args.moves, latencies, errors, ready, loaded,
                                           args.students) for _ in range(args.students)))
            wall = time.perf_counter() - t0
            cpu_server = cpu_seconds(proc.pid) - cpu_server0
            time.sleep(0.3)
            cpu_browser = sum(sampler.browser_cpu.values()) - cpu_browser0
            await browser.close()
        end = rss_kb(proc.pid)
        sampler.stop.set()
        hwm = rss_kb(proc.pid, "VmHWM")
    peak = max(sampler.peak, hwm)
    lat = sorted(latencies)
    q = statistics.quantiles(lat, n=20) if len(lat) >= 2 else lat * 19
    print(f"Preset '{preset.name}' ({preset.page}), {args.students} students in one Chromium, each moving "
          f"'{slider}' {args.moves} times; {wall:.0f} s in all.\n")
    print(table(["measure", "value", "target"], [
        ["errors on the page (exceptions, script errors)", f"{sum(not e.startswith('TimeoutError') for e in errors)}", "0"],
        ["slider changes with no re-draw within 60 s", f"{sum(e.startswith('TimeoutError') for e in errors)}", "0"],
        ["slider change → page re-drawn, p50", f"{statistics.median(lat):.2f} s" if lat else "n/a", "≤ 1 s"],
        ["slider change → page re-drawn, p95", f"{q[18]:.2f} s" if lat else "n/a", "≤ 3 s"],
        ["changes measured", f"{len(lat)}", f"{args.students * args.moves}"],
        ["server memory, idle", f"{baseline / 1024:.0f} MB", ""],
        ["server memory, after one student", f"{after_one / 1024:.0f} MB", ""],
        ["server memory, peak", f"{peak / 1024:.0f} MB", "≤ 1024 MB"],
        ["per-session increment", f"{(end - after_one) / 1024 / max(args.students, 1):.1f} MB", ""],
        ["server CPU per slider change (includes page loads)", f"{1e3 * cpu_server / max(len(lat), 1):.0f} ms", ""],
        ["CPU used: server / all browser tabs", f"{cpu_server:.0f} s / {cpu_browser:.0f} s", ""],
    ]))
    print(f"\nThe {os.cpu_count()} cores of this machine run the server and all {args.students} browser tabs: the tabs "
          f"used {cpu_browser / max(cpu_server + cpu_browser, 1e-9):.0%} of the CPU time spent.")
    for e in errors[:10]:
        print("error:", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--preset", default="2_why_scale")
    ap.add_argument("--slider", default="temperature (A)")
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
