"""Text a page writes: user text escaped for Markdown (shown exactly as typed), numbers (:func:`fmt`), head names."""

from __future__ import annotations

import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:])")


def md_escape(text: str) -> str:
    """Backslash-escape every Markdown/HTML-significant character of ``text``."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


_MD_MARKUP = re.compile(r"([\\`*\[\]<>~$])")


def md_text(text: str) -> str:
    """Escape what would make Markdown of plain text a link or an image (``[``, ``]``), emphasis, code, math or HTML,
    leaving the rest as written (``0.5``, ``-10``, ``int()``, ``W_q`` read the same in the source): for text a link
    or a reader typed that a notice quotes (:func:`md_escape` escapes every significant character)."""
    return _MD_MARKUP.sub(r"\\\1", str(text))


def head_name(h: int) -> str:
    """The one way a page names head ``h`` (0-based) to a learner: "head 3" for ``h = 2``."""
    return f"head {h + 1}"


def head_names(n_heads: int) -> list[str]:
    """The names of heads 0..n_heads-1, as :func:`head_name` writes each (a head picker's choices)."""
    return [head_name(h) for h in range(n_heads)]


def fmt(x: float, digits: int = 3) -> str:
    """A number as short text: the one formatter of the numbers a page shows, so the same number reads the same in a
    sentence, a table (:func:`fmt_all`) and a map's cells and tooltip (ui.draw.charts, ui.lessons.step_by_step.charts).

    Python's ``g`` with ``digits`` significant digits, rounded once (0.99746 is 0.997 everywhere, never 0.9975 in a
    table and 0.998 once rounded again): positional from 0.0001 to below 10**digits, in exponent form beyond
    (4e-05, 1.23e+03, 4.4e-16); never "-0".

    One number is written here the way :func:`fmt_arrow` writes each of many (the same steps in Python's floats,
    about 50x faster than building an array for it: a page's sentences write dozens per run); a property test
    holds the two to the same text."""
    x = float(x) + 0.0
    if not math.isfinite(x) or x == 0:
        return f"{x:.{digits}g}" if x else "0"
    p = digits - 1 - math.floor(math.log10(abs(x)))
    up, down = 10.0 ** min(max(p, 0), 308), 10.0 ** min(max(-p, 0), 308)
    scaled = x * up if p >= 0 else x / down
    rounded = (round(scaled) / up if p >= 0 else round(scaled) * down) + 0.0
    tie = abs(abs(scaled - math.trunc(scaled)) - 0.5) < 1e-6
    if tie or not 1e-4 <= abs(rounded) < 10.0**digits:  # (x is not 0 here; a subnormal scales to 0)
        return f"{x:.{digits}g}"
    text = repr(rounded)
    return text[:-2] if text.endswith(".0") else text


def fmt_all(values, digits: int = 3) -> list[str]:
    """Every number of ``values`` as :func:`fmt` writes it (a table's column)."""
    return fmt_arrow(values, digits).to_pylist()


def fmt_arrow(values, digits: int = 3) -> pa.Array:
    """Every number of ``values`` (flattened) as :func:`fmt` writes it, as an Arrow string array. The positional
    ones are rounded by NumPy and written by Arrow (a map's 4096 cells in about 2 ms, a third of Python's time one
    value at a time); the few in exponent form, and the near-ties, by Python."""
    x = np.asarray(values, dtype=np.float64).ravel() + 0.0  # + 0.0: no "-0"
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # 0, nan and inf go to Python below
        e = np.floor(np.log10(np.abs(x)))  # each number's decade
        p = (digits - 1 - np.where(np.isfinite(e), e, 0)).astype(np.int64)  # decimals to keep (negative: tens, ...)
        up, down = 10.0 ** np.clip(p, 0, 308), 10.0 ** np.clip(-p, 0, 308)  # exact powers of ten, never 0.1
        scaled = np.where(p >= 0, x * up, x / down)
        rounded = np.where(p >= 0, np.round(scaled) / up, np.round(scaled) * down) + 0.0
        # x == 0, not rounded == 0: a subnormal number scales to 0 (the powers of ten stop at 1e308)
        exponent = ~((x == 0) | ((np.abs(rounded) >= 1e-4) & (np.abs(rounded) < 10.0**digits)))
        tie = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < 1e-6  # 0.1175: Python rounds the exact binary value
    text = pc.cast(pa.array(rounded), pa.string())  # the shortest text that reads back as the rounded number
    by_python = exponent | tie
    if not by_python.any():
        return text
    out = text.to_pylist()
    for i in np.flatnonzero(by_python).tolist():
        out[i] = f"{x[i]:.{digits}g}"
    return pa.array(out, pa.string())


def plain_text(markdown: str) -> str:
    """Markdown as the plain text it shows: bold marks dropped, backslash escapes undone (for a store or a title)."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("**", ""))


def marked(text: str, start: str, end: str) -> str:
    """The text between the marker lines ``start`` and ``end`` of a generated section (ValueError if missing)."""
    if start not in text or end not in text.split(start, 1)[1]:
        raise ValueError(f"the markers {start!r} and {end!r} were not found")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def with_marked(text: str, start: str, end: str, body: str) -> str:
    """``text`` with the section between the marker lines ``start`` and ``end`` replaced by ``body``."""
    marked(text, start, end)  # both markers are there
    head, rest = text.split(start, 1)
    return head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]
