"""Step by step's sentences (ui/lessons/step_by_step/text.py) at their edges; tests/test_page_step_by_step.py reads them on screen."""

import numpy as np

from attention_core import WhatIf, class_notes_weights
from attention_core.walkthrough import walkthrough
from ui.lessons.step_by_step.text import (
    bad_tokens,
    booster_sentence,
    check_questions,
    embeddings_sentence,
    moved_towards_b,
    queries_sentence,
    scaled_scores_sentence,
    score_scale_caption,
    weights_sentence,
)

W_Q, W_K, W_V = class_notes_weights()


def runs(symbols):
    """The walkthroughs with W_k = I and W_k = 10 I (the booster's comparison)."""
    return walkthrough(symbols, W_Q, np.eye(2), W_V), walkthrough(symbols, W_Q, 10 * np.eye(2), W_V)


def test_one_token_many_b_tokens_or_none():
    assert (
        embeddings_sentence(walkthrough(["B"], W_Q, W_K, W_V))
        == "T = 1 token, one row each (T counts the tokens). The B token is B1."
    )
    assert embeddings_sentence(walkthrough("B A B".split(), W_Q, W_K, W_V)) == (
        "T = 3 tokens, one row each (T counts the tokens). The B tokens are B1, B3."
    )
    only_a = walkthrough(["A"], W_Q, W_K, W_V)
    assert embeddings_sentence(only_a) == "T = 1 token, one row each (T counts the tokens). There is no B token."
    assert weights_sentence(only_a) == (
        "Every row sums to 1. Query A1 puts 1 of its weight on A1; there is no B token to attend to."
    )


def test_queries_look_for_a_symbol_only_when_they_all_point_at_it():
    assert queries_sentence(walkthrough("A B".split(), W_Q, W_K, W_V)) == (
        "Each row is the question its token asks. Query of A1: [0, 1] — every token asks the same question, "
        "*looking for B*."
    )
    nothing = walkthrough("A B".split(), np.zeros((2, 2)), W_K, W_V)
    assert queries_sentence(nothing) == "Each row is the question its token asks. Query of A1: [0, 0]."
    against = walkthrough("A B".split(), -W_Q, W_K, W_V)  # every query points away from B
    assert queries_sentence(against) == "Each row is the question its token asks. Query of A1: [0, -1]."


def test_the_booster_keeps_its_weights_back_until_the_reveal():
    shown = booster_sentence(W_K, 10.0, runs("A A B A".split()), True)
    assert shown.endswith(
        "far more clearly: query A1 puts **0.997** of its weight on B3 with W_k = 10·I and **0.403** with W_k = I. "
        "Your W_k now: W_k = 10·I (the booster)."
    )
    hidden = booster_sentence(2 * np.eye(2), 10.0, runs("A A B A".split()), False)
    assert hidden.endswith(
        "far more clearly; the weights it gives appear with the others after your prediction. Your W_k now: "
        "neither: your own W_k."
    )
    assert "0.997" not in hidden
    assert booster_sentence(np.eye(2), 10.0, runs(["A"]), False).endswith("Your W_k now: W_k = I.")


def test_scaling_off_and_a_temperature():
    cfg = WhatIf(scaled=False, temperature=10.0)
    wt = walkthrough("A A B A".split(), W_Q, W_K, W_V, scaled=False, temperature=10.0)
    assert scaled_scores_sentence(wt, cfg) == (
        "Scaling is off in the sidebar, so the top score stays 10, then the temperature 10 divides it again."
    )
    assert check_questions(wt, runs("A A B A".split()), cfg)[2] == (
        "What is d_k here, and what does the largest score 10 become before the softmax?",
        "d_k = 2, so √d_k = 1.41; scaling is off, so it stays 10, and the softmax then divides it by τ = 10.",
    )


def test_the_default_check_questions():
    wt = walkthrough("A A B A".split(), W_Q, W_K, W_V)
    assert check_questions(wt, runs("A A B A".split()), WhatIf()) == [
        (
            "Which key does query A1 attend to most, and with what weight?",
            "B3, with weight 0.997 (row A1 of α).",
        ),
        (
            "How much weight does query A1 put on B3 with W_k = I, and with the booster W_k = 10·I?",
            "0.403 with W_k = I and 0.997 with W_k = 10·I: ten times the scores, a much sharper softmax.",
        ),
        (
            "What is d_k here, and what does the largest score 10 become before the softmax?",
            "d_k = 2, so √d_k = 1.41; scaled, the score becomes 7.07.",
        ),
    ]


def test_step_9_over_the_a_rows_or_none():
    assert moved_towards_b(walkthrough(["B"], W_Q, W_K, W_V)) == (
        "There is no A token, so there are no A rows to move towards B."
    )
    assert moved_towards_b(walkthrough("B A".split(), W_Q, W_K, W_V)) == (
        "Averaged over the A row only (a B row already is B), the second coordinate moved by 0.999 towards B: the "
        "A tokens now carry B's content, which is what *looking for B* asked for."
    )
    plain = walkthrough("A A B A".split(), W_Q, np.eye(2), W_V)  # a soft lookup: B3 takes less than half
    assert moved_towards_b(plain) == (
        "Averaged over the 3 A rows only (a B row already is B), the second coordinate moved by 0.403 towards B."
    )


def test_the_score_scale_and_the_typed_tokens():
    assert score_scale_caption(10.0, 10.0).startswith(
        "The scores' colours are fixed at −10 to 10 (the booster's range)"
    )
    assert score_scale_caption(25.0, 10.0).startswith(
        "The scores' colours are fixed at −25 to 25 (wider than the booster's ±10 because your scores are), "
    )
    assert bad_tokens("A <b>C</b>") == (  # typed text is shown as text: st.error renders Markdown
        "Tokens must be 1 to 16 symbols, each A or B, separated by spaces; got 'A \\<b\\>C\\</b\\>'. Using A A B A."
    )
    assert "got '\\*\\*x\\*\\* \\$y\\$'" in bad_tokens("**x** $y$")
