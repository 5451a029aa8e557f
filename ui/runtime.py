"""Keep the server's per-rerun cost low: freeze long-lived objects out of the cyclic garbage collector.

Streamlit runs ``gc.collect(2)`` after every script run (``runner.postScriptGC``). With torch, pandas
and altair imported that walks ~250k long-lived objects: 60-140 ms of GIL-bound work per slider change.
``gc.freeze()`` moves every object alive now into a permanent generation that collections skip
(reference counting still frees them), so the post-run collection only walks what the runs create.
We freeze once after each batch of new imports; memory stays bounded because the collection still runs.
"""

from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_frozen_modules = 0


def settle_memory() -> bool:
    """Collect and freeze if modules were imported since the last freeze; returns whether it froze."""
    global _frozen_modules
    n = len(sys.modules)
    if n == _frozen_modules:
        return False
    with _lock:
        if len(sys.modules) == _frozen_modules:
            return False
        gc.collect()
        gc.freeze()
        _frozen_modules = len(sys.modules)
    return True
