"""The sentences of the Playground, computed from the numbers on screen: each function is named for what it says,
so that pages/Playground.py reads as its lesson (controls, maps, one query, saturation, inputs and outputs).

Every number comes from the run and its saturation (attention_core), through :func:`ui.text.fmt`; typed tokens are
escaped (:func:`ui.text.md_escape`).
"""

from __future__ import annotations

import math

import numpy as np

from attention_core import saturation_metrics
from attention_core.readout import SHARPNESS_LEVELS
from ui.glossary import MEANINGS, position
from ui.text import fmt, head_name, md_escape

LIVE_MAPS_NOTE = (
    "The maps are drawn by your browser on one colour scale (its range is beside the controls) and follow the "
    "controls above them while you drag; hover a cell for its tokens and weight, click a row to pick its head and "
    "query (or Tab to a map: up and down pick the query, left and right read its keys)."
)


def twin_question(scaled: bool, d_k: int, head: int) -> tuple[str, str]:
    """(the question, why its answer holds): would head ``head`` get sharper or softer with the scaling flipped?
    Reasoned from the formula: dividing the scores by √d_k > 1 is a temperature above 1, which flattens every
    row (the same at d_k = 1)."""
    root = fmt(math.sqrt(d_k))
    if scaled:
        question = (
            f"Scaling is on: {head_name(head)}'s scores are divided by √d_k = √{d_k} = {root}. If you turned scaling "
            "off, would its rows get sharper, softer or stay the same?"
        )
    else:
        question = (
            f"Scaling is off. If you turned it on, dividing {head_name(head)}'s scores by √d_k = √{d_k} = {root}, "
            "would its rows get sharper, softer or stay the same?"
        )
    why = f"dividing by √d_k = {root}" + (" changes nothing" if d_k == 1 else " flattens every row")
    return question, why


def twin_answer(head: int, ours: float, twin: float, twin_name: str, why: str) -> str:
    """The twin question's explanation: both mean max weights, and why."""
    return (
        f"{head_name(head).capitalize()}'s mean max weight is {fmt(ours)} now and {fmt(twin)} {twin_name}: {why}, like a "
        "temperature of √d_k."
    )


def maps_caption(grid_note: str, sat: list[dict], uniform: float) -> str:
    """Under the maps: how to read them, and the sharpest head's mean max weight against uniform rows."""
    sharpest = int(np.argmax([s["max_weight"] for s in sat]))
    return (
        f"{grid_note} Rows are queries, columns keys; each row sums to 1. "
        + (f"{head_name(sharpest).capitalize()} is the sharpest: its rows" if len(sat) > 1 else "The rows")
        + f" put on average {fmt(sat[sharpest]['max_weight'])} of their weight on a single key (uniform rows would "
        f"put {fmt(uniform)})."
    )


def nearly_uniform_notice(max_weight: float, uniform: float) -> str:
    """When even the sharpest head is nearly uniform: why every map looks one colour, and what sharpens it."""
    return (
        f"Attention is nearly uniform here (max weight {fmt(max_weight)} vs uniform 1/T = {fmt(uniform)}): every map "
        "looks one colour on the 0 – 1 scale. Lower the temperature or turn scaling off to sharpen it, or switch on "
        "“stretch the colour scales” in the sidebar to see its structure."
    )


def query_caption(tokens: list[str], query: int, row: np.ndarray, note: str) -> str:
    """One query's row: the key it attends to most and how many effective tokens it spreads over (or that the
    mask allows it no key)."""
    if row.sum() == 0:
        return (
            f"Query {md_escape(tokens[query])} may attend to no key under this mask: its weights are all 0 and its "
            "output is 0."
        )
    top = int(np.argmax(row))
    spread = float(saturation_metrics(row[None]).effective_tokens[0])
    return (
        f"Query **{md_escape(tokens[query])}** attends most to **{md_escape(tokens[top])}** (#{top + 1}) with weight "
        f"{fmt(row[top])}; it spreads over about {fmt(spread)} effective tokens of {len(row)}. {note}"
    )


