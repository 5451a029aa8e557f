"""Timing helpers for the benchmark scripts: median of repeated runs after a warm-up."""

from __future__ import annotations

import statistics
import time


def median_ms(fn, repeat: int = 7, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` in milliseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def table(headers: list[str], rows: list[list]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
