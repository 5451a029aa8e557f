"""Attention as a soft dictionary lookup (attention_core/lookup.py): properties of the soft lookup, its limit as
the temperature falls (the hard lookup), the Python dict it is compared with, and parity with PyTorch."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core.lookup import (
    best_keys,
    dict_lookup,
    hard_lookup,
    hard_temperature,
    lookup_scores,
    soft_lookup,
    weights_over_temperature,
)

coord = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def dictionaries(draw, d_v_max: int = 3):
    """(query (d_k,), keys (N, d_k), values (N, d_v)) with 1..6 keys of width 1..4."""
    n, d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, d_v_max))
    q = draw(arrays(np.float64, (d_k,), elements=coord))
    k = draw(arrays(np.float64, (n, d_k), elements=coord))
    v = draw(arrays(np.float64, (n, d_v), elements=st.floats(-100, 100)))
    return q, k, v


taus = st.floats(0.05, 20)


@given(dictionaries(), taus)
def test_the_answer_is_a_mix_of_every_value_with_weights_summing_to_one(qkv, tau):
    q, k, v = qkv
    answer, w = soft_lookup(q, k, v, tau)
    assert w.shape == (k.shape[0],) and answer.shape == (v.shape[1],)
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(answer, w @ v, rtol=1e-12, atol=1e-9)
    assert np.all(answer >= v.min(axis=0) - 1e-9) and np.all(answer <= v.max(axis=0) + 1e-9)  # a convex mix


@given(dictionaries(), taus)
def test_the_weights_are_the_softmax_of_the_scores_over_the_temperature(qkv, tau):
    q, k, v = qkv
    s = lookup_scores(q, k)
    np.testing.assert_allclose(s, k @ q / math.sqrt(q.shape[0]), rtol=1e-12, atol=1e-12)
    e = np.exp((s - s.max()) / tau)
    np.testing.assert_allclose(soft_lookup(q, k, v, tau)[1], e / e.sum(), rtol=1e-9, atol=1e-12)


@given(dictionaries(), taus, st.floats(0.1, 10))
def test_scaling_the_query_is_the_same_as_dividing_the_temperature(qkv, tau, a):
    q, k, v = qkv
    np.testing.assert_allclose(soft_lookup(a * q, k, v, tau * a)[1], soft_lookup(q, k, v, tau)[1], atol=1e-9)


@given(dictionaries(), taus, st.randoms(use_true_random=False))
def test_the_order_of_the_entries_does_not_change_the_answer(qkv, tau, rng):
    q, k, v = qkv
    perm = np.array(rng.sample(range(k.shape[0]), k.shape[0]))
    answer, w = soft_lookup(q, k, v, tau)
    answer_p, w_p = soft_lookup(q, k[perm], v[perm], tau)
    np.testing.assert_allclose(w_p, w[perm], atol=1e-12)
    np.testing.assert_allclose(answer_p, answer, rtol=1e-9, atol=1e-9)


@given(dictionaries())
def test_one_product_gives_the_weights_at_every_temperature(qkv):
    q, k, v = qkv
    grid = np.geomspace(0.1, 10, 7)
    sweep = weights_over_temperature(q, k, grid)
    assert sweep.shape == (7, k.shape[0])
    for row, tau in zip(sweep, grid):
        np.testing.assert_allclose(row, soft_lookup(q, k, v, tau)[1], atol=1e-12)


@given(dictionaries(), st.floats(0.5, 0.999))
def test_below_the_hard_temperature_the_best_keys_hold_the_share(qkv, share):
    """The threshold is where the best keys' weight crosses ``share``: at or below it they hold it, above not."""
    q, k, v = qkv
    top = best_keys(q, k)
    tau = hard_temperature(q, k, share)
    if top.mean() >= share:
        assert tau == math.inf
        return
    held = weights_over_temperature(q, k, [tau / 1.001, tau, tau * 1.001])[:, top].sum(axis=1)  # (3,)
    assert held[0] >= share and held[1] >= share - 1e-9 and held[2] < share  # at tau: to rounding


@given(dictionaries())
def test_the_soft_lookup_becomes_the_hard_lookup_as_the_temperature_falls(qkv):
    q, k, v = qkv
    hard, w_hard = hard_lookup(q, k, v)
    tau = hard_temperature(q, k, 1 - 1e-9)
    assume(math.isfinite(tau))
    answer, w = soft_lookup(q, k, v, tau)
    top = w_hard > 0
    assert w[top].sum() >= 1 - 2e-9  # to rounding of logits up to |s|/τ
    if np.ptp(lookup_scores(q, k)[top]) == 0:  # exact ties share the weight evenly, as the limit does
        np.testing.assert_allclose(w, w_hard, atol=2e-9)
        np.testing.assert_allclose(answer, hard, atol=1e-9 * (1 + np.abs(v).max()) * k.shape[0])


@given(dictionaries(), st.floats(1e6, 1e8))
def test_a_very_high_temperature_averages_every_value(qkv, tau):
    q, k, v = qkv
    answer, w = soft_lookup(q, k, v, tau)
    np.testing.assert_allclose(w, 1 / k.shape[0], atol=1e-4)


