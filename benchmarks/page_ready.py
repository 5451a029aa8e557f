"""Navigation -> usable, and where the time goes, in Chromium with its CPU throttled (a slow laptop) and not.

*Usable*, measured in the page (an init script polls every 50 ms; its times are ``performance.now()``, which
counts from the navigation's start):

- the page's title (its h1) is drawn and the server's run has finished (the app's script state is "notRunning",
  no skeleton and no running-man left; the title comes first in a run, so "notRunning" after it is the run's end);
- its first control (an input, a slider, a button of the main area or the sidebar) is on screen and enabled;
- every map it has drawn: each chart of the main area holds its marks, each image has loaded, each live map has
  drawn a frame, each heatmap drawn on a canvas is drawn (none waits for the module: ui/draw/heatmap_mount.js).

The *first screen* is reached earlier: the title and the first control as above, the main area filled past the
window's bottom (or the run finished), and every map in the window drawn; the rest of the page may still arrive.

Two ways to get to a page, each a row:

- *open (cold)*: the link opened in a new browser profile, nothing cached;
- *from the sidebar*: a tap on the page's link in the sidebar of another page (Home): no new document, the same
  websocket, the server runs the page (at its default setting: pages opened with a setting in their address have
  no such row).

Where the time goes (ms from the navigation, or from the tap): the document and Streamlit's scripts until the
websocket is made ("scripts"), until the first message of the server ("first message"), until the last message
before usable ("last message": the server's run, drawn as it arrives), and the rest ("drawing"); beside them the
main thread's JavaScript and layout time (DevTools' Performance metrics, ScriptDuration and Layout +
RecalcStyle), the bytes received (HTTP transfer and websocket), and the server's CPU over the navigation.

The server is not throttled; it has drawn every page once before the runs. Medians of ``--repeat`` runs,
throttled and not throttled alternating so that both see the same machine.

Beside the app, in the same run, a floor app (``benchmarks/floor_app``: a title, a formula, a slider and one 8 x 8
Altair heatmap, two pages) served by the same Streamlit: what Streamlit itself costs to open a small page, the
way to it and the throttling alike. Each row of the app says how many times the floor's time it took, and a
summary gives each way's median and slowest page against the floor. ``--before DIR`` serves another checkout too,
page by page in turn with the app, for a before and after in one run; ``--every-page`` walks Home and every page at
its defaults instead of the scenarios below.

    python benchmarks/page_ready.py [--repeat 3] [--throttle 4] [--pages "Playground,Compare"] [--app-dir DIR]
        [--every-page] [--before DIR] [--no-floor]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine, size_query  # noqa: E402
from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server  # noqa: E402

PAGES = {
    "Home": "",
    "Playground, default (8 tokens, 4 heads)": "Playground",
    "Playground, 128 tokens x 8 heads": f"Playground?{size_query(128, 8)}",
    'Compare, "Why scale?"': "Compare?preset=2_why_scale",
    "Multi-head": "Multi-head",
    "Transformer block": "Transformer_block",
    "Step by step": "Step_by_step",
}

# The probe, in every document before Streamlit's own scripts: the websocket's traffic and the usable milestones.
PROBE = """(() => {
    const R = window.__aeReady = {wsCreated: null, firstSent: null, firstRecv: null, lastRecv: null, wsBytes: 0,
        since: 0, firstScreen: null, usable: null, title: null};
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            R.wsCreated = R.wsCreated ?? performance.now();
            this.addEventListener('message', (e) => {
                const now = performance.now();
                R.wsBytes += e.data.byteLength ?? e.data.size ?? e.data.length ?? 0;
                if (now >= R.since && R.usable === null) { R.firstRecv = R.firstRecv ?? now; R.lastRecv = now; }
            });
        }
        send(data) { if (R.usable === null) R.firstSent = R.firstSent ?? performance.now(); return super.send(data); }
    };
    const deep = (root, sel, out = []) => {  // querySelectorAll through components' shadow roots
        root.querySelectorAll(sel).forEach(e => out.push(e));
        root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) deep(e.shadowRoot, sel, out); });
        return out;
    };
    const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const onScreen = (e) => { const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && r.top < innerHeight && r.bottom > 0; };
    const drawn = (main, where) => {  // every map that ``where`` accepts has drawn
        for (const c of main.querySelectorAll('[data-testid="stVegaLiteChart"]'))
            if (where(c) && !c.querySelector('svg path, svg rect, canvas')) return false;
        for (const img of main.querySelectorAll('[data-testid="stImage"] img'))
            if (where(img) && !(img.complete && img.naturalWidth > 0)) return false;
        for (const live of deep(main, '.ae-live, .ae-outputs'))
            if (where(live) && !(Number(live.getAttribute('data-frames')) > 0)) return false;
        if (deep(main, '.ae-hm-wait').length) return false;  // a canvas heatmap not drawn yet (ui/draw/heatmap_mount.js)
        return true;
    };
    const check = () => {
        if (R.usable !== null) return;
        const app = document.querySelector('[data-testid="stApp"]');
        const main = document.querySelector('[data-testid="stMainBlockContainer"]');
        if (!app || !main) return;
        const state = app.getAttribute('data-test-script-state');
        // the page's own title: its run has started (it sends the title first), so "notRunning" is its end
        const h1 = main.querySelector('h1');
        if (!h1 || (R.title !== null && h1.textContent === R.title)) return;
        const control = [...document.querySelectorAll(
            '[data-testid="stSidebar"] :is(input, button, [role="slider"]), ' +
            '[data-testid="stMain"] :is(input, button, [role="slider"])')].find(
            e => shown(e) && !e.disabled && e.getAttribute('aria-disabled') !== 'true');
        if (!control) return;
        const finished = state === 'notRunning'
            && !document.querySelector('[data-testid="stSkeleton"], [data-testid="stStatusWidget"]');
        // the first screen: filled (or the run has finished) and what it shows drawn
        if (R.firstScreen === null && (finished || main.getBoundingClientRect().bottom > innerHeight)
                && drawn(main, onScreen))
            R.firstScreen = performance.now();
        if (finished && drawn(main, shown)) R.usable = performance.now();
    };
    setInterval(check, 50);
    // a tap on a page link: measure again from the tap, for the page that follows
    window.__aeFrom = (t) => { Object.assign(R, {since: t, firstSent: null, firstRecv: null, lastRecv: null,
        firstScreen: null, usable: null, wsBytes: 0,
        title: document.querySelector('[data-testid="stMainBlockContainer"] h1').textContent}); };
})();"""

METRICS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def _metrics(cdp) -> dict[str, float]:
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: got.get(k, 0.0) for k in METRICS}


def _http_bytes(page) -> int:
    return page.evaluate(
        """() => [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
            .reduce((s, e) => s + (e.transferSize || 0), 0)"""
    )


WHY = """() => {  // what keeps the page from being usable
    const app = document.querySelector('[data-testid="stApp"]');
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const h1 = main && main.querySelector('h1');
    const charts = main ? [...main.querySelectorAll('[data-testid="stVegaLiteChart"]')].filter(
        c => c.getBoundingClientRect().width > 0 && !c.querySelector('svg path, svg rect, canvas')).length : 0;
    return `script ${app && app.getAttribute('data-test-script-state')}, title ${h1 && h1.textContent}, ` +
        `${charts} charts undrawn, running man ${!!document.querySelector('[data-testid="stStatusWidget"]')}`;
}"""


def _wait_usable(page, timeout_s: float = 90) -> dict:
    """The probe's times once the page is usable; with ``usable`` None (and why) if it is not within the time."""
    try:
        page.wait_for_function("() => window.__aeReady && window.__aeReady.usable !== null", timeout=timeout_s * 1e3)
    except PlaywrightTimeout:
        r = page.evaluate("() => ({...window.__aeReady})")
        print(f"\nnot usable in {timeout_s:g} s: {page.evaluate(WHY)}", file=sys.stderr)
        return {**r, "usable": None}
    return page.evaluate("() => ({...window.__aeReady})")


def measure(page, cdp, proc, go, start_of) -> dict:
    """Navigate with ``go()`` and measure until usable; ``start_of(probe)`` is the navigation's start in the
    probe's clock (0 for a new document, the tap's time for a sidebar link)."""
    before, cpu0 = _metrics(cdp), cpu_seconds(proc.pid)
    go()
    r = _wait_usable(page)
    after, cpu = _metrics(cdp), cpu_seconds(proc.pid) - cpu0
    t0 = start_of(r)
    if r["usable"] is None:
        return None
    if t0 == 0:  # a new document: DevTools' metrics count from its start
        before = dict.fromkeys(METRICS, 0.0)
    http = _http_bytes(page)
    ws_at = r["wsCreated"] if t0 == 0 else t0
    return {
        "first screen": r["firstScreen"] - t0,
        "usable": r["usable"] - t0,
        "scripts": ws_at - t0,
        "first message": (r["firstRecv"] or r["usable"]) - ws_at,
        "last message": (r["lastRecv"] or r["usable"]) - (r["firstRecv"] or r["usable"]),
        "drawing": r["usable"] - (r["lastRecv"] or r["usable"]),
        "js": 1e3 * (after["ScriptDuration"] - before["ScriptDuration"]),
        "layout": 1e3 * sum(after[k] - before[k] for k in METRICS[1:]),
        "http MB": http / 1e6 if t0 == 0 else 0.0,
        "ws MB": r["wsBytes"] / 1e6,
        "server CPU": 1e3 * cpu,
    }


def run_page(browser, base, proc, query: str, throttle: float) -> dict[str, dict]:
    """The two ways to the page (a cold open, a tap in Home's sidebar), each measured once."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(PROBE)
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Performance.enable")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    url = f"{base}/{query}"
    out = {"open (cold)": measure(page, cdp, proc, lambda: page.goto(url), lambda r: 0.0)}
    if query and "?" not in query:  # from Home's sidebar: a tap on the page's link (it opens the page's defaults)
        page.goto(base + "/")
        _wait_usable(page)
        # the app's sidebar links are relative ("Playground"), Streamlit's own navigation's absolute (the floor app)
        link = page.locator(f'[data-testid="stSidebar"] :is(a[href="{query}"], a[href$="/{query}"])').first
        tap = {}

        def go():
            tap["t"] = page.evaluate("() => { const t = performance.now(); window.__aeFrom(t); return t; }")
            link.click()

        out["from the sidebar"] = measure(page, cdp, proc, go, lambda r: tap["t"])
    ctx.close()
    return out


COLUMNS = ["first screen", "usable", "scripts", "first message", "last message", "drawing", "js", "layout", "http MB", "ws MB",
           "server CPU"]  # fmt: skip
FLOOR_APP = ROOT / "benchmarks" / "floor_app"
FLOOR = "Floor app (Streamlit's own: title, formula, slider, 8 x 8 heatmap)"


def every_page() -> dict[str, str]:
    """Home and every page of the app at its defaults, in the sidebar's order."""
    from ui.skeleton.registry import PAGES as REGISTRY

    return {"Home": ""} | {info.label: Path(info.path).stem for info in REGISTRY}


def _rate(rate: float) -> str:
    return f"{rate:g}x slower" if rate != 1 else "not throttled"


def _summary(meds: dict[tuple, float], apps: list[str], rates: list[float]) -> str:
    """Per app, way and CPU: the median and the largest time to usable over its pages, and each against the floor
    app's, measured in the same run."""
    rows = []
    for app in apps:
        for way in ("from the sidebar", "open (cold)"):
            for rate in rates:
                got = {n: v for (a, n, w, r), v in meds.items() if (a, w, r) == (app, way, rate)}
                floor = meds.get(("floor", FLOOR, way, rate))
                if not got or not floor:
                    continue
                mid, (worst, top) = statistics.median(got.values()), max(got.items(), key=lambda kv: kv[1])
                rows.append([app, way, _rate(rate), len(got), f"{mid / 1e3:.2f}", f"{worst} {top / 1e3:.2f}",
                             f"{floor / 1e3:.2f}", f"{mid / floor:.1f}x", f"{top / floor:.1f}x"])  # fmt: skip
    head = ["app", "how", "Chromium's CPU", "pages", "median -> usable (s)", "slowest (s)", "floor app (s)",
            "median / floor", "slowest / floor"]  # fmt: skip
    return table(head, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--throttle", type=float, default=4.0, help="Chromium's CPU this many times slower (4: a slow laptop)"
    )
    ap.add_argument("--pages", default="", help="comma-separated parts of page names (default: all)")
    ap.add_argument("--every-page", action="store_true", help="Home and every page at its defaults, not the scenarios")
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the app to serve (another checkout, for a before)")
    ap.add_argument("--before", type=Path, help="another checkout served beside the app, measured in turn with it")
    ap.add_argument("--no-floor", action="store_true", help="do not serve the floor app beside the app")
    args = ap.parse_args()
    scenarios = every_page() if args.every_page else PAGES
    chosen = {n: q for n, q in scenarios.items() if not args.pages or any(s in n for s in args.pages.split(","))}
    rates = [args.throttle, 1.0] if args.throttle != 1 else [1.0]
    apps = {"after": args.app_dir} | ({"before": args.before} if args.before else {})
    runs: dict[tuple, list[dict]] = {}
    with contextlib.ExitStack() as stack, sync_playwright() as p:
        served = {app: stack.enter_context(streamlit_server(cwd=d)) for app, d in apps.items()}
        pages = {app: chosen for app in apps}
        if not args.no_floor:
            served["floor"] = stack.enter_context(streamlit_server(cwd=FLOOR_APP))
            pages["floor"] = {FLOOR: "Heatmap"}
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        for app, (base, proc) in served.items():  # a server's first run of a page (imports, caches) is not measured
            for query in pages[app].values():
                run_page(browser, base, proc, query, 1.0)
        for _ in range(args.repeat):
            for i in range(max(map(len, pages.values()))):  # the apps in turn, page by page: the same machine
                for app, (base, proc) in served.items():
                    todo = list(pages[app].items())
                    name, query = todo[i % len(todo)]
                    if app == "floor" and i % max(1, len(chosen) // 3):
                        continue  # the floor app three times a round, spread over it
                    for rate in rates:
                        for way, m in run_page(browser, base, proc, query, rate).items():
                            runs.setdefault((app, name, way, rate), []).append(m)  # None: not usable in time
                        print(".", end="", file=sys.stderr, flush=True)
        browser.close()
    print()
    rows, meds = [], {}
    for key in sorted(
        runs,
        key=lambda k: (k[0] != "floor", k[0], list(scenarios).index(k[1]) if k[1] in scenarios else -1, k[2], -k[3]),
    ):
        app, name, way, rate = key
        ok = [m for m in runs[key] if m is not None]
        label = [app, name, way, _rate(rate)]
        if not ok:
            rows.append([*label, "not usable in 90 s"])
            continue
        med = {k: statistics.median(m[k] for m in ok) for k in COLUMNS}
        meds[key] = med["usable"]
        floor = meds.get(("floor", FLOOR, way, rate))
        cells = [f"{med['first screen'] / 1e3:.2f}", f"{med['usable'] / 1e3:.2f}"]
        cells += [f"{med['usable'] / floor:.1f}x" if floor and app != "floor" else ""]
        cells += [f"{med[k]:.0f}" for k in COLUMNS[2:8]]
        cells += [f"{med['http MB']:.2f}", f"{med['ws MB']:.2f}", f"{med['server CPU']:.0f}"]
        rows.append([*label, *cells])
    head = ["app", "page", "how", "Chromium's CPU", "-> first screen (s)", "-> usable (s)", "/ floor", "scripts (ms)",
            "-> first message (ms)", "-> last message (ms)", "drawing (ms)", "JavaScript (ms)", "layout + style (ms)",
            "HTTP MB", "websocket MB", "server CPU (ms)"]  # fmt: skip
    print(table(head, rows))
    if not args.no_floor:
        print()
        print(_summary(meds, [a for a in apps], rates))
    print(f"\nmedians of {args.repeat} runs; {machine()}")


if __name__ == "__main__":
    main()
