"""Shared Streamlit plumbing: sidebar controls bound to the URL, cached core calls, chart builders.

Nothing here knows about a particular page; pages import from here and from attention_core. Importing ui patches
nothing in Streamlit: the page skeleton installs what the server needs at the first page run (ui/page.py).
"""

import os

# One thread per computation in OpenMP (torch's pool and the BLAS inside it). libgomp reads this once, when torch
# loads, and its thread count is per thread: Streamlit runs every script run in a new thread, which would start
# at one OpenMP thread a core. So it goes into the environment before any ui module can import torch; a value
# the user set is kept. NumPy's OpenBLAS is capped in ui/runtime.py (it may be loaded before this runs).
os.environ.setdefault("OMP_NUM_THREADS", "1")
