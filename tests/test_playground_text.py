"""The Playground's sentences (ui/lessons/playground/text.py) at their edges; the page's AppTest tests read them on screen."""

import numpy as np

from ui.lessons.playground.text import check_questions, maps_caption, query_caption, twin_question, xz_caption


def test_a_query_the_mask_allows_no_key_is_said_to_attend_to_nothing():
    assert "may attend to no key" in query_caption(["a", "b"], 0, np.zeros(2), "")
    said = query_caption(["*a*", "b"], 0, np.array([0.25, 0.75]), "")
    assert "attends most to **b** (#2) with weight 0.75" in said and "of 2." in said and "\\*a\\*" in said


def test_the_twin_question_holds_at_d_k_1():
    question, why = twin_question(True, 1, 0)
    assert "√d_k = √1 = 1" in question and why.endswith("changes nothing")
    question, why = twin_question(False, 16, 2)
    assert question.startswith("Scaling is off") and "head 3" in question and why.endswith("flattens every row")


def test_one_head_or_several_and_the_pale_images():
    sat = [{"max_weight": 0.3}, {"max_weight": 0.9}]
    assert "Head 2 is the sharpest" in maps_caption("", sat, 0.125)
    assert maps_caption("", sat[:1], 0.125).startswith(" Rows are queries") and "The rows put" in maps_caption(
        "", sat[:1], 0.125
    )
    assert "look pale" in xz_caption(512, 1024, 3.0, "image", 1.5)
    assert "look pale" not in xz_caption(8, 64, 3.0, "chart", 0.5) and "50% of X's own size" in xz_caption(
        8, 64, 3.0, "chart", 0.5
    )


def test_the_check_questions_ask_about_the_maps_only_once_they_are_shown():
    sharp = ("soft", "sharp", "unscaled", {"max_weight": 0.3}, {"max_weight": 0.9}, 0.125)
    hidden = check_questions(["a", "b"], 0, 0, np.array([0.4, 0.6]), False, sharp, 2.0)
    shown = check_questions(["a", "b"], 0, 0, np.array([0.4, 0.6]), True, sharp, 2.0)
    assert len(shown) == len(hidden) + 1 and "b (#2) with weight 0.6" in shown[0][1]
    assert hidden[-1][1].endswith("larger than X itself.")
    assert hidden[0][3] == hidden[0][2].index("soft")  # the choice question's right answer is the head's level
