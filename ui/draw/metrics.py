"""The saturation measures on screen: rows of st.metric (Playground and the pages with one setting), a table of
two settings and their difference (Compare), their labels and formats."""

from __future__ import annotations

import dataclasses

import streamlit as st

from ui.glossary import TERMS
from ui.text import fmt


@dataclasses.dataclass(frozen=True)
class Metric:
    """One st.metric of a :func:`metric_row`."""

    label: str  # shown above the value
    value: str  # the value, formatted
    delta: str | None = None  # the change against a reference, signed ("+0.12", "-3 pts"); grey: neither good nor bad
    help: str | None = None  # the tooltip of the label


SATURATION_LABELS = {  # the names of saturation_metrics' summary keys on screen (metrics and table headers)
    "entropy": "entropy (nats)",
    "normalized_entropy": "entropy / log T",
    "max_weight": "mean max weight",
    "effective_tokens": "effective tokens",
    "near_one_hot_share": "near-one-hot rows",
    "jacobian_norm": "‖softmax Jacobian‖",
}


def saturation_metric(key: str, value: float, against: float | None = None, *, prefix: str = "", help=None) -> Metric:
    """The saturation measure ``key`` (a key of ``SATURATION_LABELS``) as a Metric, with its change against
    ``against`` when given: the near-one-hot share in percent and its change in points, the others to 3 digits."""
    if key not in SATURATION_LABELS:
        raise ValueError(f"key={key!r} is not a saturation measure; allowed: {', '.join(SATURATION_LABELS)}")
    delta = None if against is None else saturation_change(key, value, against)
    help = TERMS[key] + (f" Here: {help}." if help else "")  # every metric says what it measures
    return Metric(prefix + SATURATION_LABELS[key], saturation_text(key, value), delta, help)


def saturation_change(key: str, value: float, against: float) -> str:
    """The change of the saturation measure ``key`` from ``against`` to ``value``, signed: the near-one-hot share in
    percentage points, the others to 3 digits (a metric's delta and a table's difference row)."""
    return f"{100 * (value - against):+.0f} pts" if key == "near_one_hot_share" else f"{value - against:+.3g}"


def comparison_table(keys, a: dict, b: dict, names: tuple[str, str] = ("A", "B")) -> str:
    """Two settings' saturation measures ``keys`` (``a`` and ``b``: values by key) and their difference, as a
    Markdown table: a row each and the difference row under them, one column a measure. One element where two
    rows of st.metric sent ten, redrawn on every body rerun; the measures' definitions are the page's words. The
    difference's name does not break ("B − A" took two lines in its cell on a phone)."""
    first, second = names
    head = "| | " + " | ".join(SATURATION_LABELS[k] for k in keys) + " |"
    rule = "|---|" + "---:|" * len(keys)
    rows = [
        f"| **{first}** | " + " | ".join(saturation_text(k, a[k]) for k in keys) + " |",
        f"| **{second}** | " + " | ".join(saturation_text(k, b[k]) for k in keys) + " |",
        f"| {second}\u00a0−\u00a0{first} | " + " | ".join(saturation_change(k, b[k], a[k]) for k in keys) + " |",
    ]
    return "\n".join([head, rule, *rows])


def saturation_text(key: str, value: float) -> str:
    """The saturation measure ``key`` as the metrics, the tables and the sentences write it: the near-one-hot share
    in percent, the others with :func:`ui.text.fmt`."""
    return f"{value:.0%}" if key == "near_one_hot_share" else fmt(value)


def saturation_columns() -> dict:
    """Column tooltips for a table headed with SATURATION_LABELS (st.dataframe's column_config)."""
    return {label: st.column_config.Column(help=TERMS[key]) for key, label in SATURATION_LABELS.items()}


def metric_row(metrics, container=None) -> None:
    """Draw ``metrics`` side by side, equal widths; an item that is a tuple of Metric stacks them in its column
    (drawn as one row per level, which lines up the same way; every stack must be equally tall). Deltas are grey (delta_color="off"): a change of
    these measures is neither good nor bad. Each row is one horizontal container: st.columns sends a block per
    column, and these rows are redrawn on every body rerun."""
    if not metrics:
        raise ValueError("metric_row needs at least one Metric")
    box = container or st
    levels = [(item,) if isinstance(item, Metric) else tuple(item) for item in metrics]
    if len({len(stack) for stack in levels}) != 1:
        raise ValueError(f"metric_row stacks must be equally tall to line up; got {[len(x) for x in levels]}")
    for depth in range(len(levels[0])):
        row = box.container(horizontal=True, gap="small")
        for stack in levels:
            m = stack[depth]
            row.metric(m.label, m.value, delta=m.delta, delta_color="off", help=m.help, width="stretch")
