"""Implementations side by side: the same attention in NumPy, from-scratch torch, PyTorch's own and Keras."""

import inspect
import math

import pandas as pd
import streamlit as st

from attention_core import implementations as impls
from attention_core import scaled_dot_product_attention as sdpa_numpy
from attention_core.torch_attention import (
    MultiHeadSelfAttention,
    SelfAttention,
    scaled_dot_product_attention_torch,
    softmax_torch,
)
from ui.compute import cached_implementations, cached_run
from ui.draw.tables import show_table
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.text import fmt

page = Page(
    __file__,
    "The same multi-head attention, on the current input and weights, computed by every implementation "
    "we can run. The from-scratch versions are a few lines each; the table proves they compute what "
    "PyTorch's and Keras' own layers compute.",
)
st.latex(
    r"\mathrm{MultiHead}(X) = \mathrm{concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\, W_o,\qquad "
    r"\mathrm{head}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}\,\tau}\right) V_h"
)


def _controls() -> tuple:
    """The full-run part: the sidebar's controls, and the place for their notices and share link."""
    page.whatif()
    return ()


def _diff(d: float | None) -> str:
    """A difference as the table writes it: ui.text.fmt, as in the sentences; none (or NaN) is an empty cell."""
    return "" if d is None or not math.isfinite(d) else fmt(d)


def _draw() -> list[Question]:
    """Every implementation on the sidebar's setting: the table of differences and times, and what it says."""
    cfg = page.setting()
    with st.spinner("Running every implementation…"):
        rows = cached_implementations(cfg)
    _table(cfg, rows)
    ran = [r for r in rows if r.max_diff_output is not None]  # Keras is skipped without TensorFlow
    worst, fastest = _verdict(ran)
    _code_tabs(cfg)
    return _questions(ran, worst, fastest)


def _table(cfg, rows) -> None:
    """Every implementation's differences from the NumPy reference, and its time."""
    run = cached_run(cfg)
    ref = rows[0]  # the NumPy reference: compared with itself its differences are 0 by definition, so none are shown
    df = pd.DataFrame(
        {
            "implementation": [r.name for r in rows],
            # as text by the one formatter, as the sentence under the table writes them (a missing or NaN one empty)
            "max |Δ weights|": ["" if r is ref else _diff(r.max_diff_weights) for r in rows],
            "max |Δ output|": ["" if r is ref else _diff(r.max_diff_output) for r in rows],
            "time (ms)": [r.time_ms for r in rows],
            "note": ["the reference the others are compared with" if r is ref else r.note for r in rows],
        }
    )
    st.subheader(
        f"Same input, same weights: T = {run.T}, d_model = {cfg.d_model}, {cfg.n_heads} head"
        + ("s" if cfg.n_heads > 1 else "")
    )
    show_table(
        st,
        df,
        hide_index=True,
        whole=True,  # every name whole: the first check question asks which of them return no weights
        width="stretch",
        column_config={
            "implementation": st.column_config.TextColumn(width="medium"),
            "note": st.column_config.TextColumn(width="large"),
            "time (ms)": st.column_config.NumberColumn(format="%.3f"),
        },
    )


def _verdict(ran) -> tuple[float, object]:
    """What the table says: the largest difference and the fastest; returns ``(largest difference, fastest row)``."""
    diffs = [d for r in ran[1:] for d in (r.max_diff_output, r.max_diff_weights) if d is not None]
    worst = max((d for d in diffs if math.isfinite(d)), default=0.0)
    nan_rows = [r.name for r in ran if "NaN" in r.note]
    worst_text = _worst_text(worst)
    fastest = min(ran, key=lambda r: r.time_ms)
    st.markdown(
        f"Differences against the NumPy reference (float32): the largest is {worst_text}"
        + (", the size of float32 rounding." if 0 < worst < 1e-4 else ".")
        + (f" Not counted: {', '.join(nan_rows)} give NaN where a fully masked row should give 0." if nan_rows else "")
        + f" The fastest here was {fastest.name} ({fastest.time_ms:.3f} ms)."
    )
    st.caption(
        "Times are the median of 3 runs after a warm-up, measured once for this setting on this server and "
        "kept: they vary with the server's load (other students' runs share its CPU), so compare them within "
        "the table, not across visits."
    )
    if not impls.keras_available():
        st.info(
            "The Keras row needs TensorFlow, which the app does not install: `pip install -r requirements-tf.txt` "
            "adds `tensorflow-cpu`, and the row fills in. The test suite installs it and checks it."
        )
    return worst, fastest


def _code_tabs(cfg) -> None:
    """The source of every implementation, one tab per family."""
    st.subheader("The code that ran")
    tabs = st.tabs(["NumPy", "torch functional", "torch modules", "PyTorch's own", "Keras"])
    with tabs[0]:
        st.code(inspect.getsource(sdpa_numpy), language="python")
        st.code(inspect.getsource(impls.numpy_functional), language="python")
    with tabs[1]:
        st.code(inspect.getsource(scaled_dot_product_attention_torch), language="python")
        st.code(inspect.getsource(softmax_torch), language="python")
        st.code(inspect.getsource(impls.torch_functional), language="python")
    with tabs[2]:
        st.code(inspect.getsource(MultiHeadSelfAttention), language="python")
        st.code(inspect.getsource(SelfAttention), language="python")
    with tabs[3]:
        st.code(inspect.getsource(impls.torch_sdpa), language="python")
        st.code(inspect.getsource(impls.torch_nn_multihead), language="python")
    with tabs[4]:
        st.markdown("The equivalent Keras code:")
        st.code(impls.KERAS_CODE, language="python")
        st.markdown("What this page runs for the Keras row:")
        st.code(inspect.getsource(impls.keras_multihead), language="python")
    st.caption(
        f"Scaling: {'1/√d_k = ' + fmt(cfg.d_k**-0.5) if cfg.scaled else 'off'}, temperature {cfg.temperature:g}. "
        "Layers that always divide by √d_k (nn.MultiheadAttention, Keras) get the setting folded into W_q."
    )


def _worst_text(worst: float) -> str:
    return "0 (identical)" if worst == 0 else fmt(worst)


def _questions(ran, worst: float, fastest) -> list[Question]:
    """Which return no weights, the largest difference, the fastest."""
    worst_text = _worst_text(worst)
    no_weights = [r.name for r in ran if r.max_diff_weights is None]
    return [
        (
            "Which implementations return no attention weights, and why?",
            (", ".join(no_weights) if no_weights else "None in this run")
            + ": it computes softmax(QKᵀ)V in one fused step (a single routine for the whole formula, like "
            "FlashAttention) without ever storing the T x T weights, which saves memory.",
        ),
        (
            "What is the largest difference from the NumPy reference in this table, and where does it come from?",
            f"{worst_text}: "
            + (
                "every implementation computes in float32, which keeps about 7 significant digits; "
                "the order of additions differs, so the last digits differ."
                if worst > 0
                else "for this setting every implementation returned exactly the reference's numbers."
            ),
        ),
        (
            "Which implementation was fastest for this setting, and is that a fair verdict?",
            f"{fastest.name}, {fastest.time_ms:.3f} ms. One input on a shared server: the times move with the server's "
            "load, and small inputs mostly measure call overhead.",
        ),
    ]


page.run(_draw, _controls, code=(impls.compare_implementations,))
