"""Vega-Lite specs whose data is already Arrow: built once, drawn on every rerun without a conversion.

An Altair chart's ``to_dict()`` carries its rows inline (``datasets: {name: [records]}``). Given such a spec,
``st.vega_lite_chart`` converts every dataset from records to pandas to Arrow on every call: on the Softmax
saturation page that was two thirds of a rerun's server CPU. Bytes pass through untouched, so a chart's rows are
converted once here (:func:`arrow_datasets`, :func:`arrow_rows`) and kept, and each draw hands Streamlit a shallow
copy of a stored spec (Streamlit takes the datasets out of the dict it is given).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util

from ui.draw.chart_text import describe_spec
from ui.server.cache import ByteLRU, register

_ROWS = register(ByteLRU("ui.draw.vega.arrow_rows", 80 * 2**20))  # chart rows (map cells, bars, curves) as Arrow


def digest(*arrays) -> bytes:
    """A 16-byte digest of the arrays' shapes, dtypes and numbers (None counts as a marker): a cheap cache key."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        if a is None:
            h.update(b"-")
        else:
            a = np.ascontiguousarray(a)
            h.update(str((a.shape, a.dtype)).encode())
            h.update(a.tobytes())
    return h.digest()


def arrow_rows(key, frame: Callable[[], pd.DataFrame | pa.Table]) -> bytes:
    """The Arrow IPC bytes of ``frame()``, built once per ``key`` (a digest of what the rows are made of, plus
    labels): a rerun that draws the same rows again sends stored bytes instead of converting a DataFrame."""
    return _ROWS.get_or_compute(key, lambda: dataframe_util.convert_anything_to_arrow_bytes(frame()))


def arrow_datasets(spec: dict) -> dict:
    """A copy of ``spec`` whose inline tabular datasets (lists of records) are Arrow IPC bytes, with a
    ``description`` made from those records if it had none."""
    out = dict(spec)
    datasets = spec.get("datasets") or {}
    frames = {name: pd.DataFrame(rows) for name, rows in datasets.items() if not isinstance(rows, bytes)}
    if frames and "description" not in out:  # its text alternative, from the rows it draws (ui/draw/chart_text.py)
        out["description"] = describe_spec(spec, frames)
    out["datasets"] = {
        name: rows if isinstance(rows, bytes) else dataframe_util.convert_anything_to_arrow_bytes(frames[name])
        for name, rows in datasets.items()
    }
    if not out["datasets"]:
        del out["datasets"]
    return out


def with_data(spec: dict, df: pd.DataFrame, name: str = "rows") -> dict:
    """``spec`` drawing ``df`` from a named dataset sent as Arrow bytes. Data passed beside a spec (or inline)
    reaches Vega after its first draw, which then warns "Infinite extent" for every positional field. A spec
    without a ``description`` gets one from ``df`` (ui/draw/chart_text.py: its text alternative)."""
    out = with_arrow(spec, dataframe_util.convert_anything_to_arrow_bytes(df), name)
    if "description" not in out:
        out["description"] = describe_spec(out, {name: df})
    return out


def with_arrow(spec: dict, arrow: bytes, name: str = "rows") -> dict:
    """``spec`` drawing the Arrow IPC bytes ``arrow`` as the named dataset ``name`` (see :func:`with_data`)."""
    out = dict(spec)
    out["data"] = {"name": name}
    out["datasets"] = {name: arrow}
    return out


def draw(box, spec: dict, data: pd.DataFrame | dict | None = None, **kwargs) -> None:
    """The one way a page draws a Vega-Lite spec: ``box.vega_lite_chart`` (``box`` None: the page itself).

    A stored spec (its datasets already Arrow: :func:`arrow_datasets`, ``ui.draw.charts``' map and bar specs) is drawn
    from a shallow copy, so the stored one keeps its datasets. ``data`` (a DataFrame, or columns as a dict) goes
    in as a named Arrow dataset with its text alternative (:func:`with_data`). Other keyword arguments
    (``width``, ``height``, ``key``) go to Streamlit."""
    out = (
        dict(spec) if data is None else with_data(spec, data if isinstance(data, pd.DataFrame) else pd.DataFrame(data))
    )
    (box or st).vega_lite_chart(out, **kwargs)
