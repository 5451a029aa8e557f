"""Soft lookup: attention as a dictionary whose keys match by degree, and the temperature that makes it hard."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import lookup as core
from attention_core.readout import sharpness
from ui.classroom.mode import Prediction, predict
from ui.draw import vega
from ui.draw.charts import show_weights, weight_axis, weight_scale
from ui.draw.tables import show_table
from ui.draw.vega import with_data
from ui.glossary import MEANINGS
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam
from ui.text import fmt

page = Page(
    __file__,
    "A Python dict returns the value of the one key that **equals** the query, or raises KeyError. Attention "
    "returns a **mix of every value**, weighted by how well each key matches the query: a soft lookup. As the "
    "temperature τ falls, the soft lookup becomes a hard one.",
    formula=r"\texttt{d[q]} = v_j \text{ for the } k_j = q"
    r"\qquad\text{attention}(q) = \sum_j \mathrm{softmax}_j\!\left(\frac{q \cdot k_j}{\sqrt{d_k}\,\tau}\right) v_j",
)
LABELS = ("cat", "dog", "car", "cat (2nd)")  # the dictionary: keys (d_k = 2) and their values (d_v = 1)
KEYS = np.array([[2.0, 1.0], [1.0, 2.0], [1.0, -2.0], [2.0, 1.0]])  # (4, 2) cat and dog alike, car apart
VALUES = np.array([[10.0], [20.0], [30.0], [40.0]])  # (4, 1) one number each, so the mix is easy to read
SHARE = 0.99  # "practically hard": the best keys hold this share of the weight
TAUS = np.geomspace(0.1, 10.0, 81)  # (81,) the sweep: the slider's range on a log scale
QUERY = PageParam("sl_query", "query", 0.0, lo=0.0, hi=1.0, step=0.05, label="query: cat (0) → dog (1)", leaf=True)
TAU = PageParam("sl_tau", "tau", 1.0, lo=0.1, hi=10.0, step=0.1, label="temperature τ", leaf=True)
TWIN = PageParam(
    "sl_twin",
    "twin",
    False,
    boolean=True,
    label="cat stored twice",
    help="A fourth entry: the key cat again, with the value 40.",
    leaf=True,
)


def lookup(t: float, tau: float, twin: bool) -> tuple[core.LookupRun, list[str]]:
    """The one core call: the query a fraction ``t`` of the way from cat to dog against cat, dog, car (and a
    second cat when ``twin``) at temperature ``tau``; and the keys' names."""
    n = 4 if twin else 3
    q = (1.0 - t) * KEYS[0] + t * KEYS[1]  # (2,) exactly cat at 0, exactly dog at 1
    return core.run_lookup(q, KEYS[:n], VALUES[:n], tau, SHARE), list(LABELS[:n])


def _controls() -> tuple:
    c1, c2, c3 = st.columns([2, 2, 1.4])
    t = page.control(QUERY, c1)
    page.control(TAU, c2)
    twin = page.control(TWIN, c3)
    revealed = predict(limit_question(*lookup(t, 1.0, twin), t))
    return st.container(), revealed


def _draw(place, revealed: bool) -> list[Question]:
    t, tau, twin = (st.session_state[p.key] for p in (QUERY, TAU, TWIN))
    r, labels = lookup(t, tau, twin)
    left, right = place.columns(2)
    vega.draw(left, plane_chart(r, labels), width="content")
    rows = [f"τ = {tau:g}"] + (["τ → 0"] if revealed else [])  # the soft lookup, and its limit (the hard one)
    m = np.vstack([r.weights, r.hard_weights])[: len(rows)]  # (1 or 2, N)
    show_weights(
        m, rows, labels, title="weight on each key: soft, hard", scale=weight_scale(m), group="lookup", container=right
    )
    v = r.values[:, 0]  # (N,)
    table = {"key k": [f"({a:g}, {b:g})" for a, b in r.keys], "value v": v, "score q·k/√d_k": r.scores}
    table |= {"weight": r.weights, "weight × value": r.weights * v}
    three = {c: st.column_config.NumberColumn(format="%.3g") for c in table if c != "key k"}  # as the sentences
    show_table(place, pd.DataFrame(table, index=labels), column_config=three)
    place.caption(
        f"Every key has length {fmt(np.linalg.norm(r.keys, axis=1).max())}, so the key with the highest score is the "
        "key nearest the query. In a transformer each value is a vector (a row of V), mixed coordinate by coordinate."
    )
    for text in (dict_says(r, labels, t), mix_says(r), temperature_says(r)):
        place.markdown(text)
    questions = [
        Question("What does a Python dict return for this query?", dict_says(r, labels, t)),
        Question(f"Work attention's answer out from the weights in the table (τ = {tau:g}).", mix_says(r)),
    ]
    if not revealed:
        place.caption("The limit τ → 0 shows once you reveal your prediction above.")
        return questions
    limit = f"{limit_says(r, labels)} {threshold_says(r, labels)}"
    place.markdown(limit)
    vega.draw(place, *sweep_chart(r, labels, core.weights_over_temperature(r.query, r.keys, TAUS)), width="stretch")
    return [*questions, Question("What does the answer become as τ → 0, and below which τ is it so?", limit)]


