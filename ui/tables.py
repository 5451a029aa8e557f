"""Small labelled matrices for ``st.dataframe``, converted to Arrow once per content.

``st.dataframe`` turns a pandas DataFrame into Arrow on every rerun (about 0.5 ms for a 4 x 4 table, most of a
Step by step rerun's 13 tables). Streamlit sends a ``pyarrow.Table`` as it is, so the table is built here, once
per (values, labels), through ``pa.Table.from_pandas``: the bytes are the ones Streamlit would have sent, index
column included, and the page looks the same.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ui.cache import ByteLRU, register
from ui.links import link_options
from ui.text import fmt_all
from ui.vega import digest

_TABLES = register(ByteLRU("ui.tables.matrix_table", 8 * 2**20))


def matrix_table(
    m,
    row_labels,
    col_labels,
    decimals: int | None = None,
    extra: tuple[tuple[str, np.ndarray], ...] = (),
    text: bool = False,
) -> pa.Table:
    """``m`` (n_r, n_c) as an Arrow table with ``row_labels`` as its index and ``col_labels`` as its columns.

    Args:
        decimals: round the values (and the extra columns) to this many decimals; None keeps them.
        extra: more columns after the matrix, as (name, values (n_r,)) pairs, e.g. (("row sum", A.sum(1)),).
        text: write every number as :func:`ui.text.fmt` does (the page's sentences and maps write them so), as text.
    """
    m = np.asarray(m)
    if m.ndim != 2:
        raise ValueError(f"m must be a matrix (2-D); got shape {m.shape}")
    if m.shape != (len(row_labels), len(col_labels)):
        raise ValueError(
            f"m of shape {m.shape} needs {m.shape[0]} row labels and {m.shape[1]} column labels; "
            f"got {len(row_labels)} and {len(col_labels)}"
        )
    extra = tuple((str(name), np.asarray(v)) for name, v in extra)
    key = (digest(m), tuple(map(str, row_labels)), tuple(map(str, col_labels)), decimals, text)
    key += tuple((name, digest(v)) for name, v in extra)

    def build() -> pa.Table:
        if text:
            rnd = lambda a: np.asarray(fmt_all(a), dtype=object).reshape(np.shape(a))  # noqa: E731
        else:
            rnd = (lambda a: np.round(a, decimals)) if decimals is not None else (lambda a: a)
        df = pd.DataFrame(rnd(m), index=pd.Index(list(map(str, row_labels)), dtype=object), columns=key[2])
        for name, v in extra:
            df[name] = rnd(v)
        return pa.Table.from_pandas(df)

    return _TABLES.get_or_compute(key, build)


def frame_table(key: tuple, build) -> pa.Table:
    """The table ``build()`` makes (a DataFrame, or a dict of columns, which skips pandas), as an Arrow table built
    once per ``key`` (a hashable description of its content, e.g. the page and the WhatIf): a page's per-head
    table is then converted once per setting."""

    def arrow() -> pa.Table:
        made = build()
        return pa.Table.from_pandas(made) if isinstance(made, pd.DataFrame) else pa.table(made)

    return _TABLES.get_or_compute(("frame", *key), arrow)


def prefixed(prefix: str, n: int) -> list[str]:
    """Column names ``prefix0 .. prefix{n-1}`` (e.g. q0, q1 for the dimensions of Q)."""
    return [f"{prefix}{j}" for j in range(n)]


PROJECTOR_MAX_ROWS = 32  # a table up to this size is drawn as text in the projector view (st.table), which the
PROJECTOR_MAX_COLUMNS = 12  # view's larger type reaches; a larger one stays a scrolling grid (st.dataframe)


def show_table(place, data, *, column_config: dict | None = None, hide_index: bool | None = None, **grid) -> None:
    """``data`` (a DataFrame, an Arrow table or a dict of columns) as ``place.dataframe(data, ...)``: a grid that
    sorts, scrolls and tells each column's help on hover.

    In the projector view (``view=projector``) a table of up to PROJECTOR_MAX_ROWS rows and
    PROJECTOR_MAX_COLUMNS columns is drawn by ``place.table`` instead: Streamlit's grid paints its text on a
    canvas at a fixed 14 px that no style reaches, and a class reads the table from the back of the room. The
    column labels and number formats of ``column_config`` carry over; its help texts (hover) do not.

    Args:
        place: where to draw (``st``, a column or a container).
        grid: st.dataframe's other arguments (width, height), used for the grid only.
    """
    if link_options().projector:  # only here: the grid takes an Arrow table as it is, with no pandas per rerun
        frame = _as_frame(data)
        if _fits_a_projector(frame, hide_index):
            width = grid.get("width", "stretch")
            place.table(_plain(frame, column_config or {}), hide_index=hide_index, border="horizontal", width=width)
            return
    place.dataframe(data, column_config=column_config, hide_index=hide_index, **grid)


def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pa.Table):
        return data.to_pandas()
    return pd.DataFrame(data)


def _fits_a_projector(frame: pd.DataFrame, hide_index: bool | None) -> bool:
    columns = frame.shape[1] + (0 if hide_index else 1)
    return frame.shape[0] <= PROJECTOR_MAX_ROWS and columns <= PROJECTOR_MAX_COLUMNS


def _plain(frame: pd.DataFrame, column_config: dict) -> pd.DataFrame:
    """``frame`` with ``column_config``'s labels and printf-style number formats applied as text (st.table has no
    column_config); a missing number (None, NaN) is an empty cell, as in the grid."""
    out = frame.copy()
    names = {}
    for name, config in column_config.items():
        if name not in out.columns or not isinstance(config, dict):
            continue
        fmt = (config.get("type_config") or {}).get("format")
        if fmt and fmt.startswith("%"):
            out[name] = [_printf(fmt, v) for v in out[name]]
        if config.get("label"):
            names[name] = config["label"]
    return out.rename(columns=names)


def _printf(fmt: str, v) -> object:
    """``v`` as ``fmt`` (printf style) formats it, a missing number as an empty cell (as the grid shows it)."""
    if v is None or (isinstance(v, float | np.floating) and np.isnan(v)):
        return ""
    return fmt % v if isinstance(v, int | float | np.number) else v
