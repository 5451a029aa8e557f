"""The sentences of Step by step, computed from the walkthrough on screen (attention_core/walkthrough.py): each
function is named for what it says, so that pages/Step_by_step.py reads as its lesson (the nine steps from E to Z,
the key booster, the check questions).

Every number comes from the walkthrough, through :func:`ui.text.fmt`, as the tables and maps write it. The
tokens are the symbols A and B with their positions (A1, B3, ...); the typed text appears only in
:func:`bad_tokens`, quoted with repr().
"""

from __future__ import annotations

import math

import numpy as np

from attention_core import WhatIf
from attention_core.walkthrough import VOCAB, Walkthrough
from ui.text import fmt, md_escape

BOOSTER_WHY = (
    "Multiplying W_k by 10 multiplies every key, and so every score q·k, by 10 (S = Q Kᵀ is linear in W_k). The "
    "softmax turns score *differences* into weight ratios, so ten times the gap makes the favourite key win far "
    "more clearly"
)


def bad_tokens(tokens_text: str) -> str:
    """The tokens box's error: what tokens are allowed, what was typed, and the tokens used instead."""
    return f"Tokens must be 1 to 16 symbols, each A or B, separated by spaces; got {md_escape(repr(tokens_text))}. Using A A B A."


def looks_for(Q: np.ndarray) -> str:
    """'A' or 'B' when every query is the same vector pointing at one symbol's column, else ''."""
    if not np.allclose(Q, Q[0]) or np.allclose(Q[0], 0):
        return ""
    j = int(np.argmax(np.abs(Q[0])))
    return VOCAB[j] if Q[0, j] > 0 and abs(Q[0, 1 - j]) < 1e-12 else ""


def _booster_pick(runs: tuple[Walkthrough, Walkthrough]) -> tuple[str, str, float, float]:
    """(query 1's label, the key it favours most with W_k = 10·I, its weight there with W_k = 10·I, with W_k = I)
    from ``runs``, the walkthroughs with W_k = I and W_k = 10·I."""
    plain, boosted = runs
    q0 = 0
    j_star = int(np.argmax(boosted.A[q0]))  # the key query 1 favours most with the booster
    w_boost, w_plain = float(boosted.A[q0, j_star]), float(plain.A[q0, j_star])
    return boosted.labels[q0], boosted.labels[j_star], w_boost, w_plain


def _top_score(wt: Walkthrough) -> tuple[np.intp, np.intp]:
    """(query, key): where the largest raw score is."""
    return np.unravel_index(np.argmax(wt.S), wt.S.shape)


def embeddings_sentence(wt: Walkthrough) -> str:
    """Step 1: how many tokens (one row each) and which of them are B."""
    T = len(wt.symbols)
    b_tokens = [lab for lab, s in zip(wt.labels, wt.symbols) if s == "B"]
    return f"T = {T} {'token' if T == 1 else 'tokens'}, one row each (T counts the tokens). " + (
        f"The B token is {b_tokens[0]}."
        if len(b_tokens) == 1
        else f"The B tokens are {', '.join(b_tokens)}."
        if b_tokens
        else "There is no B token."
    )


def queries_sentence(wt: Walkthrough) -> str:
    """Step 2: the first token's query, and the symbol every token looks for when they all ask the same."""
    target = looks_for(wt.Q)
    return (
        f"Each row is the question its token asks. Query of {wt.labels[0]}: [{fmt(wt.Q[0, 0])}, {fmt(wt.Q[0, 1])}]"
        + (f" — every token asks the same question, *looking for {target}*." if target else ".")
    )


def keys_sentence(wt: Walkthrough) -> str:
    """Step 3: the first token's key."""
    return (
        f"Each row is how its token advertises itself. Key of {wt.labels[0]}: [{fmt(wt.K[0, 0])}, {fmt(wt.K[0, 1])}]."
    )


def values_sentence(W_v: np.ndarray) -> str:
    """Step 4: what the values are (the embeddings themselves when W_v = I)."""
    return "What each token hands over when attended to" + (
        " (here the embeddings themselves: W_v = I)." if np.allclose(W_v, np.eye(2)) else "."
    )


def scores_sentence(wt: Walkthrough) -> str:
    """Step 5: the largest score and its query and key."""
    best = _top_score(wt)
    return (
        f"Row i scores query i against every key. The largest score is {fmt(wt.S[best])} ({wt.labels[best[0]]} "
        f"against {wt.labels[best[1]]})."
    )