# ---- the sentences, each computed from the numbers on screen


def names(labels, mask) -> str:
    """The labels where ``mask`` is on, in bold: "**cat**", "**cat** and **dog**", "**a**, **b** and **c**"."""
    picked = [f"**{lab}**" for lab, on in zip(labels, mask) if on]
    return picked[0] if len(picked) == 1 else ", ".join(picked[:-1]) + " and " + picked[-1]


def where(t: float) -> str:
    return "equal to cat" if t == 0 else "equal to dog" if t == 1 else f"{t:.0%} of the way from cat to dog"


def dict_says(r: core.LookupRun, labels, t: float) -> str:
    q = f"the query ({r.query[0]:.3g}, {r.query[1]:.3g})"
    if r.found is None:
        return f"A Python dict raises **KeyError**: {q}, {where(t)}, equals none of the keys. A dict has no notion of *close*."
    same = [j for j in range(len(labels)) if np.array_equal(r.keys[j], r.keys[r.found])]
    said = f"A Python dict returns **{r.values[r.found, 0]:g}**: {q} "
    if len(same) == 1:
        return said + f"is exactly the key **{labels[r.found]}**."
    lost = ", ".join(f"{r.values[j, 0]:g}" for j in same[:-1])
    return (
        said
        + f"equals a key stored {len(same)} times; a dict keeps one value per key, the last stored ({lost} was overwritten)."
    )


def mix_says(r: core.LookupRun) -> str:
    terms = " + ".join(f"{fmt(wj)} × {v:g}" for wj, v in zip(r.weights, r.values[:, 0]))
    return f"Attention returns a mix of every value instead: {terms} = **{fmt(r.answer[0])}** (the weights sum to 1)."


def temperature_says(r: core.LookupRun) -> str:
    w, n = r.weights, len(r.weights)
    word = sharpness(float(w.max()), 1.0 / n)
    text = f"At τ = {r.temperature:g} the weights are **{word}** ({MEANINGS[word]}): the largest is {fmt(w.max())}, uniform would be {fmt(1 / n)} each."
    if word == "nearly uniform":
        text += f" The answer {fmt(r.answer[0])} is close to the plain average of the values, {fmt(r.values.mean())}."
    return text


def limit_says(r: core.LookupRun, labels) -> str:
    top = r.hard_weights > 0
    dict_did = (
        "where the dict raised KeyError" if r.found is None else f"where the dict returned {r.values[r.found, 0]:g}"
    )
    if top.sum() > 1:
        return (
            f"{names(labels, top)} score the same ({fmt(r.scores[top][0])}), so however low τ goes they share the "
            f"weight evenly: the hard lookup returns their average, **{fmt(r.hard[0])}**, {dict_did}."
        )
    said = f"As τ falls, the weight gathers on {names(labels, top)}, the key with the highest score: the hard lookup returns its value, **{fmt(r.hard[0])}**"
    return said + (
        f", {dict_did}: the limit takes the *nearest* key, not an equal one."
        if r.found is None
        else ", as the dict does."
    )


def threshold_says(r: core.LookupRun, labels) -> str:
    top = r.hard_weights > 0
    if not np.isfinite(r.hard_below):
        return "Every key ties: no temperature singles one out."
    below = f"below τ = {fmt(r.hard_below)}"
    if r.hard_below < TAU.lo:
        below = f"only below τ = {fmt(r.hard_below)}, under this slider's smallest τ = {TAU.lo:g} (the nearer the query to halfway, the colder τ must be)"
    who, it = (f"{names(labels, top)} holds", "it holds") if top.sum() == 1 else ("Together they hold", "they hold")
    return f"{who} {r.share:.0%} of the weight {below}; at τ = {r.temperature:g} {it} {fmt(r.weights[top].sum())}."


def limit_question(r: core.LookupRun, labels, t: float) -> Prediction:
    """Asked before the limit shows: attention's answer as τ → 0, among the values, the limit and the average."""
    shown = sorted({fmt(x) for x in (*r.values[:, 0], r.hard[0], r.values.mean())}, key=float)
    twice = " (cat is stored twice)" if len(labels) == 4 else ""
    return Prediction(
        key="lookup.limit",
        question=f"As the temperature falls to 0, what will attention return for the query {where(t)}{twice}?",
        choices=tuple(shown),
        correct=shown.index(fmt(r.hard[0])),
        reveal=limit_says(r, labels),
        signature=(t, len(labels)),
    )


