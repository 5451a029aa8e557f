"""Charts and tables of the Train page: curves over steps with the phase change marked, every head's map and
scores, the query/key picture, and a snapshot's downloads. Plain Vega-Lite specs built from the arrays a
Trajectory holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.training import TrainConfig
from attention_core.training.export import standalone_script, weights_npz
from attention_core.training.inspect import QKPicture
from attention_core.training.scores import SCORE_NAMES
from attention_core.training.trainer import Snapshot
from attention_core.training.trajectory import Trajectory
from ui.draw import vega
from ui.draw.charts import show_heatmap
from ui.draw.vega import with_data
from ui.lessons.train.text import QK_LABELLED
from ui.text import head_name

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
    parts = [
        pd.DataFrame({"step": steps, "value": traj.heldout_loss, "curve": "held-out", "metric": "loss"}),
        pd.DataFrame({"step": steps, "value": traj.heldout_acc, "curve": "held-out", "metric": "accuracy"}),
    ]
    if traj.n_steps:
        every = max(1, traj.n_steps // 300)  # at most ~300 points per curve
        idx = np.arange(every - 1, traj.n_steps, every)
        parts += [
            pd.DataFrame(
                {"step": idx + 1, "value": running_mean(traj.train_loss)[idx], "curve": "train", "metric": "loss"}
            ),
            pd.DataFrame(
                {"step": idx + 1, "value": running_mean(traj.train_acc)[idx], "curve": "train", "metric": "accuracy"}
            ),
        ]
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
                rows.append(
                    pd.DataFrame(
                        {
                            "step": traj.steps,
                            "value": traj.scores[:, layer, head, k].round(4),
                            "score": name,
                            "head": f"L{layer + 1}H{head + 1}",
                        }
                    )
                )
    df = pd.concat(rows, ignore_index=True)
    df["run"] = run
    return df


# Whole steps on the x axis. At step 0 a run has one point; Vega's ticks for the empty range [0, 0] read 0.000000,
# so the charts also fix the step range to the run's length (``steps``).
STEP_AXIS = {"format": "d", "tickMinStep": 1, "title": "step"}


def step_scale(steps: int | None) -> dict:
    """The x scale of a chart over steps: 0 to the run's length (at least 1), or Vega's own range without one."""
    return {} if steps is None else {"scale": {"domain": [0, max(int(steps), 1)], "nice": False}}


def layered(title: str, base: dict, marks=(), shown_step=None, steps: int | None = None) -> dict:
    """A Vega-Lite spec (a plain dict: Altair's validation costs ~0.2 s a chart, too slow for a live redraw)
    of the layer ``base`` (curves_layer, scores_layer) with the phase changes as red dashed rules and the shown
    step as a grey rule; ``steps`` (the run's length) fixes the step axis from 0 to it, so a live run's axis
    stays still as it trains. ``base``'s rows travel as a named Arrow dataset of the whole spec (inline records
    were ~400 KB of JSON per change; the shipped runs' layers are built once per process,
    ui.compute.cached_ready_layers)."""
    x = {"field": "step", "type": "quantitative", "axis": STEP_AXIS, **step_scale(steps)}
    first = {k: v for k, v in base.items() if k != "datasets"}
    layers = [{**first, "encoding": {**first["encoding"], "x": {**first["encoding"]["x"], **x}}}]
    if marks:
        layers.append(
            {
                "data": {"values": [{"step": m[0], "label": m[1]} for m in marks]},
                "mark": {
                    "type": "rule",
                    "color": "#e45756",
                    "strokeDash": [5, 3],
                    "strokeWidth": 2,
                    "description": "red dashed rules: phase changes",
                },
                "encoding": {"x": x, "tooltip": [{"field": "label"}, {"field": "step", "type": "quantitative"}]},
            }
        )
    if shown_step is not None:
        layers.append(
            {
                "data": {"values": [{"step": int(shown_step)}]},
                "mark": {"type": "rule", "color": "#444", "description": f"grey rule: step {int(shown_step)} shown"},
                "encoding": {"x": x},
            }
        )
    said = [f"phase changes at step {', '.join(str(m[0]) for m in marks)} (red dashed)"] if marks else []
    said += [f"step {int(shown_step)} shown (grey line)"] if shown_step is not None else []
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": title,
        "description": f"{title}: {base.get('description', '')} {'; '.join(said)}".strip(),
        "height": 220,  # the plot's own height: fit-x fills the column's width and leaves the height alone
        "autosize": {"type": "fit-x", "contains": "padding"},
        "layer": layers,
        "datasets": base["datasets"],
    }
    return spec


def curves_chart(
    df: pd.DataFrame, metric: str, title: str, marks=(), shown_step=None, by_run=False, steps: int | None = None
) -> dict:
    """Lines of one metric over steps (colour = curve, or run and dash = curve), phase changes as red rules."""
    return layered(title, curves_layer(df, metric, by_run), marks, shown_step, steps)


def scores_chart(
    df: pd.DataFrame, score: str, title: str, marks=(), shown_step=None, by_run=False, steps: int | None = None
) -> dict:
    """One score over steps, one line per head (and per run), phase changes as red rules."""
    return layered(title, scores_layer(df, score, by_run), marks, shown_step, steps)


def value_axis(metric: str) -> dict:
    """The y encoding's scale and axis of a curve: accuracy as a percentage from 0 to 1, the loss from 0 with
    short numbers (``~g`` drops trailing zeros: a run at step 0 has one value, and Vega's default ticks for a
    one-value range read 0.000000)."""
    if metric == "accuracy":
        return {"scale": {"domain": [0, 1]}, "axis": {"format": ".0%"}}
    return {"scale": {"zero": True}, "axis": {"format": "~g"}}


def curves_layer(df: pd.DataFrame, metric: str, by_run: bool = False) -> dict:
    """The lines of one metric over steps, as a layer whose rows travel as a named Arrow dataset."""
    data = df[df["metric"] == metric]
    legend = {"orient": "bottom", "title": None}
    enc = {
        "x": {"field": "step", "type": "quantitative", "axis": STEP_AXIS},
        "y": {"field": "value", "type": "quantitative", "title": metric, **value_axis(metric)},
        "color": {"field": "run" if by_run else "curve", "type": "nominal", "legend": legend},
        "tooltip": [{"field": f} for f in ("run", "curve", "step", "value")],
    }
    if by_run:
        enc["strokeDash"] = {"field": "curve", "type": "nominal", "legend": legend}
    return with_data({"mark": "line", "encoding": enc}, data.reset_index(drop=True))  # rows as a named Arrow dataset


def scores_layer(df: pd.DataFrame, score: str, by_run: bool = False) -> dict:
    """One score over steps, one line per head (and per run), as a layer with a named Arrow dataset."""
    data = df[df["score"] == score].copy()
    data["line"] = (data["run"] + " " + data["head"]) if by_run else data["head"]
    enc = {
        "x": {"field": "step", "type": "quantitative", "axis": STEP_AXIS},
        "y": {
            "field": "value",
            "type": "quantitative",
            "title": score,
            "scale": {"domain": [0, 1]},
            "axis": {"format": "~g"},
        },
        "color": {"field": "line", "type": "nominal", "legend": {"orient": "right", "title": None}},
        "tooltip": [{"field": f} for f in ("run", "head", "step", "value")],
    }
    return with_data({"mark": "line", "encoding": enc}, data.reset_index(drop=True))  # rows as a named Arrow dataset


def show_run_charts(traj: Trajectory, marks=(), shown_step=None, steps: int | None = None) -> None:
    """A live run's charts over steps: its loss and accuracy side by side, then a row of every head's scores (one
    chart per score measured); phase changes (``marks``) and the shown step ruled on each."""
    df, sf = curve_frame(traj, "live"), score_frame(traj, "live")
    a, b = st.columns(2)
    vega.draw(a, curves_chart(df, "loss", "Loss", marks, shown_step, steps=steps), width="stretch")
    vega.draw(b, curves_chart(df, "accuracy", "Accuracy", marks, shown_step, steps=steps), width="stretch")
    names = list(dict.fromkeys(sf["score"]))
    for col, name in zip(st.columns(len(names)), names):
        title = f"{name} score of every head"
        vega.draw(col, scores_chart(sf, name, title, marks, shown_step, steps=steps), width="stretch")


def show_head_maps(maps: np.ndarray, labels, key: str) -> None:
    """Every head's map on the probe: a tab per layer, its heads side by side when they fit (at 12 px a cell,
    two 32-token maps are wider than half of a 1280 px window), else one under the other."""
    L, H, T, _ = maps.shape
    tabs = st.tabs([f"layer {layer + 1}" for layer in range(L)])
    for layer, tab in enumerate(tabs):
        boxes = tab.columns(H) if H * T <= 40 else [tab] * H
        for head in range(H):
            show_heatmap(
                maps[layer, head],
                labels,
                labels,
                title=f"layer {layer + 1} {head_name(head)}",
                container=boxes[head],
                key=f"{key}_{layer}_{head}",
                size=230,
                legend=False,
                domain=(0.0, 1.0),
            )


def head_score_table(scores: np.ndarray) -> dict[str, list[str]]:
    """One snapshot's ``(L, H, 3)`` head scores as table columns: the head (L1H1, L1H2, ...), then each score that
    was measured, to two decimals."""
    L, H, _ = scores.shape
    heads = [(layer, head) for layer in range(L) for head in range(H)]
    return {
        "head": [f"L{layer + 1}H{head + 1}" for layer, head in heads],
        **{
            name: [f"{scores[layer, head, k]:.2f}" for layer, head in heads]
            for k, name in enumerate(SCORE_NAMES)
            if not np.isnan(scores[..., k]).all()
        },
    }


def show_exports(cfg: TrainConfig, snap: Snapshot, key: str) -> None:
    """Downloads of one snapshot: its weights (.npz), and a standalone script that trains the same run. Both are
    made when clicked (as ui/lessons/playground/downloads.py's), not on every rerun: a playing run reruns every 0.3 s."""
    d1, d2 = st.columns(2)
    d1.download_button(
        f"Weights at step {snap.step} (.npz)",
        lambda: weights_npz(cfg, snap.params),
        file_name=f"tiny_transformer_step{snap.step}.npz",
        key=f"{key}_npz",
        on_click="ignore",
    )
    d2.download_button(
        "Standalone training script (torch only)",
        lambda: standalone_script(cfg),
        file_name="train_tiny_transformer.py",
        key=f"{key}_script",
        on_click="ignore",
    )
    st.caption("The script draws the same weights and batches from the same seed and prints the same loss curve.")


def qk_labelled(pic: QKPicture) -> tuple[set[int], set[int]]:
    """(queries, keys) whose tokens the picture writes: the ends of its QK_LABELLED strongest lines (every point
    has its token on hover); labelling all 2T points piled them up where the points crowd."""
    pairs = [(float(pic.weights[i, j]), i, int(j)) for i in range(len(pic.queries)) for j in pic.top_keys[i] if j >= 0]
    strongest = sorted(pairs, reverse=True)[:QK_LABELLED]
    return {i for _, i, _ in strongest}, {j for _, _, j in strongest}


def qk_chart(pic: QKPicture, labels) -> dict:
    """Queries (circles) and keys (squares) in one plane, a line from each query to its top keys; the tokens of the
    strongest lines' ends written beside them (:func:`qk_labelled`)."""
    labels = list(labels)
    queries, keys = qk_labelled(pic)
    points = [
        {"x": float(x), "y": float(y), "token": labels[i], "kind": kind, "named": i in named}
        for kind, xy, named in (("query", pic.queries, queries), ("key", pic.keys, keys))
        for i, (x, y) in enumerate(xy)
    ]
    lines = []
    for i in range(len(labels)):
        for j in pic.top_keys[i]:
            if j < 0:
                continue
            what, w = f"{labels[i]} → {labels[j]}", float(pic.weights[i, j])
            lines += [
                {
                    "pair": f"{i}-{j}",
                    "x": float(pic.queries[i, 0]),
                    "y": float(pic.queries[i, 1]),
                    "weight": w,
                    "what": what,
                },
                {"pair": f"{i}-{j}", "x": float(pic.keys[j, 0]), "y": float(pic.keys[j, 1]), "weight": w, "what": what},
            ]
    xy = {
        "x": {"field": "x", "type": "quantitative", "title": "PC 1"},
        "y": {"field": "y", "type": "quantitative", "title": "PC 2"},
    }
    kind = {"domain": ["query", "key"]}
    i, j = np.unravel_index(int(np.argmax(pic.weights)), pic.weights.shape)
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "description": f"Queries (circles) and keys (squares) of {len(labels)} tokens in one plane (two principal "
        f"axes, {pic.explained:.0%} of the variance), a line from each query to its top keys; the strongest, "
        f"{labels[i]} to {labels[j]}, weight {pic.weights[i, j]:.3g}.",
        "height": 380,
        "autosize": {"type": "fit-x", "contains": "padding"},
        "layer": [
            {
                "data": {"values": lines},
                "mark": {"type": "line", "color": "#888"},
                "encoding": {
                    **xy,
                    "detail": {"field": "pair", "type": "nominal"},
                    "opacity": {"field": "weight", "type": "quantitative", "scale": {"domain": [0, 1]}, "legend": None},
                    "tooltip": [{"field": "what"}, {"field": "weight", "type": "quantitative", "format": ".3f"}],
                },
            },
            {
                "data": {"values": points},
                "mark": {"type": "point", "filled": True, "size": 70},
                "encoding": {
                    **xy,
                    "color": {
                        "field": "kind",
                        "type": "nominal",
                        "legend": {"orient": "bottom", "title": None},
                        "scale": {**kind, "range": ["#4c78a8", "#f58518"]},
                    },
                    "shape": {"field": "kind", "type": "nominal", "scale": {**kind, "range": ["circle", "square"]}},
                    "tooltip": [{"field": "kind"}, {"field": "token"}],
                },
            },
            {
                "data": {"values": [p for p in points if p["named"]]},
                "mark": {"type": "text", "dy": -9, "fontSize": 11, "color": "#333"},
                "encoding": {**xy, "text": {"field": "token"}},
            },
        ],
    }