def saturation_caption(
    cfg, head: int, m: dict, t: dict, level: str, twin_level: str, twin_name: str, uniform: float, spread: float
) -> str:
    """Under the saturation metrics: what the deltas are, how sharp the head is and why (the logits' spread, the
    scaling and the temperature), and the twin's sharpness."""
    scale_words = f"scaling divides q·k by √d_k = {fmt(math.sqrt(cfg.d_k))}" if cfg.scaled else "scaling is off"
    temp_words = (
        f"temperature {cfg.temperature:g} divides them by {cfg.temperature:g}"
        if cfg.temperature != 1
        else "temperature 1 leaves them as they are"
    )
    r = position(m["max_weight"], uniform)
    return (
        f"Deltas (grey: neither direction is good or bad) are this setting minus its {twin_name} twin, the same "
        f"setting with the scaling flipped. {head_name(head).capitalize()} is **{level}** here: mean max weight {fmt(m['max_weight'])} "
        f"against {fmt(uniform)} for uniform rows (r = {fmt(r)}), so {MEANINGS[level]}. The logits it sees (the scores "
        f"divided by s·τ) spread with a standard deviation of {fmt(spread)} ({scale_words}; {temp_words}); the "
        f"{twin_name} twin is {twin_level} (mean max weight {fmt(t['max_weight'])})."
    )


def xz_caption(T: int, d_model: int, lim: float, kind: str, change: float) -> str:
    """Under X and Z: their shared colour scale, what Z is, and how far Z is from X (‖Z − X‖ / ‖X‖)."""
    pale = {
        "image": "; drawn as images, each pixel averages a block of values, which pulls random values towards 0 and "
        "makes large maps look pale",
        "live": "; your browser draws them, and Z follows the temperature, the scaling and the mask above the maps "
        "while you move them (this sentence states the setting you let go on)",
    }.get(kind, "")
    return (
        f"X and Z ({T} x {d_model} each) share one colour scale, −{fmt(lim)} (blue) to {fmt(lim)} (red), so their "
        f"colours compare directly{pale}. Each row of Z is a mix of the value rows, projected by W_o (the output "
        f"projection). The change from X to Z is {fmt(100 * change)}% of X's own size (‖Z − X‖ / ‖X‖: 0% would mean "
        "Z = X; above 100% the change is larger than X itself)."
    )


def check_questions(
    tokens: list[str],
    query: int,
    head: int,
    row: np.ndarray,
    revealed: bool,
    sharp: tuple[str, str, str, dict, dict, float],
    change: float,
) -> list[tuple]:
    """The page's check questions: the picked query's strongest key (once the maps are shown), how sharp the head
    is against its twin (a choice: in a class the picks count), and how far Z is from X.

    Args:
        sharp: (level, twin level, twin name, the head's saturation, the twin's, the uniform max weight).
    """
    level, twin_level, twin_name, m, t, uniform = sharp
    questions = []
    if revealed:
        top = int(np.argmax(row))
        questions.append(
            (
                f"Which key does query {md_escape(tokens[query])} (#{query + 1}) attend to most in {head_name(head)}, "
                "and with what weight?",
                f"{md_escape(tokens[top])} (#{top + 1}) with weight {fmt(float(row.max()))}."
                if row.sum() > 0
                else "None: the mask allows it no key, so all its weights are 0.",
            )
        )
    questions.append(
        (
            f"How sharp is {head_name(head)} at this setting, and what would the {twin_name} twin do?",
            f"It is {level} (mean max weight {fmt(m['max_weight'])}, uniform {fmt(uniform)}); the {twin_name} twin is "
            f"{twin_level} (mean max weight {fmt(t['max_weight'])}).",
            SHARPNESS_LEVELS,
            SHARPNESS_LEVELS.index(level),
        )
    )
    questions.append(
        (
            "How far is the output Z from the input X?",
            f"The change from X to Z is {fmt(100 * change)}% of X's size (‖Z − X‖ / ‖X‖ = {fmt(change)}): "
            + ("larger than X itself." if change > 1 else "smaller than X." if change < 1 else "as large as X."),
        )
    )
    return questions
