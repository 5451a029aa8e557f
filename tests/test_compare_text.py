"""The Compare page's sentences (ui/lessons/compare/text.py) at their edges; tests/test_page_compare.py reads them on
screen."""

from attention_core import WhatIf
from attention_core.readout import differing_settings
from ui.lessons.compare.text import check_questions, differences, live_weights_caption, setting_value


def test_the_opening_sentence_for_no_one_and_several_differences():
    a = WhatIf(scaled=True)
    assert differences(a, a) == (
        "A and B are the **same setting** right now: change A or B (the input in the sidebar, the temperature, "
        "scaling and mask above the maps) to compare."
    )
    assert differences(a, a.replace(scaled=False)) == (
        "A and B differ in one setting: **scaling by 1/√d_k** (A on, B off). Everything else is the same."
    )
    assert differences(a, a.replace(scaled=False, temperature=2.0, n_heads=2)) == (
        "A and B differ in 3 settings: **heads** (A 4, B 2), **scaling by 1/√d_k** (A on, B off) and "
        "**temperature** (A 1, B 2). Everything else is the same."
    )


def test_typed_text_is_quoted_escaped_and_cut_to_40_characters():
    assert setting_value("sentence", "a_b") == "“a\\_b”"
    assert setting_value("sentence", "x" * 41) == "“" + "x" * 37 + "\\.\\.\\.”"
    assert setting_value("sentence", "x" * 40) == "“" + "x" * 40 + "”"
    assert (setting_value("scaled", False), setting_value("temperature", 0.5)) == ("off", "0.5")


def test_the_check_questions_for_the_same_setting_and_outputs_of_different_shapes():
    same = check_questions((), ("soft", 0.25), ("soft", 0.25), None)
    assert len(same) == 2  # no output question without a B − A of one shape
    assert same[0][1] == "None: A and B are the same setting."
    assert same[1][1] == "B's mean max weight is 0.25 against A's 0.25 (+0): the same. A is soft, B is soft."
    a = WhatIf(scaled=True)
    diffs = differing_settings(a, a.replace(scaled=False, seq_len=5))
    asked = check_questions(diffs, ("soft", 0.5), ("sharp", 0.25), 1.5)
    assert asked[0][1] == "seq_len: A 8, B 5; scaling by 1/√d_k: A on, B off."
    assert asked[1][1].endswith("(-0.25): B is softer. A is soft, B is sharp.")
    assert asked[2][1] == "‖Z_B − Z_A‖ / ‖Z_A‖ = 1.5, i.e. 150% of A's size."


def test_the_live_caption_stretches_only_a_change_there_is():
    assert "B − A on −1 to 1," in live_weights_caption(0.0, True)
    assert "B − A on stretched to ±0.25," in live_weights_caption(0.25, True)
    assert "B − A on −1 to 1," in live_weights_caption(0.25, False)


def test_a_mask_only_one_side_pads_is_said_with_its_pads():
    a = WhatIf()
    assert "**mask** (A none, B causal\\+padding with 8 pads)." in differences(
        a, a.replace(mask="causal+padding", pad_count=8)
    )
    assert "**mask** (A padding with 1 pad, B none)." in differences(a.replace(mask="padding", pad_count=1), a)
    both = differences(a.replace(mask="padding"), a.replace(mask="causal+padding", pad_count=3))
    assert "**mask** (A padding, B causal\\+padding) and **pad count** (A 2, B 3)." in both
