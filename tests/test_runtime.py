"""The server's garbage collection (ui/server/runtime.py): Streamlit's per-run collection is off, and every page run
ends in ui.server.runtime.collect_garbage, which collects at most once per COLLECT_EVERY seconds for the process."""

import gc
import math
import tomllib
import weakref

import pytest

import ui.server.runtime
from tests.apptest_util import PAGES, ROOT, app, run_ok, set_widget, widget_count


class _Node:
    """An object that can sit in a reference cycle (only the cyclic collector frees it)."""

    other = None


def _cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def no_automatic_gc(monkeypatch):
    """Automatic collections off and the throttle's clock reset, both restored after the test."""
    was = gc.isenabled()
    gc.disable()
    monkeypatch.setattr(ui.server.runtime, "_last_collect", float("-inf"))
    monkeypatch.setattr(ui.server.runtime, "_last_full", float("-inf"))
    yield
    if was:
        gc.enable()


def test_collects_at_most_once_per_interval(no_automatic_gc):
    every = ui.server.runtime.COLLECT_EVERY
    first = _cycle()
    assert ui.server.runtime.collect_garbage(now=100.0) is True
    assert first() is None, "a due collection frees a reference cycle"
    second = _cycle()
    assert ui.server.runtime.collect_garbage(now=100.0 + 0.5 * every) is False
    assert second() is not None, "within the interval nothing is collected"
    assert ui.server.runtime.collect_garbage(now=100.0 + every) is True
    assert second() is None
    assert ui.server.runtime._last_collect == 100.0 + every


def test_the_oldest_generation_is_collected_at_most_once_per_full_interval(no_automatic_gc):
    """Garbage is nearly always young; a cycle that reached the oldest generation waits for the full collection."""
    every, full = ui.server.runtime.COLLECT_EVERY, ui.server.runtime.FULL_EVERY
    assert full > every
    assert ui.server.runtime.collect_garbage(now=100.0) is True  # the first one is full
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    old = weakref.ref(a)
    gc.collect(1)  # it survives a collection of the young generations: now in the oldest
    del a, b
    young = _cycle()
    assert ui.server.runtime.collect_garbage(now=100.0 + every) is True
    assert young() is None, "the young generations are collected every interval"
    assert old() is not None, "the oldest generation waits for the full collection"
    assert ui.server.runtime.collect_garbage(now=100.0 + full) is True
    assert old() is None, "the full collection frees it"
    assert ui.server.runtime._last_full == 100.0 + full


def test_the_config_turns_streamlits_per_run_collection_off():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


@pytest.mark.slow
@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_every_page_run_ends_in_a_collection(path, no_automatic_gc):
    """A page that forgot to end in collect_garbage would leave cyclic garbage to Python's thresholds alone."""
    gc.enable()  # the page runs as usual; only the throttle's clock is reset
    run_ok(app(path))
    assert math.isfinite(ui.server.runtime._last_collect), (
        f"{path}'s run did not end in ui.server.runtime.collect_garbage"
    )


def test_a_body_rerun_ends_in_a_collection(no_automatic_gc):
    gc.enable()
    at = run_ok(app("pages/Compare.py", partial=True))
    ui.server.runtime._last_collect = float("-inf")
    run_ok(set_widget(at, "a_temperature", 0.501))
    assert widget_count(at) == 0, "the change ran the body alone"
    assert math.isfinite(ui.server.runtime._last_collect), (
        "the body rerun did not end in ui.server.runtime.collect_garbage"
    )


_THREADS_PROBE = """
import json, os, sys, threading
sys.path.insert(0, os.getcwd())
import numpy as np  # as a page: NumPy first, then ui, then whatever imports torch
from threadpoolctl import threadpool_info
before = {i["internal_api"]: i["num_threads"] for i in threadpool_info()}
import ui.server.runtime
import torch
settled = ui.server.runtime.settle_imports()
seen = {}
def session():  # Streamlit runs each session's script in a thread of its own
    fresh = {i["internal_api"]: i["num_threads"] for i in threadpool_info()}  # before this thread's first op
    a = np.ones((256, 256)); a @ a; torch.ones(64, 64) @ torch.ones(64, 64)
    seen.update({i["internal_api"]: i["num_threads"] for i in threadpool_info()}, torch=torch.get_num_threads())
    seen["fresh openmp"] = fresh["openmp"]
t = threading.Thread(target=session); t.start(); t.join()
print(json.dumps({"before": before, "settled": settled, "seen": seen}))
"""


def test_the_app_runs_numpy_and_torch_on_one_thread_per_computation():
    """A page's settle_imports caps OpenBLAS (NumPy) and torch's pool at one thread, also in the other threads
    Streamlit runs sessions in (a fresh interpreter: the cap is process-wide)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}  # the libraries' defaults
    out = subprocess.run(
        [sys.executable, "-c", _THREADS_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["settled"] is True
    assert got["seen"]["openblas"] == 1 and got["seen"]["openmp"] == 1 and got["seen"]["torch"] == 1
    assert got["seen"]["fresh openmp"] == 1  # a new thread starts at one OpenMP thread (torch's matrix products)
    if (os.cpu_count() or 1) > 1:  # without the cap the pools use every core (what the app must not keep)
        assert got["before"]["openblas"] > 1
