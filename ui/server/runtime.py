"""Keep the server's per-rerun cost low: what the garbage collector walks, how often, and how many threads the
native libraries use.

Streamlit runs ``gc.collect(2)`` after every script run when ``runner.postScriptGC`` is on (its default). With
torch, pandas and altair imported that walks ~250k long-lived objects: 60-140 ms of GIL-bound work per slider
change. ``gc.freeze()`` moves every object alive now into a permanent generation that collections skip
(reference counting still frees them); :func:`settle_imports` freezes once after each batch of new imports.

Even so, with a class on the server a full collection after every run walks every session's state and every
cached result: with thirty students it was a third of the server's CPU (about 14 ms of each 44 ms change, seen
with py-spy). So ``.streamlit/config.toml`` turns ``runner.postScriptGC`` off and the pages call
:func:`collect_garbage` at the end of each run, which collects at most once per ``COLLECT_EVERY`` seconds for
the whole process: one student pays a collection now and then, a class pays ~1 per second, not 15, and
cyclic garbage (a run's Altair objects, tracebacks) still lives at most about a second.

That collection is of the young generations (0 and 1: what was allocated since the last one, where a run's
garbage is), and a full one, which walks every object of every session, comes at most once per
``FULL_EVERY`` seconds. With 150 students on Compare's "Why scale?" the once-a-second full collection was a fifth
of the server's CPU (21 % of the samples with the GIL held, py-spy): it walked 150 sessions' state and every
cached result to find garbage that is nearly always young. A run's garbage that an automatic collection moved to
the oldest generation during the run now lives up to ``FULL_EVERY`` seconds instead of one.

Streamlit runs each session's script in a thread of its own, and a class keeps both cores busy with sessions.
NumPy's OpenBLAS and torch's OpenMP pools start one thread a core by default and spin while they wait, so a
matrix product of a new setting took twice the CPU for no gain (a new temperature on the Playground at 128 x 8:
197 ms of server CPU with the pools at their default on 2 cores, 97 ms with one thread). :func:`settle_imports`
caps them at one thread whenever new libraries have been loaded.
"""

from __future__ import annotations

import gc
import sys
import threading
import time

from threadpoolctl import threadpool_limits

_lock = threading.Lock()
_frozen_modules = 0
COLLECT_EVERY = 1.0  # seconds: at most one collection of the young generations per this interval, process-wide
FULL_EVERY = 10.0  # seconds: at most one full collection (every generation) per this interval
_last_collect = float("-inf")  # time.monotonic() of the last collection
_last_full = float("-inf")  # time.monotonic() of the last full collection


def limit_native_threads() -> None:
    """One thread per computation in the native libraries loaded so far: OpenBLAS (NumPy) and OpenMP, and torch's
    intra-op pool when torch is loaded (its OpenMP setting is per thread; ``torch.set_num_threads`` is global)."""
    threadpool_limits(limits=1)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):  # (threadpoolctl set this thread's OpenMP only)
        torch.set_num_threads(1)


def settle_imports() -> bool:
    """After new imports: collect and freeze the objects alive now, and cap the native libraries' thread pools
    (:func:`limit_native_threads`); returns whether there was anything new (otherwise it costs one ``len``)."""
    global _frozen_modules
    n = len(sys.modules)
    if n == _frozen_modules:
        return False
    with _lock:
        if len(sys.modules) == _frozen_modules:
            return False
        limit_native_threads()
        gc.collect()
        gc.freeze()
        _frozen_modules = len(sys.modules)
    return True


def collect_garbage(now: float | None = None) -> bool:
    """A collection unless one ran in the last ``COLLECT_EVERY`` seconds; returns whether it ran. It is of the
    young generations, or of every generation when the last full one is ``FULL_EVERY`` seconds old.

    Every page calls it as its run ends (the full run in ``ui.skeleton.lesson``, the body in ``ui.session.partial.body``); it
    stands in for Streamlit's per-run collection, which the config turns off. ``now`` is for tests."""
    global _last_collect, _last_full
    t = time.monotonic() if now is None else now
    if t - _last_collect < COLLECT_EVERY:
        return False
    with _lock:
        if t - _last_collect < COLLECT_EVERY:
            return False
        _last_collect = t
        full = t - _last_full >= FULL_EVERY
        if full:
            _last_full = t
    gc.collect(2 if full else 1)
    return True
