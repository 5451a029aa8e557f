"""Unit and property tests for the NumPy attention math."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=64)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=finite), st.floats(0.05, 20))
def test_softmax_rows_sum_to_one_and_are_finite(x, t):
    p = ac.softmax(x, temperature=t)
    assert np.all(np.isfinite(p))
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-12)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=st.floats(-100, 100)),
    st.floats(-1e3, 1e3),
)
def test_softmax_shift_invariance(x, c):
    np.testing.assert_allclose(ac.softmax(x + c), ac.softmax(x), atol=1e-12)


def test_softmax_extremes_and_hand_value():
    p = ac.softmax(np.array([1e4, -1e4, 0.0]))
    np.testing.assert_array_equal(p, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(ac.softmax(np.array([0.0, math.log(3.0)])), [0.25, 0.75])
    np.testing.assert_allclose(ac.softmax(np.array([-1e4, -1e4])), [0.5, 0.5])


def test_softmax_temperature_limits():
    x = np.array([[1.0, 3.0, 2.0]])
    np.testing.assert_allclose(ac.softmax(x, temperature=1e-3), [[0, 1, 0]], atol=1e-12)
    np.testing.assert_allclose(ac.softmax(x, temperature=1e6), np.full((1, 3), 1 / 3), atol=1e-5)
    np.testing.assert_allclose(ac.softmax(x, temperature=2.0), ac.softmax(x / 2.0))


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "x"])
def test_softmax_rejects_bad_temperature(bad):
    with pytest.raises(ValueError, match="temperature"):
        ac.softmax(np.zeros(3), temperature=bad)


def test_softmax_rejects_non_finite():
    with pytest.raises(ValueError, match="finite"):
        ac.softmax(np.array([1.0, np.nan]))


def test_softmax_where_excludes_and_empty_row_is_zero():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    where = np.array([[True, False, True], [False, False, False]])
    p = ac.softmax(x, where=where)
    np.testing.assert_allclose(p[0], [1 / (1 + math.e**2), 0, math.e**2 / (1 + math.e**2)])
    np.testing.assert_array_equal(p[1], [0, 0, 0])


def _qkv(rng, lead, T_q, T_k, d_k, d_v):
    return (
        rng.standard_normal((*lead, T_q, d_k)),
        rng.standard_normal((*lead, T_k, d_k)),
        rng.standard_normal((*lead, T_k, d_v)),
    )


@given(st.integers(0, 2**31), st.integers(1, 7), st.integers(1, 7), st.integers(1, 8), st.booleans())
def test_attention_reference_formula(seed, T_q, T_k, d_k, scaled):
    rng = np.random.default_rng(seed)
    q, k, v = _qkv(rng, (2,), T_q, T_k, d_k, 3)
    out, w = ac.scaled_dot_product_attention(q, k, v, scaled=scaled)
    s = np.einsum("bqd,bkd->bqk", q, k) / (math.sqrt(d_k) if scaled else 1.0)
    e = np.exp(s - s.max(-1, keepdims=True))
    w_ref = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(w, w_ref, atol=1e-12)
    np.testing.assert_allclose(out, w_ref @ v, atol=1e-12)
    assert w.shape == (2, T_q, T_k) and out.shape == (2, T_q, 3)


@given(st.integers(0, 2**31), st.integers(1, 9), st.floats(-50, 50))
def test_attention_invariant_to_constant_added_to_scores(seed, T, c):
    # adding c to every key of a query's scores = a key bias of c/|q|^2 ... do it directly on scores
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((T, T))
    np.testing.assert_allclose(ac.softmax(s + c), ac.softmax(s), atol=1e-12)
    # and through attention: appending a constant feature 1 to q and c to every key adds c to all scores
    q, k, v = _qkv(rng, (), T, T, 4, 2)
    q1 = np.concatenate([q, np.ones((T, 1))], -1)
    k1 = np.concatenate([k, np.full((T, 1), c)], -1)
    _, w1 = ac.scaled_dot_product_attention(q1, k1, v, scaled=False)
    _, w0 = ac.scaled_dot_product_attention(q, k, v, scaled=False)
    np.testing.assert_allclose(w1, w0, atol=1e-9)


@given(st.integers(0, 2**31), st.integers(1, 10))
def test_causal_weights_zero_above_diagonal(seed, T):
    rng = np.random.default_rng(seed)
    q, k, v = _qkv(rng, (), T, T, 4, 4)
    out, w = ac.scaled_dot_product_attention(q, k, v, mask=ac.causal_mask(T))
    assert np.all(w[np.triu_indices(T, 1)] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    np.testing.assert_allclose(out[0], v[0])  # the first token can only see itself


@given(st.integers(0, 2**31), st.integers(2, 9), st.sampled_from([1, 2, 4]))
def test_multi_head_permutation_equivariance(seed, T, H):
    rng = np.random.default_rng(seed)
    d = 8
    x = rng.standard_normal((T, d))
    ws = [rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4)]
    perm = rng.permutation(T)
    out, w = ac.multi_head_attention(x, *ws, n_heads=H)
    out_p, w_p = ac.multi_head_attention(x[perm], *ws, n_heads=H)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-10)
    np.testing.assert_allclose(w_p, w[:, perm][:, :, perm], atol=1e-12)


def test_fully_masked_row_is_zero_not_nan():
    rng = np.random.default_rng(0)
    q, k, v = _qkv(rng, (), 3, 4, 2, 2)
    mask = np.array([[True, True, False, False], [False] * 4, [True] * 4])
    out, w = ac.scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(-1), 1.0)
    assert np.all(w[0, 2:] == 0.0)


def test_padding_mask_gives_padded_keys_zero_weight():
    rng = np.random.default_rng(1)
    q, k, v = _qkv(rng, (), 5, 5, 3, 3)
    m = ac.padding_mask(3, 5)
    assert m.shape == (5, 5) and m[:, :3].all() and not m[:, 3:].any()
    _, w = ac.scaled_dot_product_attention(q, k, v, mask=m)
    assert np.all(w[:, 3:] == 0.0)
    batch = ac.padding_mask([1, 5], 5, T_q=2)
    assert batch.shape == (2, 2, 5) and batch[0].sum() == 2 and batch[1].all()
    both = ac.combine_masks(ac.causal_mask(5), m)
    np.testing.assert_array_equal(both, np.tril(np.ones((5, 5), bool)) & m)
    assert ac.combine_masks(None, None) is None


def test_cross_attention_shapes():
    rng = np.random.default_rng(2)
    q, k, v = _qkv(rng, (), 3, 7, 4, 5)
    out, w = ac.scaled_dot_product_attention(q, k, v)
    assert w.shape == (3, 7) and out.shape == (3, 5)


def test_d_k_one_and_single_token():
    out, w = ac.scaled_dot_product_attention(np.ones((1, 1)), np.ones((1, 1)), np.full((1, 3), 2.0))
    np.testing.assert_array_equal(w, [[1.0]])
    np.testing.assert_array_equal(out, [[2.0, 2.0, 2.0]])


def test_huge_logits_stay_finite():
    q = np.array([[1e2, 0.0]])
    k = np.array([[1e2, 0.0], [-1e2, 0.0]])
    out, w = ac.scaled_dot_product_attention(q, k, np.eye(2), scaled=False)
    np.testing.assert_array_equal(w, [[1.0, 0.0]])


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(q=np.zeros((2, 3)), k=np.zeros((2, 4)), v=np.zeros((2, 1))), "share d_k"),
        (dict(q=np.zeros((2, 3)), k=np.zeros((2, 3)), v=np.zeros((5, 1))), "T_k"),
        (dict(q=np.zeros(3), k=np.zeros((2, 3)), v=np.zeros((2, 1))), "at least 2"),
        (dict(q=np.full((2, 3), np.inf), k=np.zeros((2, 3)), v=np.zeros((2, 1))), "finite"),
        (dict(q=np.zeros((2, 3)), k=np.zeros((2, 3)), v=np.zeros((2, 1)), mask=np.ones((3, 3), bool)), "broadcast"),
        (dict(q=np.zeros((2, 3)), k=np.zeros((2, 3)), v=np.zeros((2, 1)), mask=np.ones((2, 2))), "boolean"),
        (dict(q=np.zeros((2, 3)), k=np.zeros((2, 3)), v=np.zeros((2, 1)), temperature=0), "temperature"),
    ],
)
def test_attention_rejects_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        ac.scaled_dot_product_attention(**args)


def test_multi_head_rejects_bad_heads_and_shapes():
    x = np.zeros((3, 10))
    w = np.zeros((10, 10))
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3"):
        ac.multi_head_attention(x, w, w, w, w, n_heads=3)
    with pytest.raises(ValueError, match="w_o must have shape"):
        ac.multi_head_attention(x, w, w, w, np.zeros((10, 4)), n_heads=2)
    with pytest.raises(ValueError, match="n_heads"):
        ac.multi_head_attention(x, w, w, w, w, n_heads=0)


def test_multi_head_equals_heads_computed_one_by_one():
    rng = np.random.default_rng(3)
    T, d, H = 5, 12, 3
    x = rng.standard_normal((2, T, d))
    ws = [rng.standard_normal((d, d)) for _ in range(4)]
    out, w = ac.multi_head_attention(x, *ws, n_heads=H, mask=ac.causal_mask(T))
    assert w.shape == (2, H, T, T)
    d_k = d // H
    heads = []
    for h in range(H):
        cols = slice(h * d_k, (h + 1) * d_k)
        z, wh = ac.scaled_dot_product_attention(
            x @ ws[0][:, cols], x @ ws[1][:, cols], x @ ws[2][:, cols], mask=ac.causal_mask(T)
        )
        np.testing.assert_allclose(w[:, h], wh, atol=1e-12)
        heads.append(z)
    np.testing.assert_allclose(out, np.concatenate(heads, -1) @ ws[3], atol=1e-10)


def test_positional_encoding_values():
    pe = ac.sinusoidal_positional_encoding(50, 6)
    assert pe.shape == (50, 6) and pe.dtype == np.float32
    pos = np.arange(50)[:, None]
    for i in range(3):
        freq = 1.0 / 10000 ** (2 * i / 6)
        np.testing.assert_allclose(pe[:, 2 * i], np.sin(pos[:, 0] * freq), atol=1e-6)
        np.testing.assert_allclose(pe[:, 2 * i + 1], np.cos(pos[:, 0] * freq), atol=1e-6)
    odd = ac.sinusoidal_positional_encoding(4, 5)
    assert odd.shape == (4, 5)
    np.testing.assert_allclose(odd[:, 4], np.sin(np.arange(4) / 10000 ** (4 / 5)), atol=1e-6)
    np.testing.assert_array_equal(pe[0, 0::2], 0.0)
    np.testing.assert_array_equal(pe[0, 1::2], 1.0)
    with pytest.raises(ValueError, match="d_model"):
        ac.sinusoidal_positional_encoding(4, 0)


# ---- the figures the pages state, computed by the core objects they come from


@given(st.integers(1, 2048), st.sampled_from([100.0, 10000.0, 500000.0]))
def test_each_wavelength_is_one_full_turn_of_its_column_pair(d_model, base):
    from attention_core.positional import wavelengths

    lam = wavelengths(d_model, base)
    assert lam.shape == ((d_model + 1) // 2,) and lam[0] == pytest.approx(2 * math.pi)
    assert np.all(np.diff(lam) > 0)
    # the table's angle at position lam_i in column pair i is exactly one turn
    freq = base ** (-np.arange(0, d_model, 2) / d_model)
    np.testing.assert_allclose(lam * freq, 2 * math.pi, rtol=1e-12)
    if d_model >= 4:  # the table's first column is sin(position): the fastest pair turns once in 2 pi positions
        pe = ac.sinusoidal_positional_encoding(64, d_model, base)
        assert np.abs(pe[:, 0] - np.sin(np.arange(64))).max() < 1e-6


def test_masked_run_row_sums_and_outputs():
    from attention_core.mask_demo import MaskedRun

    mask = np.array([[False, False], [True, False]])
    weights = np.array([[0.0, 0.0], [1.0 - 3e-7, 0.0]])
    run = MaskedRun("causal", mask, weights, np.array([[0.0], [-2.5]]))
    assert run.row_sum_error == pytest.approx(3e-7) and run.largest_output == 2.5
    blocked = MaskedRun("padding", np.zeros((2, 2), bool), np.zeros((2, 2)), np.zeros((2, 1)))
    assert blocked.row_sum_error == 0.0 and blocked.largest_output == 0.0  # no row with an allowed key


def test_row_up_close_jacobian_spread_and_its_norm():
    from attention_core.sweep import row_up_close

    row = row_up_close(64, 8, seed=3)
    for scaled in (True, False):
        p = row.weights_scaled if scaled else row.weights_unscaled
        np.testing.assert_allclose(row.jacobian(scaled), np.diag(p) - np.outer(p, p), atol=1e-15)
        assert row.jacobian_norm(scaled) == pytest.approx(np.linalg.norm(np.diag(p) - np.outer(p, p)))
    assert row.logit_spread(False) == pytest.approx(row.logit_spread(True) * 8)  # sqrt(64)
    assert row_up_close(4096, 4, temperature=0.1, seed=0).jacobian_norm(False) < 1e-12  # one-hot: no gradient back


def test_encoder_row_norms_and_linear_peaks():
    from attention_core import WhatIf, run_whatif
    from attention_core.sinks_linear_views import linear_view

    run = run_whatif(WhatIf(seq_len=6, d_model=8, n_heads=2))
    view = linear_view(run, 0)
    soft, lin = view.mean_peaks
    assert soft == pytest.approx(view.softmax_weights.max(axis=1).mean(), rel=1e-6)
    assert 1 / 6 <= lin <= 1 and 1 / 6 <= soft <= 1  # a row's largest of 6 weights summing to 1
    from attention_core.block_run import run_block

    block = run_block(WhatIf(seq_len=5, d_model=16, n_heads=2))
    x_norm, out_norm = block.encoder.mean_row_norms
    assert x_norm == pytest.approx(np.linalg.norm(block.encoder.x, axis=1).mean())
    assert out_norm == pytest.approx(math.sqrt(16), rel=0.05)  # post-norm: each output row is LayerNorm'd