def booster_sentence(W_k: np.ndarray, boost: float, runs: tuple[Walkthrough, Walkthrough], revealed: bool) -> str:
    """Why W_k = 10·I sharpens the softmax, query 1's weights on its favourite key with W_k = 10·I and with W_k = I
    (``runs``: the walkthroughs with W_k = I and 10·I; once the prediction is revealed, as they would answer it), and
    which W_k is on now."""
    query, key, w_boost, w_plain = _booster_pick(runs)
    now = (
        "W_k = 10·I (the booster)"
        if np.array_equal(W_k, boost * np.eye(2))
        else "W_k = I"
        if np.array_equal(W_k, np.eye(2))
        else "neither: your own W_k"
    )
    if revealed:
        return (
            f"{BOOSTER_WHY}: query {query} puts **{fmt(w_boost)}** of its weight on {key} with W_k = 10·I "
            f"and **{fmt(w_plain)}** with W_k = I. Your W_k now: {now}."
        )
    return f"{BOOSTER_WHY}; the weights it gives appear with the others after your prediction. Your W_k now: {now}."


def scaled_scores_sentence(wt: Walkthrough, cfg: WhatIf) -> str:
    """Step 6: what the largest score becomes, scaled by √d_k or not, and whether the temperature divides it."""
    top = fmt(wt.S_scaled[_top_score(wt)])
    return (
        f"Dividing by √d_k keeps the scores' spread independent of d_k. The top score becomes {top}"
        if cfg.scaled
        else f"Scaling is off in the sidebar, so the top score stays {top}"
    ) + (f", then the temperature {cfg.temperature:g} divides it again." if cfg.temperature != 1 else ".")


def weights_sentence(wt: Walkthrough) -> str:
    """Step 7: query 1's largest weight, and the queries' mean weight on the B tokens (or that there is none)."""
    b_rows = wt.rows_of("B")  # (n_B,) the B tokens' positions
    on_b = wt.A[:, b_rows].sum(1)  # (T,) each query's weight on B tokens
    top0 = int(np.argmax(wt.A[0]))
    return f"Every row sums to 1. Query {wt.labels[0]} puts {fmt(wt.A[0, top0])} of its weight on {wt.labels[top0]}" + (
        f"; on average the queries put {fmt(float(on_b.mean()))} of their weight on B tokens."
        if b_rows.size
        else "; there is no B token to attend to."
    )


def score_scale_caption(lim: float, boost: float) -> str:
    """Under the maps: the scores' fixed colour scale (the booster's, or wider for larger scores) and the weights'."""
    return (
        f"The scores' colours are fixed at −{lim:g} to {lim:g} ("
        + ("the booster's range" if lim == boost else "wider than the booster's ±10 because your scores are")
        + "), so switching W_k between I and 10·I shows as a real change of colour; the weights use 0 to 1."
    )


def outputs_sentence(wt: Walkthrough) -> str:
    """Step 8: the first token's output."""
    return (
        f"Each output row is the weighted mix of the value rows. {wt.labels[0]}'s output is [{fmt(wt.Z[0, 0])}, "
        f"{fmt(wt.Z[0, 1])}]."
    )


def moved_towards_b(wt: Walkthrough) -> str:
    """Step 9: how far the A rows' second coordinate moved from E to Z (a B row already is B), or that there is no
    A token."""
    moved = wt.shift("A", 1)
    n_a = len(wt.rows_of("A"))
    if moved is None:
        return "There is no A token, so there are no A rows to move towards B."
    rows = f"the {n_a} A rows" if n_a > 1 else "the A row"
    return (
        f"Averaged over {rows} only (a B row already is B), the second coordinate moved by {fmt(moved)} towards B"
        + (
            ": the A tokens now carry B's content, which is what *looking for B* asked for."
            if moved > 0.5 and looks_for(wt.Q) == "B"
            else "."
        )
    )


def check_questions(wt: Walkthrough, runs: tuple[Walkthrough, Walkthrough], cfg: WhatIf) -> list[tuple[str, str]]:
    """The page's check questions: query 1's strongest key, its weights on the booster's key with W_k = I and 10·I
    (``runs``, as for :func:`booster_sentence`), and what d_k makes of the largest score."""
    query, key, w_boost, w_plain = _booster_pick(runs)
    best = _top_score(wt)
    top0 = int(np.argmax(wt.A[0]))
    return [
        (
            f"Which key does query {wt.labels[0]} attend to most, and with what weight?",
            f"{wt.labels[top0]}, with weight {fmt(wt.A[0, top0])} (row {wt.labels[0]} of α).",
        ),
        (
            f"How much weight does query {query} put on {key} with W_k = I, and with the booster W_k = 10·I?",
            f"{fmt(w_plain)} with W_k = I and {fmt(w_boost)} with W_k = 10·I: ten times the scores, a much sharper "
            "softmax.",
        ),
        (
            f"What is d_k here, and what does the largest score {fmt(wt.S[best])} become before the softmax?",
            f"d_k = {wt.d_k}, so √d_k = {fmt(math.sqrt(wt.d_k))}; "
            + (
                f"scaled, the score becomes {fmt(wt.S_scaled[best])}"
                if cfg.scaled
                else f"scaling is off, so it stays {fmt(wt.S[best])}"
            )
            + (f", and the softmax then divides it by τ = {cfg.temperature:g}." if cfg.temperature != 1 else "."),
        ),
    ]
