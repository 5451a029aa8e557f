"""Small labelled matrices for ``st.dataframe``, converted to Arrow once per content.

``st.dataframe`` turns a pandas DataFrame into Arrow on every rerun (about 0.5 ms for a 4 x 4 table, most of a
Step by step rerun's 13 tables). Streamlit sends a ``pyarrow.Table`` as it is, so the table is built here, once
per (values, labels), through ``pa.Table.from_pandas``: the bytes are the ones Streamlit would have sent, index
column included, and the page looks the same.
"""

from __future__ import annotations

import re
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa

from ui.draw.vega import digest
from ui.server.cache import ByteLRU, register
from ui.session.links import link_options
from ui.text import fmt_all, md_escape

_TABLES = register(ByteLRU("ui.draw.tables.matrix_table", 8 * 2**20))


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
PHONE_GRID_COLUMNS = 3  # a phone's screen holds a grid of this many columns (index included) without a sideways
PHONE_MAX_ROWS = 1024  # scroll; a longer table with more columns gets a text twin for phones, up to this many rows
PHONE_TEXT_COLUMNS = (
    7  # and columns: a text table of more columns is as cut as the grid on a phone (numbers do not wrap)
)
GRID_MIN_PAGE_PX = 760  # the page width (ui/skeleton/a11y.css) from which a grid shows instead of its text twin


def show_table(
    place, data, *, column_config: dict | None = None, hide_index: bool | None = None, whole: bool = False, **grid
) -> None:
    """``data`` (a DataFrame, an Arrow table or a dict of columns) as ``place.dataframe(data, ...)``: a grid that
    sorts, scrolls and tells each column's help on hover.

    In the projector view (``view=projector``) a table of up to PROJECTOR_MAX_ROWS rows and
    PROJECTOR_MAX_COLUMNS columns is drawn by ``place.table`` instead: Streamlit's grid paints its text on a
    canvas at a fixed 14 px that no style reaches, and a class reads the table from the back of the room. The
    column labels and number formats of ``column_config`` carry over; its help texts (hover) do not.

    On a screen narrower than a laptop's (a phone, a tablet) the grid's columns run past the screen and hide
    behind a sideways scroll that a student does not know is there. So a table of that size is drawn twice: the
    grid, and after it the same table as text, one Markdown element (:func:`markdown_table`: st.table draws every
    cell as a Markdown element of its own, and a browser builds them all, hidden or not: the Real model's twins
    of 1,300 cells took about 4 of its 8.6 s to open on a slow laptop); ``ui/skeleton/a11y.css`` shows the text table (whose cells wrap) where
    the page is narrower than GRID_MIN_PAGE_PX (the sidebar's room counted: a laptop at 1100 px has a 640 px page)
    and the grid from there on. A longer table (Masks' keys at 512 tokens, FlashAttention's tiles) gets the
    twin too when it has more than PHONE_GRID_COLUMNS columns (up to PHONE_MAX_ROWS rows and PHONE_TEXT_COLUMNS
    columns): a phone then shows all its rows as text, a long page rather than a hidden side; a narrow long grid
    fits a phone as it is.

    A table whose every cell must be read whole (``whole``: names a check question asks about, notes) is drawn as
    text at every width: the grid's canvas cuts a cell at its column's width, text wraps (Implementations' names were
    cut at 1280 and 1366 px).

    Args:
        place: where to draw (``st``, a column or a container).
        whole: draw the table as text at every width (it must be small enough for one: PROJECTOR_MAX_ROWS x
            PROJECTOR_MAX_COLUMNS).
        grid: st.dataframe's other arguments (width, height), used for the grid only.
    """
    text = _text_table(data, column_config or {}, hide_index)
    small = text is not None and len(text) <= PROJECTOR_MAX_ROWS
    if whole and not small:
        raise ValueError(
            f"a table drawn whole has at most {PROJECTOR_MAX_ROWS} rows and {PROJECTOR_MAX_COLUMNS} columns"
        )
    if small and (whole or link_options().projector):
        place.table(text, hide_index=hide_index, border="horizontal", width=grid.get("width", "stretch"))
        return
    place.dataframe(data, column_config=column_config, hide_index=hide_index, **grid)
    if text is not None:  # phones and tablets see this one instead of the grid (ui/skeleton/a11y.css)
        place.markdown(markdown_table(text, hide_index))


def show_matrix(place, data, **grid) -> None:
    """A small labelled matrix (:func:`matrix_table`: numbers in rows and columns, nothing to sort, no column to
    explain) as one Markdown table at every width, the projector's too: a grid and its twin were two elements,
    the grid a canvas the browser builds at some cost (Step by step draws ten). A matrix too large for the text
    table a phone reads (over PROJECTOR_MAX_ROWS rows or PROJECTOR_MAX_COLUMNS columns) is :func:`show_table`'s.
    ``grid``: st.dataframe's arguments, for such a one."""
    text = _text_table(data, {}, None)
    if text is None or len(text) > PROJECTOR_MAX_ROWS:
        show_table(place, data, **grid)
        return
    place.markdown(markdown_table(text))


_MARKDOWN: dict[int, tuple] = {}  # id(text table) -> (weak reference to it, hide_index, its Markdown)
_NUMERIC = re.compile(r"[-+\u2011\u2212]?(?=[\d.,]*\d)[\d.,]+(e[-+\u2011]\d+)?%?")
# a word that is a web address and nothing else: no brackets, quotes, spaces or Markdown that a link's target could
# end or carry (a cell's other words, and any word a learner typed that holds "://" among markup, are escaped)
_URL = re.compile(r"https?://[\w.\-]+(:\d+)?(/[\w.\-~/?#@!&+,;=%]*)?")