# ---- the charts (Vega-Lite specs and their columns)


def plane_chart(r: core.LookupRun, labels) -> dict:
    """The keys as points of the plane, their area the weight (equal keys: one point, names joined, weights
    summed), and the query as a red cross."""
    pts: dict[tuple, tuple[str, float]] = {}
    for k, lab, wj in zip(map(tuple, r.keys.tolist()), labels, r.weights):
        name, total = pts.get(k, ("", 0.0))
        pts[k] = (f"{name}, {lab}" if name else lab, total + wj)
    data = {
        "x": [k[0] for k in pts] + [r.query[0]],
        "y": [k[1] for k in pts] + [r.query[1]],
        "name": [n for n, _ in pts.values()] + ["query"],
        "w": [w for _, w in pts.values()] + [0.0],
        "key": [True] * len(pts) + [False],
    }
    axis = {"type": "quantitative", "scale": {"domain": [-3, 3]}}
    enc = {"x": {"field": "x", "title": "dimension 1", **axis}, "y": {"field": "y", "title": "dimension 2", **axis}}
    size = {"field": "w", "type": "quantitative", "scale": {"domain": [0, 1], "range": [20, 900]}}
    size["legend"] = {"title": "weight", "values": [0.1, 0.5, 1.0], "orient": "bottom"}

    def layer(keys, mark: dict, **more) -> dict:  # the keys' or the query's row
        return {"transform": [{"filter": f"{'' if keys else '!'}datum.key"}], "mark": mark, "encoding": {**enc, **more}}

    cross = {"type": "point", "shape": "cross", "size": 160, "color": "#d62728", "filled": True}
    where = ((1, {"dx": 14, "align": "left"}), (0, {"dx": -22, "align": "right"}))  # keys' names right, query's left
    text = [layer(k, {"type": "text", "fontSize": 12, **at}, text={"field": "name"}) for k, at in where]
    layers = [layer(True, {"type": "circle", "opacity": 0.8}, size=size), layer(False, cross), *text]
    square = {"width": 240, "height": 240, "autosize": {"type": "pad"}}  # the plot area itself: angles read true
    spec = {"title": "keys and the query (area ∝ weight)", **square, "layer": layers}
    return with_data(spec, pd.DataFrame(data))


def sweep_chart(r: core.LookupRun, labels, sweep) -> tuple[dict, dict]:
    """Each key's weight against τ (log scale), on the weights' axis; a rule at the slider's τ, a dashed one where
    the best keys come to hold SHARE."""
    n_tau, n = sweep.shape  # (81, N)
    twin = [lab.endswith(")") for lab in labels]  # cat (2nd): dashed, as it lies on cat's line
    data = {"tau": np.repeat(TAUS, n), "key": labels * n_tau, "weight": sweep.ravel(), "twin": twin * n_tau}
    log = {"type": "log", "domain": [TAU.lo, TAU.hi]}
    x = {"field": "tau", "type": "quantitative", "scale": log, "title": "temperature τ (log scale)"}
    axis = list(weight_axis(sweep).domain)  # 0-1, or 0 to the largest weight when the reader stretches
    colour = {"field": "key", "type": "nominal", "sort": labels, "legend": {"orient": "right", "title": None}}
    y = {"field": "weight", "type": "quantitative", "scale": {"domain": axis}}
    line = {"x": x, "y": y, "color": colour, "strokeDash": {"field": "twin", "type": "nominal", "legend": None}}
    rules = [(r.temperature, [], f"solid rule: the temperature on screen, τ = {r.temperature:g}")]
    if TAU.lo <= r.hard_below <= TAU.hi:
        rules.append(
            (
                r.hard_below,
                [4, 3],
                f"dashed rule: below τ = {fmt(r.hard_below)} the best keys hold at least {SHARE:.0%}",
            )
        )
    spec = {
        "title": f"weight on each key as τ changes (solid rule: τ = {r.temperature:g}; dashed: {SHARE:.0%} on the best keys)",
        "height": 240,
        "usermeta": {"group": "over temperature", "value": "weight"},
        "layer": [
            {"mark": {"type": "line", "strokeWidth": 2}, "encoding": line},
            *(
                {
                    "transform": [{"sample": 1}],
                    "mark": {"type": "rule", "color": "#444", "strokeDash": dash, "description": said},
                    "encoding": {"x": {"datum": at, "type": "quantitative"}},
                }
                for at, dash, said in rules
            ),
        ],
    }
    return spec, data


page.run(_draw, _controls, code=(core.soft_lookup, core.hard_lookup, core.dict_lookup, core.hard_temperature))
