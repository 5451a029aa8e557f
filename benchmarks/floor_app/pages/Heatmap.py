"""The floor app's second page (benchmarks/page_ready.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from floor_page import floor_page  # noqa: E402

floor_page("Floor: heatmap")
