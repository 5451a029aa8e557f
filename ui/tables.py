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
from ui.vega import digest

_TABLES = register(ByteLRU("ui.tables.matrix_table", 8 * 2**20))


def matrix_table(
    m,
    row_labels,
    col_labels,
    decimals: int | None = None,
    extra: tuple[tuple[str, np.ndarray], ...] = (),
) -> pa.Table:
    """``m`` (n_r, n_c) as an Arrow table with ``row_labels`` as its index and ``col_labels`` as its columns.

    Args:
        decimals: round the values (and the extra columns) to this many decimals; None keeps them.
        extra: more columns after the matrix, as (name, values (n_r,)) pairs, e.g. (("row sum", A.sum(1)),).
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
    key = (digest(m), tuple(map(str, row_labels)), tuple(map(str, col_labels)), decimals)
    key += tuple((name, digest(v)) for name, v in extra)

    def build() -> pa.Table:
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
