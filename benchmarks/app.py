"""App speed: per page, the median rerun time after a control change (AppTest) and the bytes of chart
data the page sends (Vega-Lite specs + their Arrow datasets + heatmap images), at three settings;
then the time from `streamlit run` to the first page drawn in Chromium, beside an empty Streamlit
app started the same way in the same run.

    python benchmarks/app.py [--repeat 5] [--pages Playground,Multi-head] [--no-browser]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from harness.apptest import PAGES, app  # noqa: E402

SETTINGS = {
    "default": {},
    "128 tok / d 512 / 8 heads": {"seq_len": "128", "d_model": "512", "heads": "8"},
    "128 tok / d 512 / 16 heads": {"seq_len": "128", "d_model": "512", "heads": "16"},
    "512 tok / d 1024 / 16 heads": {"seq_len": "512", "d_model": "1024", "heads": "16"},
}

_media_bytes: list[int] = []
_orig_load = MemoryMediaFileStorage.load_and_get_id


def _counting_load(self, path_or_data, mimetype, kind, filename=None):
    if isinstance(path_or_data, bytes) and mimetype.startswith("image/"):
        _media_bytes.append(len(path_or_data))
    return _orig_load(self, path_or_data, mimetype, kind, filename)


MemoryMediaFileStorage.load_and_get_id = _counting_load


def chart_bytes(at) -> int:
    """Vega-Lite spec text plus Arrow datasets of every chart on the page."""
    total = 0
    for el in at.get("vega_lite_chart"):
        total += len(el.proto.spec.encode())
        total += sum(len(d.data.data) for d in el.proto.datasets)
        if el.proto.HasField("data"):
            total += len(el.proto.data.data)
    return total


def measure_page(page: str, query: dict, repeat: int) -> tuple[float, float, int]:
    """(first run s, median rerun ms after changing the seed, chart bytes of the last run)."""
    at = app(page, query, timeout=600)
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"{page} {query}: {at.exception[0].value}")
    times = []
    seed = 0
    for _ in range(repeat):
        seed += 1
        keys = {w.key for w in at.number_input}
        at.number_input(key="ctl_seed" if "ctl_seed" in keys else "a_seed").set_value(seed)  # Compare: side A
        _media_bytes.clear()
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        if at.exception:
            raise RuntimeError(f"{page} {query}: {at.exception[0].value}")
    return first, 1e3 * statistics.median(times), chart_bytes(at) + sum(_media_bytes)


REAL_TEXT = (
    "The animal didn't cross the street because it was too tired and the cat sat on the mat while "
    "the animal was too tired to cross it"
)  # 28 words -> 30 tokens with [CLS] and [SEP]


def measure_real_model(repeat: int) -> list[list]:
    """The Real model page on local stand-ins with the default model's shape (4 x 4, hidden 256) and
    bert-base's (12 x 12, hidden 768), random weights (nothing can be downloaded here): median rerun
    after a layer/head change once the model is cached, and the chart data of that rerun."""
    import os

    from harness.tiny_models import make_tiny_bert

    os.environ["HF_HUB_OFFLINE"] = "1"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, hidden, layers, heads in (
            ("stand-in for BERT mini (4 x 4, hidden 256)", 256, 4, 4),
            ("stand-in for bert-base (12 x 12, hidden 768)", 768, 12, 12),
        ):
            folder = make_tiny_bert(
                Path(tmp) / f"bert-{layers}x{heads}-{hidden}", hidden=hidden, layers=layers, heads=heads
            )
            at = app("pages/Real_model.py", {"model": str(folder), "text": REAL_TEXT}, timeout=600)
            t0 = time.perf_counter()
            at.run()
            first = time.perf_counter() - t0
            if at.exception:
                raise RuntimeError(at.exception[0].value)
            times = []
            for i in range(repeat):
                at.selectbox(key="rm_layer").set_value((i + 1) % layers)
                at.selectbox(key="rm_head").set_value((2 * i + 1) % heads)
                _media_bytes.clear()
                t0 = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t0)
            rows.append(
                [
                    "Real model",
                    f"{label}, 30 tokens",
                    f"{first:.2f}",
                    f"{1e3 * statistics.median(times):.0f}",
                    f"{(chart_bytes(at) + sum(_media_bytes)) / 1024:.0f}",
                ]
            )
            print(".", end="", file=sys.stderr, flush=True)
    return rows


def first_render_seconds(script: Path, cwd: Path, repeat: int) -> float:
    from playwright.sync_api import sync_playwright

    from harness.server import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_for_app

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        for _ in range(repeat):
            t0 = time.perf_counter()
            with streamlit_server(str(script), cwd=cwd) as (base, _):
                page = browser.new_page()
                page.goto(base + "/")
                wait_for_app(page)
                times.append(time.perf_counter() - t0)
                page.close()
        browser.close()
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    ap.add_argument("--settings", default="", help="comma-separated setting names (default: all)")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    pages = [
        p for p in PAGES if (not args.pages or any(n in p for n in args.pages.split(","))) and "Real_model" not in p
    ]
    settings = {k: v for k, v in SETTINGS.items() if not args.settings or k in args.settings.split(",")}
    rows = []
    for page in pages:
        name = Path(page).stem.replace("_", " ")
        for label, query in settings.items():
            first, rerun_ms, nbytes = measure_page(page, query, args.repeat)
            rows.append([name, label, f"{first:.2f}", f"{rerun_ms:.0f}", f"{nbytes / 1024:.0f}"])
            print(".", end="", file=sys.stderr, flush=True)
    if not args.pages or "Real_model" in args.pages:
        rows += measure_real_model(args.repeat)
    print(file=sys.stderr)
    print(
        f"AppTest, median of {args.repeat} reruns after changing the seed (a control every page reads); "
        "chart data = Vega-Lite specs + Arrow datasets + PNG heatmaps sent by the last rerun.\n"
    )
    print(table(["page", "setting", "first run (s)", "rerun after a change (ms)", "chart data (KB)"], rows))
    if not args.no_browser:
        with tempfile.TemporaryDirectory() as tmp:
            empty = Path(tmp) / "empty_app.py"
            empty.write_text('import streamlit as st\nst.title("empty")\n')
            t_empty = first_render_seconds(empty, Path(tmp), 3)
            t_app = first_render_seconds(ROOT / "streamlit_app.py", ROOT, 3)
        print("\nFrom `streamlit run` to the first page drawn in headless Chromium (median of 3 cold starts):\n")
        print(
            table(
                ["app", "seconds", "difference"],
                [
                    ["empty Streamlit app", f"{t_empty:.2f}", ""],
                    ["Attention Explorer (home)", f"{t_app:.2f}", f"+{t_app - t_empty:.2f} s"],
                ],
            )
        )


if __name__ == "__main__":
    main()
