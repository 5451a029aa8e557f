"""BertViz's head view and model view against our Real model page, on the embedded model at 16, 128 and 512 tokens:
the bytes a browser receives and the time until the view is drawn in Chromium (median of --repeat page loads).

BertViz (PyPI bertviz) is given the same attention and tokens our page shows (tests/test_real_model_bertviz.py
proves they are what BertViz gets from transformers itself) and its HTML (html_action="return") is opened as a
page. Its script loads require.js, d3 5.7.0 and jQuery from a CDN; here Playwright answers those requests with
the same libraries from the npm registry (jQuery 2.1.0: 2.0.0 is not on npm; require.js unminified, 85 KB where the
CDN's minified file is 17 KB), so nothing leaves the machine.
Drawn: BertViz's SVG has its attention lines (it draws them synchronously once its libraries have loaded). Ours:
the model view's canvas says it has painted every head (``data-drawn``), and the whole page (head view, neuron
view, tables) has finished. Times run from navigation start, with the server's caches warm (as for the second
student who opens a link); bytes are the HTTP bodies and websocket frames the page receives (BertViz's view data
is its HTML file, the attention inlined as JSON). A last row per size times a new sentence typed into an open page
(the server computes it: nothing cached), when its bytes reach the canvas, how long painting every head takes,
and how long a hover takes to show its tooltip and enlarged head. Two more rows give the new page its context: the
same page in a browser that has opened the app before (Streamlit's front end cached), and Streamlit's floor, a
one-line app (`st.title`) opened in a fresh browser, the least any Streamlit page takes here.

    .venv/bin/python benchmarks/real_model.py [--repeat 3] [--tokens 16 128 512] [--timeout 120]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import machine, ws_frame_bytes  # noqa: E402
from harness.server import CHROMIUM_FLAGS, chromium_path, free_port, streamlit_server, wait_for_app  # noqa: E402

TEXT = " ".join(
    ["The animal didn't cross the street because it was too tired, and the street was wide."] * 40
)  # 3,480 characters, 882 tokens
LIBS = {  # the CDN URL BertViz asks for -> (npm package, file inside it)
    "require.js/2.3.6/require.min.js": ("requirejs@2.3.6", "require.js"),
    "d3/5.7.0/d3.min.js": ("d3@5.7.0", "dist/d3.min.js"),
    "jquery/2.0.0/jquery.min.js": ("jquery@2.1.0", "dist/jquery.min.js"),
}
FIND_JS = """function find(sel, root = document) {  // querySelector that also looks inside shadow roots
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) { const h = find(sel, el.shadowRoot); if (h) return h; }
    return null;
}"""
DRAWN_JS = (
    "(selector) => { "
    + FIND_JS
    + """  // true once selector matches; notes the time it first did
    if (!find(selector)) return false;
    window.__drawnAt = window.__drawnAt || performance.now();
    return true;
}"""
)
PAINT_JS = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(window.__drawnAt))))"
HOVER_JS = (
    "async () => { "
    + FIND_JS
    + """
    const root = find('.mv'), grid = find('.mv-grid'), tip = find('.mv-tip'), times = [];
    const g = JSON.parse(root.dataset.geometry), box = grid.getBoundingClientRect(), s = box.width / grid.width;
    for (let k = 0; k < 9; k++) {  // the middle of nine tiles: tooltip and enlarged head, then a paint
        const x = g.left + ((k * 5) % 12) * (g.side + g.gap) + g.side / 2, y = g.top + (k % 6) * (g.side + g.gap) + g.side / 3;
        const t = performance.now();
        grid.dispatchEvent(new PointerEvent('pointermove', {bubbles: true, clientX: box.left + x * s, clientY: box.top + y * s}));
        if (tip.style.display !== 'block') throw new Error('no tooltip');
        await new Promise(r => requestAnimationFrame(r));
        times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[4];
}"""
)


def npm_libs(folder: Path) -> dict[str, bytes]:
    """The three libraries BertViz loads, from `npm pack` (kept in ``folder``), by their CDN path."""
    out = {}
    folder.mkdir(parents=True, exist_ok=True)
    for cdn, (package, inside) in LIBS.items():
        name = package.replace("@", "-") + ".tgz"
        if not (folder / name).exists():
            packed = subprocess.run(["npm", "pack", package], cwd=folder, capture_output=True, text=True, check=True)
            (folder / packed.stdout.strip().splitlines()[-1]).rename(folder / name)
        with tarfile.open(folder / name) as tar:
            out[cdn] = tar.extractfile("package/" + inside).read()
    return out


def bertviz_pages(arun) -> dict[str, str]:
    """BertViz's head view and model view HTML for a run (all layers, as BertViz draws by default)."""
    import torch
    from bertviz import head_view, model_view

    attention = [
        torch.tensor(arun.attentions[i][None]) for i in range(arun.shape[0])
    ]  # a copy: cached runs are read-only
    tokens = list(arun.tokens)
    return {
        "head view": head_view(attention, tokens, html_action="return").data,
        "model view": model_view(attention, tokens, html_action="return").data,
    }


