"""Shared Streamlit plumbing: sidebar controls bound to the URL, cached core calls, chart builders.

Nothing here knows about a particular page; pages import from here and from attention_core.
"""

import os

# One thread per computation in OpenMP (torch's pool and the BLAS inside it). libgomp reads this once, when torch
# loads, and its thread count is per thread: Streamlit runs every script run in a new thread, which would start
# at one OpenMP thread a core. So it goes into the environment before any ui module can import torch; a value
# the user set is kept. NumPy's OpenBLAS is capped in ui/runtime.py (it may be loaded before this runs).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A fair share of the server for every session: a browser's burst of reruns is folded into few runs, and a session
# that keeps flooding waits for its turn (ui/fairness.py). Installed once per process, before any page runs.
from ui.fairness import install as _install_fairness  # noqa: E402

_install_fairness()

# Streamlit reads the whole configuration again for every run's new_session message; it is built once per
# configuration instead (ui/session_msg.py).
from ui.session_msg import install as _install_session_msg  # noqa: E402

_install_session_msg()
