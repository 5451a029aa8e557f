"""Charts of the Train page: curves over steps with the phase change marked, every head's map, and the
query/key picture. Plain Altair specs built from the arrays a Trajectory holds."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention_core.training.inspect import QKPicture
from attention_core.training.scores import SCORE_NAMES
from attention_core.training.trajectory import Trajectory
from ui.charts import show_heatmap

SMOOTH = 25  # steps in the running mean of the per-step training loss


def running_mean(x: np.ndarray, n: int = SMOOTH) -> np.ndarray:
    """Mean of the last ``n`` values at every index (fewer at the start)."""
    c = np.cumsum(np.insert(np.asarray(x, dtype=np.float64), 0, 0.0))
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(idx - n, 0)
    return (c[idx] - c[lo]) / (idx - lo)


def curve_frame(traj: Trajectory, run: str = "") -> pd.DataFrame:
    """Long frame (step, value, curve, run, metric) of the loss and accuracy curves of one run."""
    steps = traj.steps
    parts = [pd.DataFrame({"step": steps, "value": traj.heldout_loss, "curve": "held-out", "metric": "loss"}),
             pd.DataFrame({"step": steps, "value": traj.heldout_acc, "curve": "held-out", "metric": "accuracy"})]
    if traj.n_steps:
        every = max(1, traj.n_steps // 300)  # at most ~300 points per curve
        idx = np.arange(every - 1, traj.n_steps, every)
        parts += [pd.DataFrame({"step": idx + 1, "value": running_mean(traj.train_loss)[idx], "curve": "train",
                                "metric": "loss"}),
                  pd.DataFrame({"step": idx + 1, "value": running_mean(traj.train_acc)[idx], "curve": "train",
                                "metric": "accuracy"})]
    df = pd.concat(parts, ignore_index=True)
    df["run"] = run
    df["value"] = df["value"].astype(float).round(4)
    return df


def score_frame(traj: Trajectory, run: str = "") -> pd.DataFrame:
    """Long frame (step, score, head, value, run) of every head's scores that were measured."""
    rows = []
    S, L, H, _ = traj.scores.shape
    for k, name in enumerate(SCORE_NAMES):
        if np.isnan(traj.scores[..., k]).all():
            continue
        for layer in range(L):
            for head in range(H):
                rows.append(pd.DataFrame({"step": traj.steps, "value": traj.scores[:, layer, head, k].round(4),
                                          "score": name, "head": f"L{layer + 1}H{head + 1}"}))
    df = pd.concat(rows, ignore_index=True)
    df["run"] = run
    return df


def _marks(base: alt.Chart, marks: list[tuple[int, str]], shown_step: int | None) -> alt.LayerChart:
    layers = [base]
    if marks:
        rules = pd.DataFrame({"step": [m[0] for m in marks], "label": [m[1] for m in marks]})
        layers.append(alt.Chart(rules).mark_rule(color="#e45756", strokeDash=[5, 3], strokeWidth=2).encode(
            x="step:Q", tooltip=["label:N", "step:Q"]))
    if shown_step is not None:
        layers.append(alt.Chart(pd.DataFrame({"step": [shown_step]})).mark_rule(color="#444").encode(x="step:Q"))
    return alt.layer(*layers)


def curves_chart(df: pd.DataFrame, metric: str, title: str, marks=(), shown_step=None, by_run=False) -> alt.LayerChart:
    """Lines of one metric over steps (colour = curve, or run and dash = curve), phase changes as red rules."""
    data = df[df["metric"] == metric]
    colour = "run:N" if by_run else "curve:N"
    base = alt.Chart(data, title=title).mark_line().encode(
        x=alt.X("step:Q", title="step"), y=alt.Y("value:Q", title=metric),
        color=alt.Color(colour, legend=alt.Legend(orient="bottom", title=None)),
        strokeDash=alt.StrokeDash("curve:N", legend=alt.Legend(orient="bottom", title=None)) if by_run
        else alt.Undefined, tooltip=["run:N", "curve:N", "step:Q", "value:Q"])
    return _marks(base, list(marks), shown_step).properties(height=240)


def scores_chart(df: pd.DataFrame, score: str, title: str, marks=(), shown_step=None, by_run=False) -> alt.LayerChart:
    """One score over steps, one line per head (and per run), phase changes as red rules."""
    data = df[df["score"] == score]
    base = alt.Chart(data, title=title).mark_line().encode(
        x=alt.X("step:Q", title="step"), y=alt.Y("value:Q", title=score, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("head:N", legend=alt.Legend(orient="bottom", title=None)),
        strokeDash=alt.StrokeDash("run:N", legend=alt.Legend(orient="bottom", title=None)) if by_run else alt.Undefined,
        tooltip=["run:N", "head:N", "step:Q", "value:Q"])
    return _marks(base, list(marks), shown_step).properties(height=240)


def show_head_maps(maps: np.ndarray, labels, key: str) -> None:
    """Every head's map on the probe, a row of columns per layer."""
    L, H = maps.shape[:2]
    for layer in range(L):
        cols = st.columns(H)
        for head in range(H):
            show_heatmap(maps[layer, head], labels, labels, title=f"layer {layer + 1} head {head + 1}",
                         container=cols[head], key=f"{key}_{layer}_{head}", size=230, legend=False,
                         domain=(0.0, 1.0))


def qk_chart(pic: QKPicture, labels) -> alt.LayerChart:
    """Queries (circles) and keys (squares) in one plane, a line from each query to its top keys."""
    labels = list(labels)
    T = len(labels)
    q = pd.DataFrame({"x": pic.queries[:, 0], "y": pic.queries[:, 1], "token": labels, "kind": "query"})
    k = pd.DataFrame({"x": pic.keys[:, 0], "y": pic.keys[:, 1], "token": labels, "kind": "key"})
    lines = []
    for i in range(T):
        for j in pic.top_keys[i]:
            if j < 0:
                continue
            w = float(pic.weights[i, j])
            lines += [{"pair": f"{i}-{j}", "x": float(pic.queries[i, 0]), "y": float(pic.queries[i, 1]), "weight": w,
                       "what": f"{labels[i]} → {labels[j]}"},
                      {"pair": f"{i}-{j}", "x": float(pic.keys[j, 0]), "y": float(pic.keys[j, 1]), "weight": w,
                       "what": f"{labels[i]} → {labels[j]}"}]
    line_chart = alt.Chart(pd.DataFrame(lines)).mark_line(color="#888").encode(
        x="x:Q", y="y:Q", detail="pair:N", opacity=alt.Opacity("weight:Q", scale=alt.Scale(domain=[0, 1]), legend=None),
        tooltip=["what:N", alt.Tooltip("weight:Q", format=".3f")])
    points = alt.Chart(pd.concat([q, k])).mark_point(filled=True, size=70).encode(
        x=alt.X("x:Q", title="PC 1"), y=alt.Y("y:Q", title="PC 2"),
        color=alt.Color("kind:N", scale=alt.Scale(domain=["query", "key"], range=["#4c78a8", "#f58518"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=["query", "key"], range=["circle", "square"])),
        tooltip=["kind:N", "token:N"])
    text = alt.Chart(pd.concat([q, k])).mark_text(dy=-9, fontSize=10, color="#333").encode(
        x="x:Q", y="y:Q", text="token:N")
    return alt.layer(line_chart, points, text).properties(height=380)
