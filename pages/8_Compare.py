"""Compare: two what-ifs side by side (A and B), their weights, outputs, saturation and differences."""

import numpy as np
import streamlit as st

from ui.charts import show_heatmap
from ui.compute import cached_run, cached_saturation
from ui.controls import ControlSet, current, fmt, share_box, show_notices, whatif_controls, write_url
from ui.layout import page_setup
from ui.widgets import index_picker

page_setup("Compare", "⚖️",
           "Two settings side by side. A and B start from the shared setting with scaling on (A) and off (B); "
           "change either side and watch the weights, the outputs and the saturation figures move apart.")
shared = current()
A_SET, B_SET = ControlSet("whatif_a", "a_", "a_"), ControlSet("whatif_b", "b_", "b_")
SHOW = ("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed")
col_a, col_b = st.columns(2)
with col_a.expander("Controls of A", expanded=True):
    cfg_a = whatif_controls(st, A_SET, SHOW, default=shared.replace(scaled=True), label_suffix=" (A)")
with col_b.expander("Controls of B", expanded=True):
    cfg_b = whatif_controls(st, B_SET, SHOW, default=shared.replace(scaled=False), label_suffix=" (B)")
for cs in (A_SET, B_SET):
    show_notices(cs)
if st.button("Reset A and B to the shared setting (scaling on / off)", key="cmp_reset"):
    for cs in (A_SET, B_SET):
        st.session_state.pop(cs.state_key, None)
        for name in list(st.query_params):
            if name.startswith(cs.url_prefix):
                del st.query_params[name]
    st.rerun()
write_url(shared)
write_url(cfg_a, A_SET)
write_url(cfg_b, B_SET)
share_box(st.sidebar)

run_a, run_b = cached_run(cfg_a), cached_run(cfg_b)
sat_a, sat_b = cached_saturation(cfg_a), cached_saturation(cfg_b)
H = max(cfg_a.n_heads, cfg_b.n_heads)
head = index_picker("head", [f"head {h + 1}" for h in range(H)], key="cmp_head")
ha, hb = min(head, cfg_a.n_heads - 1), min(head, cfg_b.n_heads - 1)
if ha != head or hb != head:
    st.caption(f"A has {cfg_a.n_heads} head(s) and B {cfg_b.n_heads}; the side with fewer shows its last head.")

st.subheader("Attention weights")
c1, c2, c3 = st.columns(3)
for col, run, h, name in ((c1, run_a, ha, "A"), (c2, run_b, hb, "B")):
    blank = None if run.mask is None else ~run.mask
    show_heatmap(run.weights[h], run.tokens, run.tokens, title=f"{name}: head {h + 1}", domain=(0, 1), blank=blank,
                 container=col, size=260)
same_shape = run_a.weights.shape[1:] == run_b.weights.shape[1:]
if same_shape:
    diff = run_b.weights[hb] - run_a.weights[ha]
    lim = float(np.abs(diff).max()) or 1.0
    show_heatmap(diff, run_a.tokens, run_a.tokens, title="B − A", value_name="Δ weight", scheme="diverging",
                 domain=(-lim, lim), container=c3, size=260)
    c3.caption(f"Largest change of a weight: {fmt(float(np.abs(diff).max()))}.")
else:
    c3.info(f"A has {run_a.T} tokens and B {run_b.T}: no difference map for maps of different shapes.")

st.subheader("Saturation (mean over heads) and the difference B − A")
mean = lambda sat, k: float(np.mean([s[k] for s in sat]))  # noqa: E731
cols = st.columns(4)
for col, key, label in zip(cols, ("max_weight", "entropy", "effective_tokens", "near_one_hot_share"),
                           ("mean max weight", "entropy (nats)", "effective tokens", "near-one-hot rows")):
    a, b = mean(sat_a, key), mean(sat_b, key)
    if key == "near_one_hot_share":
        col.metric(f"A: {label}", f"{a:.0%}")
        col.metric(f"B: {label}", f"{b:.0%}", delta=f"{100 * (b - a):+.0f} pts")
    else:
        col.metric(f"A: {label}", fmt(a))
        col.metric(f"B: {label}", fmt(b), delta=f"{b - a:+.3g}")
st.caption("Each B figure shows its change against A. A near-one-hot row puts over 99% of its weight on one key.")

st.subheader("Outputs")
c1, c2, c3 = st.columns(3)
for col, run, cfg, name in ((c1, run_a, cfg_a, "A"), (c2, run_b, cfg_b, "B")):
    show_heatmap(run.output, run.tokens, [str(j) for j in range(cfg.d_model)], title=f"{name}: Z ({run.T} x {cfg.d_model})",
                 row_title="token", col_title="dim", value_name="z", scheme="diverging", container=col, size=260)
if run_a.output.shape == run_b.output.shape:
    dz = run_b.output - run_a.output
    lim = float(np.abs(dz).max()) or 1.0
    show_heatmap(dz, run_a.tokens, [str(j) for j in range(cfg_a.d_model)], title="Z: B − A", row_title="token",
                 col_title="dim", value_name="Δ z", scheme="diverging", domain=(-lim, lim), container=c3, size=260)
    rel = float(np.linalg.norm(dz) / max(np.linalg.norm(run_a.output), 1e-12))
    c3.caption(f"The outputs differ by {fmt(100 * rel)}% of A's size (relative Frobenius norm).")
else:
    c3.info("The outputs have different shapes; no difference map.")