def markdown_table(text: pd.DataFrame, hide_index: bool | None = None) -> str:
    """A text table as one GitHub-flavoured Markdown table: its index first unless ``hide_index``, every cell shown
    as written (Markdown, math and HTML characters escaped: a token typed by a learner is text; a word that is a
    web address and nothing else is a link, as st.table's cells make it), a number as st.table writes it (a float to 4 decimals), a
    column of numbers aligned right. Made once per text table (:func:`_text_table` keeps them while their data lives)."""
    hit = _MARKDOWN.get(id(text))
    if hit is not None and hit[0]() is text and hit[1] == hide_index:
        return hit[2]
    columns = [[_md_cell(v) for v in column] for _, column in text.items()]  # by position: names may repeat
    names = [_md_cell(name) for name in text.columns]
    if not hide_index:
        columns.insert(0, [_md_cell(v) for v in text.index])
        names.insert(0, _md_cell(text.index.name) if text.index.name is not None else "")
    right = [any(c) and all(v == "" or _NUMERIC.fullmatch(v) for v in c) for c in columns]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*columns)]
    out = "\n".join(lines)
    ident = id(text)
    _MARKDOWN[ident] = (weakref.ref(text, lambda _: _MARKDOWN.pop(ident, None)), hide_index, out)
    return out


def _md_cell(v) -> str:
    """One cell of :func:`markdown_table`: a missing number empty, a bool, an int and a float as st.table writes
    them, text on one line with its Markdown escaped (:func:`_md_word`)."""
    if v is None or (isinstance(v, float | np.floating) and np.isnan(v)):
        return ""
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, int | np.integer):
        return f"{v:,}"
    if isinstance(v, float | np.floating):
        return f"{v:,.4f}"
    text = str(v)
    if _NUMERIC.fullmatch(text):  # a number written as text ("0.123", "‑2.25"): nothing to escape
        return text
    words = re.sub(r"[\r\n\t]+", " ", text).split(" ")
    return " ".join(_md_word(w) for w in words)


def _md_word(word: str) -> str:
    """One word of a cell: escaped (its slashes too: Streamlit reads ":material/name:" as an icon), a web address
    a link whose text is escaped and whose target holds no character that could end it."""
    shown = md_escape(word).replace("/", "\\/")
    return f"[{shown}]({word})" if _URL.fullmatch(word) else shown


_TEXT: dict[int, tuple] = {}  # id(data) -> (weak reference to data, column_config's repr, hide_index, text table)


def _text_table(data, column_config: dict, hide_index: bool | None) -> pd.DataFrame | None:
    """``data`` as the text table st.table draws (labels and formats of ``column_config`` applied), or None if it
    needs none (see :func:`_needs_text`). Kept while ``data`` lives: the pages pass the Arrow tables of ui.draw.tables' cache, so a
    rerun converts nothing (a dict of columns, which cannot be referred to weakly, is converted each time)."""
    key = (repr(column_config), hide_index)
    hit = _TEXT.get(id(data))
    if hit is not None and hit[0]() is data and hit[1:3] == key:
        return hit[3]
    frame = _as_frame(data)
    text = _breakable(_plain(frame, column_config)) if _needs_text(frame, hide_index) else None
    ident = id(data)
    try:
        ref = weakref.ref(data, lambda _: _TEXT.pop(ident, None))
    except TypeError:
        return text
    _TEXT[ident] = (ref, *key, text)
    return text


def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pa.Table):
        return data.to_pandas()
    return pd.DataFrame(data)


_BREAK = re.compile(r"(?<=[._/])(?=[A-Za-z])|(?<=[a-z])(?=[A-Z])")  # torch.nn.|Multihead|Attention
_NUMBER = re.compile(r"[-+]?[\d.,]+(e[-+]\d+)?")


def _breakable(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells that wrap in a phone's column: a line-break opportunity (a zero-width space) inside long names,
    after each ``.``, ``_`` or ``/`` before a letter and between the words of a CamelCase name
    ("torch.nn.functional.scaled_dot_product_attention", "MultiHeadSelfAttention"); a number ("1.19e-07") stays on
    one line (its hyphen a non-breaking one)."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == object or pd.api.types.is_string_dtype(out[name]):
            out[name] = [_wrap_cell(v) if isinstance(v, str) else v for v in out[name]]
    return out


def _wrap_cell(text: str) -> str:
    if _NUMBER.fullmatch(text):
        return text.replace("-", "\u2011")
    # a link stays as it is (the cell's Markdown makes it one), the names around it get their breaks
    return " ".join(w if "://" in w else _BREAK.sub("\u200b", w) for w in text.split(" "))


def _needs_text(frame: pd.DataFrame, hide_index: bool | None) -> bool:
    """Whether ``frame`` gets a text table: a small one (the projector's, a phone's), or a long one too wide for a
    phone's grid."""
    rows, columns = frame.shape[0], frame.shape[1] + (0 if hide_index else 1)
    if columns > PROJECTOR_MAX_COLUMNS:
        return False
    if rows <= PROJECTOR_MAX_ROWS:
        return True
    return rows <= PHONE_MAX_ROWS and PHONE_GRID_COLUMNS < columns <= PHONE_TEXT_COLUMNS


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
