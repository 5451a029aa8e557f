"""Small typed matrices: parse, check and format them (Step-by-step editors and share links).

Text form: rows separated by ``;``, entries by ``,`` (``"0,1;0,1"``), compact enough for a URL.
"""

from __future__ import annotations

import numpy as np

MAX_ABS = 1e6  # typed entries must lie in [-MAX_ABS, MAX_ABS]


def check_matrix(name: str, m, shape: tuple[int, int] | None = None) -> np.ndarray:
    """Return ``m`` as a float64 2-D array or raise ValueError saying which cell is wrong and what is allowed."""
    try:
        arr = np.array(m, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must contain only numbers") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix; got {arr.ndim} dimension(s)")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must be {shape[0]} x {shape[1]}; got {arr.shape[0]} x {arr.shape[1]}")
    bad = ~np.isfinite(arr) | (np.abs(np.nan_to_num(arr)) > MAX_ABS)
    if bad.any():
        r, c = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"{name} has an empty or invalid entry at row {r + 1}, column {c + 1}; "
            f"only finite numbers between {-MAX_ABS:g} and {MAX_ABS:g} are allowed"
        )
    return arr


def parse_matrix(name: str, text: str, shape: tuple[int, int] | None = None) -> np.ndarray:
    """Parse ``"a,b;c,d"`` into a checked matrix (see :func:`check_matrix`)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} is empty; write rows separated by ';' and numbers by ',', e.g. 0,1;0,1")
    # the messages name the entry or the rows at fault, not the whole text: a caller quoting the text (a link's
    # notice) would otherwise show it twice
    rows = [r.split(",") for r in text.strip().split(";")]
    values = []
    for i, row in enumerate(rows):
        try:
            values.append([float(x) for x in row])
        except ValueError:
            bad = next(x for x in row if not _number(x))
            raise ValueError(
                f"{name} has {bad.strip()[:20]!r} in row {i + 1}, which is not a number; write rows separated by ';' "
                "and numbers by ',', e.g. 0,1;0,1"
            ) from None
    lengths = sorted({len(r) for r in values})
    if len(lengths) != 1:
        raise ValueError(
            f"{name} has rows of different lengths ({' and '.join(map(str, lengths))} numbers); write rows of equal "
            "length separated by ';' and numbers by ',', e.g. 0,1;0,1"
        )
    return check_matrix(name, values, shape)


def _number(x: str) -> bool:
    try:
        float(x)
    except ValueError:
        return False
    return True


def format_matrix(m) -> str:
    """The compact text form of a matrix (shortest round-tripping numbers)."""
    return ";".join(",".join(f"{float(x):.10g}" for x in row) for row in np.asarray(m))