@contextlib.contextmanager
def chromium(playwright):
    """A Chromium of our own (Debian's, headless) reached over CDP: its process group is ours to end, so a view that
    hangs the browser (BertViz at 512 tokens sends 0.9 GB of HTML) cannot outlive the benchmark."""
    port = free_port()
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen(
            [chromium_path(), *CHROMIUM_FLAGS, f"--remote-debugging-port={port}", f"--user-data-dir={profile}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            for _ in range(100):
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                time.sleep(0.1)
            yield playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the browser we started and its children, by their group id
            proc.wait()


def load(
    playwright, url: str, selector: str, timeout_s: float, route=None, streamlit=False, again=False
) -> tuple[float, int, int]:
    """(ms from navigation start until ``selector`` is drawn and painted, HTTP bytes, websocket bytes) of one page
    load in a fresh browser (``again``: its second load of ``url``, what a browser that has been to the app before
    does, its HTTP cache and compiled code warm); ms is NaN when it did not draw within ``timeout_s``."""
    with chromium(playwright) as browser:
        page = browser.contexts[0].new_page()
        page.set_viewport_size({"width": 1400, "height": 1000})
        if again:
            page.goto(url)
            page.locator(selector).first.wait_for(timeout=timeout_s * 1000)
            page.goto("about:blank")
        http, ws = [0], [0]
        cdp = browser.contexts[0].new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.loadingFinished", lambda e: http.__setitem__(0, http[0] + int(e["encodedDataLength"])))
        cdp.on("Network.webSocketFrameReceived", lambda e: ws.__setitem__(0, ws[0] + ws_frame_bytes(e["response"])))
        if route:
            page.route("https://cdnjs.cloudflare.com/**", route)
        page.set_default_timeout(timeout_s * 1000)
        try:
            page.goto(url, wait_until="commit")
            page.wait_for_function(DRAWN_JS, arg=selector, polling="raf")
            ms = page.evaluate(PAINT_JS)
            if streamlit:
                wait_for_app(page, int(timeout_s * 1000))
                ms = page.evaluate("performance.now()") - 200  # wait_for_app waits 200 ms at its end
        except Exception:  # noqa: BLE001 - a view that does not draw in time is a result, not a crash
            ms = float("nan")
        return ms, http[0], ws[0]


def open_page_ms(playwright, url: str, repeat: int) -> tuple[float, float, float, float]:
    """On a page already open at ``url``: (ms from pressing Enter on a new sentence until the model view has painted
    it, ms until its bytes reached the canvas, ms the canvas's painting of every head takes once its bytes are inflated, ms from a pointer move to the next
    frame with its tooltip and enlarged head), medians over ``repeat`` new sentences."""
    with chromium(playwright) as browser:
        return _sentence_changes(browser.contexts[0].new_page(), url, repeat)


def _sentence_changes(page, url: str, repeat: int) -> tuple[float, float, float, float]:
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.set_default_timeout(120000)
    page.goto(url)
    page.locator(".mv[data-drawn]").wait_for()
    wait_for_app(page)
    change, arrive, paint = [], [], []
    box = page.locator('input[aria-label="Sentence"]')
    for k in range(repeat):
        before = float(page.locator(".mv").get_attribute("data-drawn-at"))
        box.fill(f"{k + 2}. {TEXT}")
        t0 = page.evaluate("performance.now()")
        box.press("Enter")
        page.wait_for_function(
            "([old]) => { " + FIND_JS + " const m = find('.mv'); return m && m.dataset.drawn && "
            "+m.dataset.drawnAt > old; }",
            arg=[before],
            polling="raf",
        )
        mv = page.locator(".mv")
        change.append(float(mv.get_attribute("data-drawn-at")) - t0)
        paint.append(float(mv.get_attribute("data-paint-ms")))
        arrive.append(float(mv.get_attribute("data-received-at")) - t0)
        wait_for_app(page)
    med = statistics.median
    return med(change), med(arrive), med(paint), page.evaluate(HOVER_JS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokens", type=int, nargs="+", default=[16, 128, 512])
    ap.add_argument("--timeout", type=float, default=120, help="seconds a view may take before it counts as not drawn")
    ap.add_argument("--ours-only", action="store_true", help="skip BertViz (at 512 tokens it takes minutes)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from attention_core.embedded import EMBEDDED_ID
    from ui.compute import cached_attention_run

    libs = npm_libs(Path(tempfile.gettempdir()) / "attention-explorer-bertviz-libs")
    lib_bytes = sum(len(b) for b in libs.values())

    def cdn(route):
        path = route.request.url.split("/ajax/libs/", 1)[-1]
        body = libs.get(path)
        route.fulfill(status=200 if body else 404, body=body or b"", content_type="application/javascript")

    rows = []
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        (Path(tmp) / "hello.py").write_text('import streamlit as st\n\nst.title("Hello")\n')
        base, _ = stack.enter_context(streamlit_server(timeout=120))
        hello, _ = stack.enter_context(streamlit_server(str(Path(tmp) / "hello.py"), timeout=120))
        p = stack.enter_context(sync_playwright())
        for T in args.tokens:
            arun = cached_attention_run(EMBEDDED_ID, TEXT, T)
            for view, html in {} if args.ours_only else bertviz_pages(arun).items():
                path = Path(tmp) / f"{view.replace(' ', '_')}_{T}.html"
                path.write_text("<!doctype html><html><body>" + html + "</body></html>")
                runs = [load(p, path.as_uri(), "#vis svg line", args.timeout, cdn) for _ in range(args.repeat)]
                ms = statistics.median(r[0] for r in runs)
                rows.append([T, f"BertViz {view}", f"{len(html) / 1e6:,.2f} MB", f"{lib_bytes / 1e3:,.0f} KB",
                             "not drawn" if ms != ms else f"{ms:,.0f}"])  # fmt: skip
            url = f"{base}/Real_model?tokens={T}&text={quote(TEXT)}"
            load(p, url, ".mv[data-drawn]", args.timeout, streamlit=True)  # warm the server's caches
            canvas = [load(p, url, ".mv[data-drawn]", args.timeout) for _ in range(args.repeat)]
            page = [load(p, url, ".mv[data-drawn]", args.timeout, streamlit=True) for _ in range(args.repeat)]
            again = [load(p, url, ".mv[data-drawn]", args.timeout, again=True) for _ in range(args.repeat)]
            change, arrive, paint, hover = open_page_ms(p, url, args.repeat)
            rows.append([T, "ours: model view, new page (canvas, all heads)",
                         f"{statistics.median(r[2] for r in canvas) / 1e6:,.2f} MB",
                         f"{statistics.median(r[1] for r in canvas) / 1e3:,.0f} KB",
                         f"{statistics.median(r[0] for r in canvas):,.0f}"])  # fmt: skip
            rows.append([T, "ours: whole page, new page (model, head and neuron views, tables)",
                         f"{statistics.median(r[2] for r in page) / 1e6:,.2f} MB",
                         f"{statistics.median(r[1] for r in page) / 1e3:,.0f} KB",
                         f"{statistics.median(r[0] for r in page):,.0f}"])  # fmt: skip
            rows.append([T, "ours: model view, new page in a browser that has opened the app before",
                         f"{statistics.median(r[2] for r in again) / 1e6:,.2f} MB",
                         f"{statistics.median(r[1] for r in again) / 1e3:,.0f} KB",
                         f"{statistics.median(r[0] for r in again):,.0f}"])  # fmt: skip
            rows.append([T, f"ours: model view, new sentence in an open page (bytes in the canvas after {arrive:,.0f} ms, painting every head {paint:,.0f} ms, "
                         f"hover {hover:.0f} ms)", "", "", f"{change:,.0f}"])  # fmt: skip
            print(f"measured {T} tokens", file=sys.stderr)
        floor = [load(p, hello, "h1", args.timeout) for _ in range(args.repeat)]
        rows.append(["-", "Streamlit's floor: a one-line app (`st.title`), new page, its title drawn",
                     f"{statistics.median(r[2] for r in floor) / 1e6:,.2f} MB",
                     f"{statistics.median(r[1] for r in floor) / 1e3:,.0f} KB",
                     f"{statistics.median(r[0] for r in floor):,.0f}"])  # fmt: skip
    print(table(["tokens", "view", "view data received", "libraries / static files", "drawn after (ms)"], rows))
    print(
        f"\nMedian of {args.repeat} loads each, from navigation start, server caches warm; 'not drawn': no "
        f"attention line within {args.timeout:g} s. {machine()}; Debian's Chromium, headless."
    )


if __name__ == "__main__":
    main()
