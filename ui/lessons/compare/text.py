"""The sentences of the Compare page, computed from A's and B's settings and runs: each function is named for what
it says, so that pages/Compare.py reads as its lesson (what differs, the weights, saturation, the outputs).

Every number comes from the two runs and their saturation (attention_core), through :func:`ui.text.fmt`; typed
text is escaped (:func:`ui.text.md_escape`).
"""

from __future__ import annotations

from attention_core import WhatIf
from attention_core.readout import differing_settings
from ui.text import fmt, md_escape

LABELS = {f: f for f in ("seq_len", "d_model", "temperature", "mask", "sentence", "seed")} | {
    "n_heads": "heads",
    "scaled": "scaling by 1/√d_k",
    "pad_count": "pad count",
    "input_kind": "input",
    "pattern": "one-hot pattern",
    "positional": "positional encoding",
}  # what differs between A and B, as the opening sentence names it


def setting_value(field: str, v) -> str:
    """One side's value of ``field`` as the page says it: on / off, a short float, typed text quoted and escaped
    (cut to 40 characters)."""
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:g}"
    if field in ("sentence", "pattern"):
        return f"“{md_escape(v if len(v) <= 40 else v[:37] + '...')}”"
    return md_escape(str(v))


def differences(cfg_a: WhatIf, cfg_b: WhatIf) -> str:
    """What differs between A and B, as the page's opening sentence says it."""

    both_pad = cfg_a.padded and cfg_b.padded  # then the pad count is a difference of its own, if it differs

    def said(f, v, cfg: WhatIf) -> str:  # a mask only one side pads, with its pads (named nowhere else then)
        n = cfg.pad_count
        return setting_value(f, v) + (
            f" with {n} pad{'s' * (n != 1)}" if f == "mask" and cfg.padded and not both_pad else ""
        )

    parts = [
        f"**{LABELS[f]}** (A {said(f, a, cfg_a)}, B {said(f, b, cfg_b)})"
        for f, a, b in differing_settings(cfg_a, cfg_b)
    ]
    if not parts:
        return (
            "A and B are the **same setting** right now: change A or B (the input in the sidebar, the temperature, "
            "scaling and mask above the maps) to compare."
        )
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    count = "one setting" if len(parts) == 1 else f"{len(parts)} settings"
    return f"A and B differ in {count}: {listed}. Everything else is the same."


def sharper_prediction(cfg_a: WhatIf, cfg_b: WhatIf, ma: float, mb: float) -> tuple[str, str]:
    """(the question, its reveal): whose rows are sharper, A's or B's? ``ma`` and ``mb`` are their mean max
    weights over the heads."""
    return (
        f"{differences(cfg_a, cfg_b)} Whose rows will be sharper (a larger mean max weight over the heads)?",
        f"A's rows put {fmt(ma)} of their weight on their largest key on average, B's {fmt(mb)}.",
    )


def fewer_heads_note(heads_a: int, heads_b: int) -> str:
    """When the picked head is beyond one side's heads: that side shows its last head."""
    return (
        f"A has {heads_a} head{'s' if heads_a != 1 else ''} and B {heads_b}; the side with fewer shows its last head."
    )


def weight_diff_caption(lim: float, biggest: float) -> str:
    """Beside the B − A map: its colours (on ±``lim``) and the largest change of a weight."""
    return (
        f"Red: B puts more weight there, blue: less, on the scale of a weight (±{fmt(lim)}). Largest change of a "
        f"weight: {fmt(biggest)}."
    )


def no_weight_diff_notice(T_a: int, T_b: int) -> str:
    """When A and B have different numbers of tokens: no B − A map."""
    return f"A has {T_a} tokens and B {T_b}: no difference map for maps of different shapes."


