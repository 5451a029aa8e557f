"""The Masks page's sentences (ui/lessons/masks/text.py) at their edges; the page's AppTest tests read them on screen."""

import numpy as np

from attention_core.mask_demo import MaskedRun, mask_lab
from ui.lessons.masks.text import (
    check_questions,
    fully_masked_row,
    mask_sentence,
    padded_keys_caption,
    padding_prediction,
    plural,
    token_names,
)

TOKENS = ["*a*", "b", "c"]


def _lab(T: int, pad: int):
    q, k, v = np.random.default_rng(0).standard_normal((3, T, 2))
    return mask_lab(q, k, v, pad_count=pad)


def test_plurals_and_long_lists_of_names():
    assert (plural(1, "key"), plural(0, "key"), plural(2, "real key")) == ("1 key", "0 keys", "2 real keys")
    assert token_names(list("abcdefgh"), np.arange(8)) == "a, b, c, d, e, f and 2 more"
    assert token_names(TOKENS, np.arange(2)) == "\\*a\\*, b"  # typed text is escaped
    question, reveal = padding_prediction("<b>", 1, 0.0)
    assert question.startswith("The padding mask treats the last 1 key as padding.") and "**\\<b\\>**" in question
    assert reveal.endswith("(here the largest weight on a padded key is 0).")


def test_the_mask_sentence_for_one_token_no_padding_and_every_key_padded():
    one = _lab(1, 0)
    assert mask_sentence(one.run("causal"), one, ["x"]) == (
        "No cell is blocked (the only query sees its own key), so these are the weights of plain attention; "
        "every row sums to 1."
    )
    assert mask_sentence(one.run("padding"), one, ["x"]).startswith("No cell is blocked (with a pad count of 0)")
    full = _lab(3, 3)
    assert mask_sentence(full.run("padding"), full, TOKENS) == (
        "9 of 9 cells are blocked, and each of them gets weight exactly 0. No query has an allowed key, so every "
        "row's weights and outputs are 0 (largest |output| 0), not NaN."
    )


def test_the_mask_sentence_names_the_rows_with_no_allowed_key_and_a_row_sum_off_by_more_than_1e_5():
    run = MaskedRun(
        "causal", np.array([[False, False], [True, False]]), np.array([[0.0, 0.0], [0.9, 0.0]]), np.zeros((2, 1))
    )
    assert mask_sentence(run, _lab(2, 0), TOKENS) == (
        "3 of 4 cells are blocked, and each of them gets weight exactly 0. 1 row (\\*a\\*) has no allowed key: its "
        "weights and outputs are 0. Every row with an allowed key sums to 1 (up to 1.0e-01)."
    )


def test_the_padded_keys_caption_for_none_one_and_every_key_padded():
    assert padded_keys_caption(_lab(3, 0), TOKENS, 1).startswith("No key is padded (pad count 0)")
    assert padded_keys_caption(_lab(3, 1), TOKENS, 1) == (
        "The padded key (the last one: c) has e^−∞ = 0 in the numerator, so its weight is 0 whatever the score; "
        "the 2 real keys share the whole weight: 1."
    )
    assert padded_keys_caption(_lab(3, 2), TOKENS, 2).startswith("The padded keys (the last 2: b, c) have e^−∞")
    assert padded_keys_caption(_lab(3, 3), TOKENS, 1).startswith("Every key is padded")


def test_the_fully_masked_row_and_the_check_questions_at_one_token_and_every_key_padded():
    one = _lab(1, 0)
    said = fully_masked_row(one, "x")
    assert "returns **1 NaN** weight, which" in said and said.endswith("with 0 NaN anywhere.")
    assert fully_masked_row(_lab(3, 0), "*a*").endswith("; the other rows are the causal weights, unchanged.")
    assert (
        check_questions(one, ["x"], 0)[1][1] == "None is padded (pad count 0): all of it, 1, stays on the 1 real key."
    )
    full = check_questions(_lab(3, 3), TOKENS, 1)
    assert full[0] == (
        "Under the causal mask with T = 3, how many of the 9 cells are blocked, and what weight do they get?",
        "3 = T(T − 1)/2 cells (query i may see keys 1 .. i only); each gets weight exactly 0.",
    )
    assert full[1] == (
        "With 3 padded keys, how much of query b's weight lands on the padded keys, and how much on the real ones?",
        "0 on padded keys and 0 on the 0 real keys: every key is padded, so the whole row is 0.",
    )
    assert (
        full[2][1]
        == "The textbook softmax returns 3 NaN; attention_core returns 3 weights of 0 (sum 0) and a zero output."
    )