@given(st.integers(2, 8), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_every_value_is_reachable_by_querying_its_own_key(n, d_k, seed):
    """Keys of equal length in different directions: the key equal to the query scores best (Cauchy–Schwarz), so the
    hard lookup returns exactly its value, as a dict would, and the soft one gets there below the threshold."""
    rng = np.random.default_rng(seed)
    k = rng.normal(size=(n, d_k))
    k /= np.linalg.norm(k, axis=1, keepdims=True)  # (N, d_k) unit keys
    assume(np.max(k @ k.T - np.eye(n)) < 1 - 1e-6)  # no two keys (nearly) the same direction
    v = np.arange(n, dtype=np.float64)[:, None] * 10  # (N, 1)
    for j in range(n):
        assert dict_lookup(k[j], k) == j
        np.testing.assert_array_equal(hard_lookup(k[j], k, v)[0], v[j])
        answer, w = soft_lookup(k[j], k, v, hard_temperature(k[j], k, 0.999))
        assert int(np.argmax(w)) == j and w[j] >= 0.999 - 1e-12


def test_a_dict_needs_the_exact_key_and_keeps_the_last_of_equal_keys():
    k = np.array([[2.0, 1.0], [1.0, 2.0], [1.0, -2.0], [2.0, 1.0]])  # cat, dog, car, cat again
    v = np.array([[10.0], [20.0], [30.0], [40.0]])
    assert dict_lookup([2.0, 1.0], k) == 3  # {(2, 1): 10, ..., (2, 1): 40} keeps 40
    assert dict(zip(map(tuple, k.tolist()), v[:, 0]))[(2.0, 1.0)] == 40  # what Python itself does
    assert dict_lookup([1.0, 2.0], k) == 1
    assert dict_lookup([1.5, 1.5], k) is None  # between cat and dog: KeyError
    assert dict_lookup([2.0 + 1e-12, 1.0], k) is None  # close is not equal
    answer, w = hard_lookup([2.0, 1.0], k, v)  # the two cats tie: the limit averages them, no key wins
    np.testing.assert_array_equal(w, [0.5, 0.0, 0.0, 0.5])
    assert answer[0] == 25.0
    answer, w = hard_lookup([1.5, 1.5], k[:3], v[:3])  # halfway between cat and dog: they tie too
    np.testing.assert_array_equal(w, [0.5, 0.5, 0.0])
    assert answer[0] == 15.0
    np.testing.assert_allclose(soft_lookup([1.5, 1.5], k[:3], v[:3], 0.1)[1][:2], [0.5, 0.5])  # at every τ
    answer, w = hard_lookup([1.5, 1.5], k, v)  # and with both cats: three keys tie
    np.testing.assert_allclose(w, [1 / 3, 1 / 3, 0.0, 1 / 3])
    np.testing.assert_allclose(answer, [70 / 3])


def test_hand_computed_weights_and_threshold():
    """Query cat = (2, 1) over cat, dog, car: scores 5/√2, 4/√2, 0; at τ = 1 the weights are e^s / Σ e^s, and the
    99% threshold solves e^(-g/τ) / (1 + e^(-g/τ) + e^(-h/τ)) = 0.01 with g = 1/√2, h = 5/√2."""
    k = np.array([[2.0, 1.0], [1.0, 2.0], [1.0, -2.0]])
    v = np.array([[10.0], [20.0], [30.0]])
    e = np.exp(np.array([5.0, 4.0, 0.0]) / math.sqrt(2))
    answer, w = soft_lookup([2.0, 1.0], k, v, 1.0)
    np.testing.assert_allclose(w, e / e.sum(), rtol=1e-12)
    np.testing.assert_allclose(answer, [(e @ [10.0, 20.0, 30.0]) / e.sum()], rtol=1e-12)
    tau = hard_temperature([2.0, 1.0], k, 0.99)
    g, h = 1 / math.sqrt(2), 5 / math.sqrt(2)
    np.testing.assert_allclose(
        (math.exp(-g / tau) + math.exp(-h / tau)) / (1 + math.exp(-g / tau) + math.exp(-h / tau)), 0.01
    )
    assert hard_temperature([1.0, 1.0], np.array([[1.0, 0.0], [0.0, 1.0]])) == math.inf  # every key ties


@given(dictionaries(), taus)
def test_parity_with_pytorch(qkv, tau):
    torch = pytest.importorskip("torch")
    q, k, v = qkv
    out = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q)[None, :], torch.from_numpy(k), torch.from_numpy(v), scale=1 / (math.sqrt(q.shape[0]) * tau)
    )
    np.testing.assert_allclose(soft_lookup(q, k, v, tau)[0], out[0].numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (([[1.0, 0.0]], [[1.0, 0.0]], [[1.0]]), "query must be one vector"),
        (([1.0, 0.0], [[1.0, 0.0, 0.0]], [[1.0]]), "share d_k"),
        (([1.0, 0.0], [1.0, 0.0], [[1.0]]), "keys must have at least 2"),
        (([1.0, 0.0], np.zeros((0, 2)), np.zeros((0, 1))), "non-empty"),
        (([1.0, 0.0], [[1.0, 0.0]], [[1.0], [2.0]]), "one row per key"),
        (([1.0, math.nan], [[1.0, 0.0]], [[1.0]]), "finite"),
        (([1.0, 0.0], [[1.0, 0.0]], [["a"]]), "numeric"),
    ],
)
def test_bad_arguments_say_what_is_allowed(args, says):
    with pytest.raises(ValueError, match=says):
        soft_lookup(*args)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "x"])
def test_bad_temperatures_and_shares_are_rejected(bad):
    with pytest.raises(ValueError, match="temperature"):
        soft_lookup([1.0], [[1.0]], [[1.0]], bad)
    with pytest.raises(ValueError, match="share"):
        hard_temperature([1.0], [[1.0], [0.0]], bad)
    with pytest.raises(ValueError, match="temperatures"):
        weights_over_temperature([1.0], [[1.0]], [1.0, bad] if bad != "x" else ["x"])
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        hard_temperature([1.0], [[1.0], [0.0]], 1.0)