def live_weights_caption(biggest: float, stretched: bool) -> str:
    """Under the live maps: their colour scales (B − A stretched to its largest change, or −1 to 1) and the
    largest change of a weight."""
    scale = f"stretched to ±{fmt(biggest)}" if stretched and biggest > 0 else "−1 to 1"
    return (
        f"A and B are drawn by your browser on one colour scale, B − A on {scale}, and follow A's and B's "
        f"controls above them while you drag. Largest change of a weight at this setting: {fmt(biggest)}."
    )


def saturation_caption(a: tuple[str, float, float], b: tuple[str, float, float]) -> str:
    """Under the saturation table: how sharp A and B are. ``a`` and ``b`` are (level, mean max weight, the
    uniform max weight)."""
    (la, ma, ua), (lb, mb, ub) = a, b
    return (
        f"The B − A row is each measure's change (neither direction is good or bad). A is {la} (mean max "
        f"weight {fmt(ma)}, uniform {fmt(ua)}); B is {lb} ({fmt(mb)}, uniform {fmt(ub)}). A near-one-hot row puts "
        "over 99% of its weight on one key."
    )


LIVE_OUTPUTS = (
    "your browser draws them, and each Z follows its side's temperature, scaling and mask above the maps while you "
    "move them (these sentences state the setting you let go on)"
)


def outputs_caption(
    z_lim: float, change: float, shape_a: tuple[int, int], shape_b: tuple[int, int], live: bool = False
) -> str:
    """Beside Z's B − A map: the shared colour scale (±``z_lim``), the relative change of Z and both shapes
    (T, d_model); ``live``: the browser draws the maps, Z following the live controls."""
    drawn = f"; {LIVE_OUTPUTS}" if live else ""
    return (
        f"A's Z, B's Z and their difference share one colour scale (±{fmt(z_lim)}), so a pale difference "
        f"is a small one{drawn}. The outputs differ by {fmt(100 * change)}% of A's size (relative Frobenius "
        f"norm ‖Z_B − Z_A‖ / ‖Z_A‖). A's Z is {shape_a[0]} x {shape_a[1]}, B's {shape_b[0]} x {shape_b[1]}."
    )


def outputs_live_caption(z_lim: float) -> str:
    """Under A's and B's Z drawn by the browser when their shapes differ (no B − A map): their shared scale."""
    return f"A's Z and B's Z share one colour scale (±{fmt(z_lim)}); {LIVE_OUTPUTS}."


def no_output_diff_notice(shape_a: tuple[int, int], shape_b: tuple[int, int]) -> str:
    """When A's and B's outputs differ in shape (T, d_model): no B − A map."""
    return f"A's Z is {shape_a[0]} x {shape_a[1]} and B's {shape_b[0]} x {shape_b[1]}: no difference map."


def check_questions(
    diffs: tuple[tuple[str, object, object], ...],
    a: tuple[str, float],
    b: tuple[str, float],
    output_change: float | None,
) -> list[tuple[str, str]]:
    """The page's check questions: which settings differ, whether B is sharper than A, and (when the outputs have
    one shape) how far apart they are. ``a`` and ``b`` are (level, mean max weight)."""
    (la, ma), (lb, mb) = a, b
    questions = [
        (
            "Which settings differ between A and B?",
            ("; ".join(f"{LABELS[f]}: A {setting_value(f, x)}, B {setting_value(f, y)}" for f, x, y in diffs) + ".")
            if diffs
            else "None: A and B are the same setting.",
        ),
        (
            "Is B sharper or softer than A, by the mean max weight over heads?",
            f"B's mean max weight is {fmt(mb)} against A's {fmt(ma)} ({mb - ma:+.3g}): "
            + ("B is sharper." if mb > ma + 1e-9 else "B is softer." if mb < ma - 1e-9 else "the same.")
            + f" A is {la}, B is {lb}.",
        ),
    ]
    if output_change is not None:
        questions.append(
            (
                "How far apart are the two outputs?",
                f"‖Z_B − Z_A‖ / ‖Z_A‖ = {fmt(output_change)}, i.e. {fmt(100 * output_change)}% of A's size.",
            )
        )
    return questions
