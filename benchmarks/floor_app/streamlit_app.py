"""The floor app of benchmarks/page_ready.py: what Streamlit itself costs to open a small teaching page (a title, a
formula, a slider and one 8 x 8 Altair heatmap), served by the same Streamlit as the app, in the same run."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_page import floor_page  # noqa: E402

floor_page("Floor: home")
