"""Shared Streamlit plumbing, in rooms by concern: skeleton/ (what every page does the same way), session/ (what a
session keeps and the URL carries), draw/ (charts, tables, images), live/ (the live maps), classroom/ (predict,
reveal, the class pulse, presets), server/ (cache, garbage collection, fair reruns) and lessons/<page>/ (what
serves one page); text.py (how numbers and names are written), glossary.py (the words defined once) and compute.py
(every cached computation) serve them all.

Importing ui patches nothing in Streamlit: the page skeleton installs what the server needs at the first page run
(ui/skeleton/page.py).
"""

import os

# One thread per computation in OpenMP (torch's pool and the BLAS inside it). libgomp reads this once, when torch
# loads, and its thread count is per thread: Streamlit runs every script run in a new thread, which would start
# at one OpenMP thread a core. So it goes into the environment before any ui module can import torch; a value
# the user set is kept. NumPy's OpenBLAS is capped in ui/server/runtime.py (it may be loaded before this runs).
os.environ.setdefault("OMP_NUM_THREADS", "1")
