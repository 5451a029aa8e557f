"""The README's headline figures are a copy of docs/BENCHMARKS.md's: ``python -m benchmarks.headlines`` writes it.

docs/BENCHMARKS.md is the one home of every figure: its "Headline figures" table sums up its long tables (and
tests/test_docs.py checks that each headline figure is stated in them); the README shows that table as written
there. After a re-run, update docs/BENCHMARKS.md and run this.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui.text import marked, with_marked  # noqa: E402

START = "<!-- headline figures: docs/BENCHMARKS.md keeps them; python -m benchmarks.headlines copies them here -->"
END = "<!-- end of the headline figures -->"


def headline_table(benchmarks: str) -> str:
    """The headline figures' table as docs/BENCHMARKS.md writes it."""
    return marked(benchmarks, START, END)


def with_headlines(readme: str, benchmarks: str) -> str:
    """``readme`` with its headline figures replaced by docs/BENCHMARKS.md's."""
    return with_marked(readme, START, END, headline_table(benchmarks))


if __name__ == "__main__":
    _readme, _benchmarks = ROOT / "README.md", ROOT / "docs" / "BENCHMARKS.md"
    _readme.write_text(
        with_headlines(_readme.read_text(encoding="utf-8"), _benchmarks.read_text(encoding="utf-8")), encoding="utf-8"
    )
    print("README.md: the headline figures are docs/BENCHMARKS.md's")
