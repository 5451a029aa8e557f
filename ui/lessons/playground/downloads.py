"""The Playground's download buttons, each labelled with its size; above LARGE bytes the every-head CSV is
replaced by the picked head's CSV and a NumPy file of every head (what a 512-token, 16-head
run needs: its every-head CSV would be about 140 MB and take seconds of server CPU to build)."""

from __future__ import annotations

import io

import numpy as np
import streamlit as st

from attention_core import WhatIfRun
from ui.lessons.playground.export import output_csv, qkv_csv, weights_csv
from ui.text import head_name

LARGE = 20 * 2**20  # bytes: above this, no every-head CSV


def human_size(n: float) -> str:
    """Bytes as "850 bytes", "12 KB", "3.4 MB"."""
    if n < 1000:
        return f"{int(n)} bytes"
    if n < 1e6:
        return f"{n / 1e3:.0f} KB"
    return f"{n / 1e6:.1f} MB"


def weights_csv_size(run: WhatIfRun, heads: int | None = None) -> int:
    """The size in bytes of weights_csv for ``heads`` heads (all by default), from the row layout, without
    building it: header, then per row head, query, query token, key, key token and the weight (~10 characters)."""
    H = run.weights.shape[0] if heads is None else heads
    T = run.T
    digits = lambda n: len(str(n))  # noqa: E731
    tok = sum(len(t.encode()) + (2 if any(c in t for c in ',"\n') else 0) for t in run.tokens)
    index_chars = sum(digits(i) for i in range(1, T + 1))
    per_head = T * T * (digits(H) + 6 + 11) + 2 * T * (index_chars + tok)
    return 40 + H * per_head


def weights_npz(run: WhatIfRun) -> bytes:
    """Every head's (H, T, T) weights as float32 in an .npz (uncompressed: built in milliseconds), with the tokens."""
    buf = io.BytesIO()
    np.savez(buf, weights=run.weights.astype(np.float32), tokens=np.asarray(run.tokens, dtype=str))
    return buf.getvalue()


def download_buttons(run: WhatIfRun, head: int) -> None:
    """Weights, Q/K/V and output downloads for ``run``; ``head`` is the head picked on the page (0-based)."""
    c1, c2, c3 = st.columns(3)
    size = weights_csv_size(run)
    if size <= LARGE:
        c1.download_button(
            f"Weights (CSV, every head, about {human_size(size)})",
            lambda: weights_csv(run),
            "attention_weights.csv",
            "text/csv",
            key="dl_w",
            on_click="ignore",
        )
    else:
        one = weights_csv_size(run, heads=1)
        c1.download_button(
            f"Weights of {head_name(head)} (CSV, about {human_size(one)})",
            lambda: weights_csv(run, head=head),
            f"attention_weights_head{head + 1}.csv",
            "text/csv",
            key="dl_w",
            on_click="ignore",
        )
        raw = run.weights.size * 4
        c1.download_button(
            f"Weights, every head (.npz, float32, about {human_size(raw)})",
            lambda: weights_npz(run),
            "attention_weights.npz",
            "application/octet-stream",
            key="dl_w_npz",
            on_click="ignore",
        )
        c1.caption(
            f"Every head as CSV would be about {human_size(size)}; the .npz holds the same numbers "
            "(np.load(...)['weights'] has shape (heads, T, T))."
        )
    H, T, d_k = run.q.shape
    qkv = 3 * H * T * (d_k * 11 + 12)
    c2.download_button(
        f"Q, K, V (CSV, every head, about {human_size(qkv)})",
        lambda: qkv_csv(run),
        "attention_qkv.csv",
        "text/csv",
        key="dl_qkv",
        on_click="ignore",
    )
    c3.download_button(
        f"Output Z (CSV, about {human_size(T * (run.output.shape[1] * 11 + 10))})",
        lambda: output_csv(run),
        "attention_output.csv",
        "text/csv",
        key="dl_z",
        on_click="ignore",
    )
