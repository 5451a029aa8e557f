"""The class-notes example, saturation measures, inputs and the what-if config."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_core.config import MASK_KINDS


def test_class_notes_every_query_finds_b3():
    E, vocab = ac.one_hot_embeddings("A A B A")
    assert vocab == ["A", "B"]
    np.testing.assert_array_equal(E, [[1, 0], [1, 0], [0, 1], [1, 0]])
    w_q, w_k, w_v = ac.class_notes_weights()
    Q, K, V = E @ w_q, E @ w_k, E @ w_v
    np.testing.assert_array_equal(Q, [[0, 1]] * 4)  # every token asks for B
    np.testing.assert_array_equal(K, [[10, 0], [10, 0], [0, 10], [10, 0]])
    Z, A = ac.scaled_dot_product_attention(Q, K, V)
    # by hand: scores are 0 for A keys and 10 for B3; scaled by sqrt(2): 10/sqrt(2) = 7.0711
    s = 10 / math.sqrt(2)
    b = math.exp(s) / (3 + math.exp(s))
    a = 1 / (3 + math.exp(s))
    for row in A:
        np.testing.assert_allclose(row, [a, a, b, a], rtol=1e-6)
    assert b == pytest.approx(0.99746, abs=1e-5)
    np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-6)
    # Z rows move toward B = [0, 1]
    np.testing.assert_allclose(Z, [[3 * a, b]] * 4, rtol=1e-5)
    assert np.all(Z[:, 1] > 0.99)
    # unscaled: even sharper
    _, A_raw = ac.scaled_dot_product_attention(Q, K, V, scaled=False)
    np.testing.assert_allclose(A_raw[0, 2], math.exp(10) / (3 + math.exp(10)), rtol=1e-6)


def test_saturation_uniform_and_one_hot():
    T = 7
    uni = ac.saturation_metrics(np.full((3, T), 1 / T))
    np.testing.assert_allclose(uni.entropy, math.log(T))
    np.testing.assert_allclose(uni.normalized_entropy, 1.0)
    np.testing.assert_allclose(uni.effective_tokens, T)
    np.testing.assert_allclose(uni.max_weight, 1 / T)
    assert uni.near_one_hot_share == 0.0
    hot = ac.saturation_metrics(np.eye(T))
    np.testing.assert_allclose(hot.entropy, 0.0)
    np.testing.assert_allclose(hot.effective_tokens, 1.0)
    np.testing.assert_allclose(hot.jacobian_norm, 0.0)
    assert hot.near_one_hot_share == 1.0


@given(st.integers(0, 2**31), st.integers(1, 9))
def test_jacobian_norm_closed_form_matches_matrix(seed, T):
    p = ac.softmax(np.random.default_rng(seed).standard_normal((4, T)) * 3)
    m = ac.saturation_metrics(p)
    J = ac.softmax_jacobian(p)
    np.testing.assert_allclose(m.jacobian_norm, np.linalg.norm(J, axis=(-2, -1)), atol=1e-12)
    # and J really is the derivative of softmax: finite differences
    x = np.random.default_rng(seed).standard_normal(T)
    eps = 1e-6
    num = np.stack([(ac.softmax(x + eps * e) - ac.softmax(x - eps * e)) / (2 * eps) for e in np.eye(T)], 1)
    np.testing.assert_allclose(ac.softmax_jacobian(ac.softmax(x)), num, atol=1e-6)


def _jacobian_norm_exact(logits) -> float:
    """||diag(p) - p p^T||_F of p = softmax(logits), in 50-digit arithmetic (mpmath, which torch installs)."""
    import mpmath

    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(float(x))) for x in logits]
        p = [x / mpmath.fsum(e) for x in e]
        total = mpmath.fsum(((1 if i == j else 0) * a - a * b) ** 2 for i, a in enumerate(p) for j, b in enumerate(p))
        return float(mpmath.sqrt(total))


@given(st.integers(0, 2**31), st.integers(2, 7), st.floats(1.0, 60.0))
def test_jacobian_norm_is_accurate_for_near_one_hot_rows(seed, T, spread):
    # A row whose largest weight is 1 - 1e-26 has ||J|| ~ 1e-13: the formula must not cancel to 0 or noise
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((3, T))
    logits[:, 0] += spread  # key 0 wins by up to 60 nats
    p = ac.softmax(logits)
    got = ac.saturation_metrics(p).jacobian_norm
    want = np.array([_jacobian_norm_exact(row) for row in logits])
    np.testing.assert_allclose(got, want, rtol=1e-12)


@given(st.integers(0, 2**31), st.integers(2, 40), st.floats(0.0, 3.0))
def test_jacobian_norm_is_accurate_for_soft_and_mixed_rows(seed, T, spread):
    # rows whose weights all stay under half (three row sums) beside near-one-hot rows (the careful sum), in one
    # batch, so that both paths of jacobian_frobenius meet the 50-digit value
    rng = np.random.default_rng(seed)
    logits = spread * rng.standard_normal((4, T))
    logits[3, 0] += 40.0  # one row near one-hot
    p = ac.softmax(logits)
    got = ac.saturation_metrics(p).jacobian_norm
    want = np.array([_jacobian_norm_exact(row) for row in logits])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_saturation_skips_fully_masked_rows():
    w = np.array([[1.0, 0.0], [0.0, 0.0]])
    m = ac.saturation_metrics(w)
    assert list(m.valid) == [True, False]
    assert m.near_one_hot_share == 1.0
    assert m.summary()["effective_tokens"] == 1.0
    with pytest.raises(ValueError, match="non-negative"):
        ac.saturation_metrics(np.array([[-0.5, 1.5]]))


@pytest.mark.parametrize("d_k", [1, 16, 256])
@pytest.mark.parametrize("scaled", [False, True])
def test_score_std_matches_theory(d_k, scaled):
    measured, predicted = ac.score_std(d_k, scaled, n_samples=20000, seed=1)
    assert predicted == (1.0 if scaled else math.sqrt(d_k))
    assert abs(measured - predicted) / predicted < 0.10


def test_inputs_are_deterministic():
    a = ac.random_embeddings(4, 8, seed=3)
    np.testing.assert_array_equal(a, ac.random_embeddings(4, 8, seed=3))
    assert not np.array_equal(a, ac.random_embeddings(4, 8, seed=4))
    toks, E, cut = ac.sentence_embeddings("it was it", 6, seed=1)
    assert toks == ["it", "was", "it"] and not cut
    np.testing.assert_array_equal(E[0], E[2])  # same word, same vector
    assert not np.array_equal(E[0], E[1])
    _, E2, _ = ac.sentence_embeddings("it", 6, seed=2)
    assert not np.array_equal(E[0], E2[0])
    toks, _, cut = ac.sentence_embeddings(" ".join(["w"] * 600), 4)
    assert len(toks) == 512 and cut
    assert ac.position_labels(["A", "A", "B", "A"]) == ["A1", "A2", "B3", "A4"]
    with pytest.raises(ValueError, match="at least one"):
        ac.sentence_embeddings("   ", 4)
    with pytest.raises(ValueError, match="vocabulary"):
        ac.one_hot_embeddings("A C", vocabulary=["A", "B"])


def test_random_projection_keeps_unit_variance():
    x = ac.random_embeddings(2000, 256, seed=0)
    w_q = ac.random_projection_weights(256, seed=0)[0]
    assert 0.9 < (x @ w_q).std() < 1.1


def test_whatif_validation_messages():
    with pytest.raises(ValueError, match=r"n_heads=3 is not allowed; d_model=10 is not divisible"):
        ac.WhatIf(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="seq_len=0"):
        ac.WhatIf(seq_len=0)
    with pytest.raises(ValueError, match="temperature"):
        ac.WhatIf(temperature=float("nan"))
    with pytest.raises(ValueError, match="mask"):
        ac.WhatIf(mask="diagonal")
    assert ac.WhatIf().d_k == 16


def test_run_whatif_inputs_and_masks():
    run = ac.run_whatif(ac.WhatIf(input_kind="one_hot", seq_len=6, d_model=4, n_heads=2))
    assert run.tokens == ["A1", "A2", "B3", "A4", "A5", "A6"]
    np.testing.assert_array_equal(run.x[:, :2], [[1, 0], [1, 0], [0, 1], [1, 0], [1, 0], [1, 0]])
    run = ac.run_whatif(ac.WhatIf(input_kind="sentence", sentence="<img src=x> it  was", d_model=8, n_heads=2))
    assert run.tokens == ["<img", "src=x>", "it", "was"] and run.weights.shape == (2, 4, 4)
    run = ac.run_whatif(ac.WhatIf(seq_len=5, mask="causal+padding", pad_count=2, d_model=8, n_heads=2))
    assert np.all(run.weights[:, :, 3:] == 0) and np.all(run.weights[:, 0, 1:] == 0)
    run = ac.run_whatif(ac.WhatIf(seq_len=3, mask="padding", pad_count=9, d_model=8, n_heads=1))
    assert np.all(run.weights == 0) and np.all(run.output == 0) and run.notices
    pe_run = ac.run_whatif(ac.WhatIf(seq_len=3, positional=True, d_model=8, n_heads=1))
    np.testing.assert_allclose(
        pe_run.x - ac.run_whatif(ac.WhatIf(seq_len=3, d_model=8, n_heads=1)).x,
        ac.sinusoidal_positional_encoding(3, 8),
        atol=1e-6,
    )


@given(
    st.integers(1, 12),
    st.sampled_from([(8, 1), (8, 2), (16, 4), (64, 8)]),
    st.booleans(),
    st.floats(0.1, 5.0),
    st.sampled_from(MASK_KINDS),
    st.integers(0, 14),
    st.integers(0, 3),
)
def test_twin_weights_are_the_twin_runs_weights(T, dims, scaled, temperature, mask, pad, seed):
    cfg = ac.WhatIf(
        seq_len=T, d_model=dims[0], n_heads=dims[1], scaled=scaled, temperature=temperature, mask=mask, pad_count=pad
    )
    cfg = cfg.replace(seed=seed)
    run, twin = ac.run_whatif(cfg), ac.run_whatif(cfg.replace(scaled=not scaled))
    got = ac.twin_weights(run)
    assert got.dtype == twin.weights.dtype
    np.testing.assert_array_equal(got, twin.weights)
    for h in range(dims[1]):  # one head alone: the same bits
        np.testing.assert_array_equal(ac.twin_weights(run, h), twin.weights[h])
    with pytest.raises(ValueError, match="head"):
        ac.twin_weights(run, dims[1])
    if dims[0] // dims[1] > 1 and T > 1 and mask == "none":  # sqrt(d_k) > 1 really changes the weights
        assert not np.array_equal(got, run.weights)


def test_js_divergence_bounds_and_head_matrix():
    p = np.array([0.5, 0.5, 0.0])
    assert ac.js_divergence(p, p) == 0.0
    assert ac.js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)
    q = np.array([0.2, 0.3, 0.5])
    m = (p + q) / 2
    kl = lambda a, b: sum(x * math.log2(x / y) for x, y in zip(a, b) if x > 0)  # noqa: E731
    assert ac.js_divergence(p, q) == pytest.approx((kl(p, m) + kl(q, m)) / 2)
    w = ac.run_whatif(ac.WhatIf(n_heads=4)).weights
    D = ac.head_divergence_matrix(w)
    assert D.shape == (4, 4)
    np.testing.assert_allclose(np.diag(D), 0.0, atol=1e-12)
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    assert np.all((D >= 0) & (D <= 1))


def test_cross_attention_numpy_matches_per_head_reference():
    rng = np.random.default_rng(5)
    x, kv = rng.standard_normal((3, 8)), rng.standard_normal((6, 8))
    ws = [rng.standard_normal((8, 8)) for _ in range(4)]
    out, w = ac.multi_head_attention(x, *ws, n_heads=2, kv=kv)
    assert out.shape == (3, 8) and w.shape == (2, 3, 6)
    z0, w0 = ac.scaled_dot_product_attention(x @ ws[0][:, :4], kv @ ws[1][:, :4], kv @ ws[2][:, :4])
    np.testing.assert_allclose(w[0], w0)
    with pytest.raises(ValueError, match="kv must be"):
        ac.multi_head_attention(x, *ws, n_heads=2, kv=np.zeros((4, 5)))


@given(
    st.sampled_from(MASK_KINDS),
    st.floats(0.1, 10.0),
    st.booleans(),
    st.integers(0, 9),
    st.sampled_from([(8, 64, 4), (5, 12, 3), (16, 32, 1)]),
)
@settings(max_examples=25, deadline=None)
def test_a_run_from_kept_projections_is_the_run_bit_for_bit(mask, temperature, scaled, pad, size):
    """run_whatif follows multi_head_attention's steps (the same bits), and a run that reuses the projections of a
    what-if differing only in scaling, temperature and mask (what a new temperature on a page does) is the run."""
    from attention_core.whatif import project_whatif

    T, d_model, H = size
    cfg = ac.WhatIf(
        seq_len=T, d_model=d_model, n_heads=H, mask=mask, temperature=temperature, scaled=scaled, pad_count=pad
    )
    run = ac.run_whatif(cfg)
    allowed = None if run.mask is None else run.mask
    output, weights = ac.multi_head_attention(
        run.x, *run.w, n_heads=H, mask=allowed, scaled=scaled, temperature=temperature
    )
    assert np.array_equal(run.output, output) and np.array_equal(run.weights, weights)
    base = project_whatif(cfg.replace(mask="none", temperature=1.0, scaled=True, pad_count=0))
    again = ac.run_whatif(cfg, projected=base)
    for name in ("x", "q", "k", "v", "heads", "concat", "output", "weights"):
        assert np.array_equal(getattr(again, name), getattr(run, name)), name
    assert again.notices == run.notices and again.tokens == run.tokens
    with pytest.raises(ValueError, match="cannot serve"):
        ac.run_whatif(cfg.replace(seed=cfg.seed + 1), projected=base)
