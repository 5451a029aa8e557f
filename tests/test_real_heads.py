"""attention_core.real_heads on attention built by hand: each role is found where it was put."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_core import saturation_metrics
from attention_core.real_heads import head_roles, sharpness, strongest

TOKENS = ["[CLS]", "the", "animal", "was", "tired", "because", "it", "slept", "[SEP]"]
SPECIAL = np.array([t.startswith("[") for t in TOKENS])


def _heads() -> np.ndarray:
    """(1, 4, T, T): a previous-token head, a next-token head, a [CLS]-parking head, an it -> animal head."""
    T = len(TOKENS)
    prev, nxt, park = np.zeros((T, T)), np.zeros((T, T)), np.zeros((T, T))
    for i in range(T):
        prev[i, max(i - 1, 0)] = 1
        nxt[i, min(i + 1, T - 1)] = 1
        park[i, 0] = 1
    coref = np.full((T, T), 1 / T)
    coref[6] = 0.05
    coref[6, 2] = 1 - 0.05 * (T - 1)
    return np.stack([prev, nxt, park, coref])[None]


def test_each_role_is_found_in_its_head():
    roles = head_roles(_heads(), TOKENS, SPECIAL)
    assert strongest(roles.previous)[:2] == (0, 0) and roles.previous[0, 0] == 1
    assert strongest(roles.next)[:2] == (0, 1) and roles.next[0, 1] == 1
    assert strongest(roles.first)[:2] == (0, 2) and roles.first[0, 2] == 1 and roles.special[0, 2] == 1
    assert (roles.pronoun, roles.referent) == (6, 2)
    assert strongest(roles.to_referent)[:2] == (0, 3) and roles.to_referent[0, 3] == pytest.approx(0.6)
    assert roles.referent_is_top.tolist() == [[False, False, False, True]]
    assert roles.sharp.near_one_hot[0, :3].tolist() == [1, 1, 1]


def test_no_pronoun_and_one_word():
    roles = head_roles(_heads()[..., :3, :3], TOKENS[:3], SPECIAL[:3])
    assert roles.to_referent is None and roles.pronoun is None
    roles = head_roles(np.ones((1, 1, 3, 3)) / 3, ["[CLS]", "cats", "[SEP]"], np.array([True, False, True]))
    assert np.isnan(roles.previous).all() and np.isnan(strongest(roles.previous)[2])
    with pytest.raises(ValueError, match="no word"):
        head_roles(np.ones((1, 1, 2, 2)) / 2, ["[CLS]", "[SEP]"], np.array([True, True]))
    with pytest.raises(ValueError, match="must be"):
        head_roles(np.ones((1, 1, 2, 2)) / 2, ["a", "b", "c"], np.zeros(3, bool))


@given(st.integers(1, 12), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_sharpness_agrees_with_saturation_metrics(T, H, seed):
    logits = np.random.default_rng(seed).normal(scale=3, size=(H, T, T))
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    s, m = sharpness(w), saturation_metrics(w)
    np.testing.assert_allclose(s.max_weight, m.max_weight.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(s.normalized_entropy, m.normalized_entropy.mean(-1), atol=1e-12)
    np.testing.assert_allclose(s.effective_tokens, m.effective_tokens.mean(-1), rtol=1e-9)


def test_every_heads_favourite_word_from_any_word_and_the_heads_that_agree():
    from attention_core.real_heads import agreement, first_pronoun, word_focus

    assert first_pronoun(TOKENS, SPECIAL) == 6 and first_pronoun(["[CLS]", "cats", "[SEP]"], SPECIAL[:3]) is None
    focus = word_focus(_heads(), SPECIAL, 6)  # from "it": previous word, next word, [CLS] (excepted), "animal"
    assert focus.top.tolist() == [[5, 7, 1, 2]]  # the parking head's zeros: its first word, itself excepted
    assert focus.weight[0, 3] == pytest.approx(0.6) and focus.weight[0, 2] == 0
    assert agreement(focus) == [(1, [(0, 2)]), (2, [(0, 3)]), (5, [(0, 0)]), (7, [(0, 1)])]
    same = word_focus(np.stack([_heads()[0, 3]] * 3)[None], SPECIAL, 6)
    assert agreement(same) == [(2, [(0, 0), (0, 1), (0, 2)])]  # three heads agree on "animal"
    alone = word_focus(np.ones((1, 2, 3, 3)) / 3, np.array([True, False, True]), 1)  # no other word
    assert (alone.top == -1).all() and np.isnan(alone.weight).all() and agreement(alone) == []
    with pytest.raises(ValueError, match="word token"):
        word_focus(_heads(), SPECIAL, 0)  # [CLS] is not a word
