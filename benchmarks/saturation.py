"""Softmax saturation: what a new temperature costs.

The page's sweep over d_k is measured per (seq_len, temperature). Printed per seq_len:

- AppTest (the server's side): the median wall time of a full rerun after moving the temperature to a value not
  seen before in this process, and after moving it back to one seen before. Runs are 2.1 s apart: ui/server/fairness.py
  paces a session that sends more than 6 requests in 2 s, and AppTest's back-to-back runs would count as one.
- The parts of a new temperature, called alone: the sweep (its own cache cleared, stored scores kept where the code
  stores them), the sweep at a new seq_len (every cache of the page cleared), the two marked points, the charts.
- Chromium with the server beside it (the same cores): one ArrowRight on the sidebar's temperature (a value not
  seen before) and ArrowLeft / ArrowRight back and forth (seen), from the key to the last change the page drew.

    python benchmarks/saturation.py [--repeat 5] [--seq-lens 8,64,512] [--no-browser]

Run it from another checkout (``cd old && python /path/to/benchmarks/saturation.py``) to measure that code: it
imports the page and ui.compute of the current directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()  # the checkout whose code is measured
sys.path.insert(0, str(ROOT))

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import machine  # noqa: E402
from harness.apptest import app  # noqa: E402
from ui.skeleton.controls import TEMPERATURES  # noqa: E402

PAGE = "pages/Softmax_saturation.py"
APART = 2.1  # seconds between AppTest runs (see the docstring)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def page_times(seq_len: int, repeat: int) -> tuple[float, float]:
    """(median s after a new temperature, median s after a temperature seen before), AppTest full reruns."""
    at = app(PAGE, {"seq_len": str(seq_len)}, timeout=600)
    at.run()
    fresh = [t for t in TEMPERATURES if t != 1.0][: repeat + 1]
    new, seen = [], []
    for tau in fresh:
        for value, out in ((tau, new), (1.0, seen)):
            at.sidebar.select_slider(key="ctl_temperature").set_value(value)
            time.sleep(APART)
            out.append(_timed(at.run))
            if at.exception:
                raise RuntimeError(at.exception[0].value)
    return statistics.median(new[1:]), statistics.median(seen[1:])  # the first pair warms imports


def part_times(seq_len: int, repeat: int) -> list[float]:
    """Median s of each part of a new temperature, called alone: the sweep (scores stored), the sweep at a new
    seq_len (nothing stored), the two marked points at d_k 16, the charts (their sweep and points cached)."""
    from ui import compute

    page_caches = (compute.cached_saturation_sweep, compute.cached_saturation_point, compute.cached_sweep_specs)
    stored = [getattr(compute, n) for n in ("cached_score_samples", "cached_upstream") if hasattr(compute, n)]
    parts: list[list[float]] = [[], [], [], []]
    compute.cached_saturation_sweep(seq_len, 1.0)  # scores stored, where the code stores them
    for i in range(repeat):
        tau = 1.0 + 0.01 * (i + 1)
        for f in page_caches:
            f.cache.clear()
        parts[0].append(_timed(lambda: compute.cached_saturation_sweep(seq_len, tau)))
        for f in (*page_caches, *stored):
            f.cache.clear()
        parts[1].append(_timed(lambda: compute.cached_saturation_sweep(seq_len, tau)))
        parts[2].append(
            _timed(
                lambda: (
                    compute.cached_saturation_point(16, seq_len, True, tau),
                    compute.cached_saturation_point(16, seq_len, False, tau),
                )
            )
        )
        parts[3].append(_timed(lambda: compute.cached_sweep_specs(seq_len, tau, 16, True)))
    return [statistics.median(p) for p in parts]


# From the next key on the focused slider to the last change drawn in the main area, in ms: resolves once the script has
# finished and nothing has changed for 500 ms (null after 60 s).
KEY_TO_LAST_CHANGE = """() => { window.__aeProbe = (async () => {
    const main = document.querySelector('[data-testid="stMain"]');
    const app = document.querySelector('[data-testid="stApp"]');
    let t0 = null, last = null;
    const obs = new MutationObserver(() => { if (t0 !== null) last = performance.now(); });
    obs.observe(main, {subtree: true, childList: true, attributes: true, characterData: true});
    document.addEventListener('keydown', () => { t0 = performance.now(); }, {once: true, capture: true});
    return await new Promise(resolve => {
        const started = performance.now();
        const poll = setInterval(() => {
            const idle = app.getAttribute('data-test-script-state') === 'notRunning';
            const quiet = last !== null && performance.now() - last > 500;
            if ((t0 !== null && idle && quiet) || performance.now() - started > 60000) {
                clearInterval(poll); obs.disconnect(); resolve(last === null ? null : last - t0);
            }
        }, 50);
    });
})(); }"""  # kept on window: evaluate() would wait for a returned promise, and the key comes after


def _key(page, key: str) -> float:
    """ms from ``key`` on the sidebar's temperature slider to the last change the page drew."""
    slider = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[aria-label^="temperature"]').first
    slider.focus()
    page.evaluate(KEY_TO_LAST_CHANGE)
    page.keyboard.press(key)
    return page.evaluate("() => window.__aeProbe")


def browser_times(seq_lens: list[int], repeat: int) -> list[list]:
    """Per seq_len: [T, median ms key -> last change for a new temperature, for one seen before], in Chromium."""
    from playwright.sync_api import sync_playwright

    from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app

    rows = []
    with streamlit_server() as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        for T in seq_lens:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            page.goto(f"{base}/Softmax_saturation?seq_len={T}&temperature=0.1")
            wait_for_app(page, 120_000)
            new, seen = [], []
            for _ in range(repeat + 1):  # a step up (new), back down (seen), up again (seen); then the next step up
                new.append(_key(page, "ArrowRight"))
                seen += [_key(page, "ArrowLeft"), _key(page, "ArrowRight")]
            ctx.close()
            rows.append([T, f"{statistics.median(new[1:]):.0f}", f"{statistics.median(seen[2:]):.0f}"])
            print(".", end="", file=sys.stderr, flush=True)
        browser.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seq-lens", default="8,64,512")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    seq_lens = [int(s) for s in args.seq_lens.split(",")]
    rows = []
    for T in seq_lens:
        new, seen = page_times(T, args.repeat)
        sweep, sweep_cold, points, specs = part_times(T, args.repeat)
        rows.append(
            [T, f"{new:.2f}", f"{seen:.2f}", f"{sweep:.2f}", f"{sweep_cold:.2f}", f"{points:.3f}", f"{specs:.3f}"]
        )
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(
        f"Softmax saturation at {ROOT.name}, d_model 64 / 4 heads (d_k 16): AppTest full reruns {APART} s apart, median "
        f"of {args.repeat}; the parts alone (seconds).\n"
    )
    headers = ["seq_len", "new temperature (s)", "seen temperature (s)", "sweep, new temperature (s)",
               "sweep, new seq_len (s)", "2 points (s)", "charts (s)"]  # fmt: skip
    print(table(headers, rows))
    if not args.no_browser:
        print(
            "\nChromium (1400 x 1000) with the server on the same cores: one key on the sidebar's temperature, from "
            f"the key to the last change drawn, median of {args.repeat} (ms).\n"
        )
        print(table(["seq_len", "new temperature (ms)", "seen temperature (ms)"], browser_times(seq_lens, args.repeat)))
    print(f"\n{machine()}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
