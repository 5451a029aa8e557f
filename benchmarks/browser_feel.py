"""What a learner feels, measured in Chromium with the server beside it: live maps against the server-drawn maps.

For each scenario the page opens twice in one run, with live maps (ui/live: the browser redraws the weights) and
without (the server reruns and Vega redraws the charts, as before the live maps), and measures:

- key -> maps drawn: one ArrowRight on the temperature (the live slider, or the page's select slider) until the maps have
  changed on screen (live: the component's next frame; static: the first change inside a chart), and until the
  page has settled (the rerun that follows has finished and nothing has changed for 300 ms);
- a 1 s drag across a third of the temperature slider in 30 mouse moves: the frames in which the maps changed
  before the mouse was released, and the median time from a move to the frame that drew it (live only: the
  server-drawn maps cannot change before the release, st.slider reruns on release);
- bytes the browser received on the websocket for one full change (the seed) at the scenario's size;
- the server's CPU for one temperature change (live: the release; static: the page's select slider), from the
  server process's CPU time over the change.

With ``--throttle 4`` Chromium's CPU runs 4x slower for the page (DevTools' CPU throttling, the protocol's
Emulation.setCPUThrottlingRate), as on a Chromebook-class laptop; the server is not throttled. Every row also
says how long the page took from navigation until it was usable (its script finished, nothing left to draw), on a
server that has drawn the page once before; benchmarks/page_ready.py measures that alone, and where its time goes.
``--maps live`` measures the live maps only.

Medians of ``--repeat`` runs. BertViz's head view of 128 tokens x 8 heads is 5.84 MB (issue 27, measured with
bertviz 1.4 on the same attention); see benchmarks/real_model.py for BertViz beside our Real model page.

    python benchmarks/browser_feel.py [--repeat 10] [--scenarios "default,128 tokens"] [--throttle 4] [--maps live]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import cpu_seconds, machine, size_query, ws_frame_bytes  # noqa: E402
from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app  # noqa: E402

SCENARIOS = {
    "Playground, default (8 tokens, 4 heads)": "Playground?seq_len=8&d_model=64&heads=4",
    "Playground, 128 tokens x 8 heads": f"Playground?{size_query(128, 8)}",
    "Playground, 512 tokens x 16 heads": f"Playground?{size_query(512, 16)}",
    'Compare, "Why scale?"': "Compare?preset=2_why_scale",
}
LIVE = ".ae-live"

# Arms a probe: the time from the next key press on the focused slider to the next change of the maps (live: the
# component's frame counter; server-drawn: anything inside a chart or an image), kept in window.__aeResult.
ARM = """(live) => {
    const el = document.activeElement && document.activeElement.shadowRoot
        ? document.activeElement.shadowRoot.activeElement : document.activeElement;  // the focused slider
    window.__aeT = null;
    window.__aeResult = undefined;
    const obs = new MutationObserver(() => {
        if (window.__aeT !== null && window.__aeResult === undefined) {
            window.__aeResult = performance.now() - window.__aeT;
            obs.disconnect();
        }
    });
    if (live) obs.observe(window.__aeRoot, {attributes: true, attributeFilter: ['data-frames']});
    else document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stImage"]').forEach(
        c => obs.observe(c, {subtree: true, childList: true, attributes: true}));
    el.addEventListener('keydown', () => { window.__aeT = performance.now(); }, {once: true, capture: true});
}"""


def _temperature(page, live: bool):
    """The temperature slider a learner moves: the live maps' own, or the page's widget (the sidebar's, or the one
    above the Playground's maps)."""
    if live:
        return page.locator(f"{LIVE} input[aria-label^='temperature']").first
    sidebar = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[aria-label^="temperature"]')
    if sidebar.count():
        return sidebar.first
    # the Playground draws its temperature above the maps, never in the sidebar
    return page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[aria-label^="temperature"]').first


def _live_root(page):
    """The live maps' root element (inside the component's shadow root), kept on window for the probes."""
    handle = page.locator(LIVE).first.element_handle()
    page.evaluate("el => { window.__aeRoot = el; }", handle)
    return handle


def _settle(page, quiet_ms: int = 300, timeout_s: float = 60) -> None:
    """Wait until the script has finished and the main area has not changed for ``quiet_ms``."""
    wait_for_app(page, int(timeout_s * 1000))
    page.evaluate(
        """(quiet) => new Promise(resolve => {
            let timer = setTimeout(done, quiet);
            const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
            obs.observe(document.querySelector('[data-testid="stMain"]'), {subtree: true, childList: true, attributes: true});
            function done() { obs.disconnect(); resolve(); }
        })""",
        quiet_ms,
    )


def key_press(page, live: bool) -> tuple[float | None, float]:
    """(ms from the key to the maps drawn, ms from the key to the page settled) for one ArrowRight."""
    slider = _temperature(page, live)
    if live:
        _live_root(page)
    slider.focus()
    page.evaluate(ARM, live)
    t0 = time.perf_counter()
    page.keyboard.press("ArrowRight")
    try:
        page.wait_for_function("() => window.__aeResult !== undefined", timeout=8000, polling=10)
        drawn = page.evaluate("() => window.__aeResult")
    except Exception:  # nothing changed within 8 s
        drawn = None
    _settle(page)
    settled = 1e3 * (time.perf_counter() - t0) - 300
    return drawn, settled


def drag(page, live: bool) -> tuple[int, float | None]:
    """(frames in which the maps changed during a 1 s drag of 30 moves, median ms from a move to its frame)."""
    slider = _temperature(page, live)
    if live:
        root = _live_root(page)
    else:
        page.evaluate("""() => { window.__changes = 0; window.__obs = new MutationObserver(() => window.__changes++);
            document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stImage"]').forEach(
                c => window.__obs.observe(c, {subtree: true, childList: true, attributes: true})); }""")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    x0, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    moves = []
    if live:
        before = int(root.get_attribute("data-frames"))
    page.mouse.move(x0, y)
    page.mouse.down()
    start = time.perf_counter()
    for k in range(30):
        page.mouse.move(x0 - (k + 1) * box["width"] / 90, y)
        moves.append(page.evaluate("() => performance.now()"))
        rest = start + (k + 1) / 30 - time.perf_counter()
        if rest > 0:
            time.sleep(rest)
    if live:
        frames = int(root.get_attribute("data-frames")) - before
        times = page.evaluate("el => el.parentNode.__attentionExplorerLive.frameTimes", root)
    else:
        frames = page.evaluate("() => window.__changes")
        times = []
    page.mouse.up()
    _settle(page)
    lags = [min((t for t in times if t >= m), default=None) for m in moves]
    lags = [t - m for t, m in zip(lags, moves) if t is not None]
    return frames, (statistics.median(lags) if lags else None)


def change_bytes(page) -> int:
    """Websocket bytes received for one full change (the seed), from the change to the page settled."""
    received = []
    seed = page.locator('[data-testid="stSidebar"] input[aria-label^="seed"]').first
    if seed.count() == 0:
        return 0
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.webSocketFrameReceived", lambda e: received.append(ws_frame_bytes(e["response"])))
    seed.fill("7")
    seed.press("Enter")
    _settle(page)
    cdp.detach()
    return sum(received)


def server_cpu(page, proc, live: bool) -> float:
    """Server CPU (ms) for one temperature change: a key on the live slider (its release) or on the sidebar's."""
    before = cpu_seconds(proc.pid)
    key_press(page, live)
    return 1e3 * (cpu_seconds(proc.pid) - before)


def set_live(page, on: bool) -> None:
    """Turn the page's "live maps" toggle on or off (its label takes the click, as a learner's would)."""
    toggle = page.get_by_role("switch", name="live maps (redraw in the browser while a control moves)")
    if toggle.is_checked() != on:
        page.locator('[data-testid="stMain"] label').filter(has_text="live maps").first.click()
        _settle(page)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--scenarios", default="", help="comma-separated parts of scenario names (default: all)")
    ap.add_argument(
        "--throttle", type=float, default=1.0, help="slow the page's CPU down this many times (4: a slow laptop)"
    )
    ap.add_argument("--maps", choices=("both", "live", "server-drawn"), default="both")
    args = ap.parse_args()
    kinds = {"both": (False, True), "live": (True,), "server-drawn": (False,)}[args.maps]
    chosen = {
        n: q for n, q in SCENARIOS.items() if not args.scenarios or any(s in n for s in args.scenarios.split(","))
    }
    rows, bytes_rows = [], []
    with streamlit_server() as (base, proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        for query in chosen.values():  # the server's first run of a page (imports, caches) is not what is measured
            ctx = browser.new_context()
            warm = ctx.new_page()
            warm.goto(f"{base}/{query}")
            wait_for_app(warm)
            ctx.close()
        for name, query in chosen.items():
            for live in kinds:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = ctx.new_page()
                if args.throttle != 1:
                    ctx.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": args.throttle})
                t0 = time.perf_counter()
                page.goto(f"{base}/{query}")
                wait_for_app(page)
                usable = time.perf_counter() - t0 - 0.2  # wait_for_app ends with a 200 ms pause
                set_live(page, live)
                drawn, settled, frames, lags, cpu = [], [], [], [], []
                if live and page.locator(LIVE).count() == 0:
                    raise RuntimeError(f"{name}: no live maps on the page")
                for _ in range(args.repeat):
                    d, s = key_press(page, live)
                    drawn.append(d)
                    settled.append(s)
                for _ in range(max(3, args.repeat // 3)):
                    f, lag = drag(page, live)
                    frames.append(f)
                    if lag is not None:
                        lags.append(lag)
                for _ in range(max(3, args.repeat // 3)):
                    cpu.append(server_cpu(page, proc, live))
                nbytes = change_bytes(page)
                ctx.close()
                med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
                shown = [x for x in drawn if x is not None]
                rows.append(
                    [
                        name,
                        "live" if live else "server-drawn",
                        f"{med(shown):.0f}" if shown else "-",
                        f"{med(settled):.0f}",
                        f"{med(frames):.0f}",
                        f"{med(lags):.0f}" if lags else "-",
                        f"{med(cpu):.0f}",
                        f"{usable:.1f}",
                    ]
                )
                bytes_rows.append([name, "live" if live else "server-drawn", f"{nbytes / 1e6:.2f}"])
                print(".", end="", file=sys.stderr, flush=True)
        browser.close()
    print()
    print(
        table(
            [
                "scenario",
                "maps",
                "key -> maps drawn (ms)",
                "key -> page settled (ms)",
                "frames during a 1 s drag",
                "move -> frame (ms)",
                "server CPU per change (ms)",
                "open -> usable (s)",
            ],
            rows,
        )
    )
    print()
    print(table(["scenario", "maps", "MB received for one full change (the seed)"], bytes_rows))
    slow = f"; Chromium's CPU throttled {args.throttle:g}x" if args.throttle != 1 else ""
    print(f"\nmedians of {args.repeat} key presses and {max(3, args.repeat // 3)} drags{slow}; {machine()}")


if __name__ == "__main__":
    main()
