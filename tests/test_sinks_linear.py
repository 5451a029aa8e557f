"""Attention sinks, StreamingLLM's mask and linear attention: invariants, references and bad arguments."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attention_core import causal_mask, scaled_dot_product_attention, softmax
from attention_core.linear_attention import (
    elu_feature_map,
    linear_attention,
    linear_attention_factorised,
    linear_attention_recurrent,
)
from attention_core.sinks import sink_attention, streaming_mask


def gpt_oss_sdpa(q, k, v, sinks, mask=None):
    """gpt-oss's torch reference: concatenate the sink logit as a last column, softmax, drop it."""
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5  # (H, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    s = sinks.reshape(-1, 1, 1).expand(*scores.shape[:-1], 1)
    w = torch.softmax(torch.cat([scores, s], dim=-1), dim=-1)
    return w[..., :-1] @ v, w[..., :-1]


# ---------------------------------------------------------------- sinks


@given(
    st.integers(0, 2**31), st.integers(1, 9), st.integers(1, 9), st.integers(1, 8), st.floats(0.1, 10), st.booleans()
)
def test_sink_weights_are_softmax_over_scores_and_sink_without_the_sink_column(seed, T_q, T_k, H, temperature, scaled):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((H, T_q, 4)), rng.standard_normal((H, T_k, 4)), rng.standard_normal((H, T_k, 3))
    sinks = rng.uniform(-5, 5, H)
    out, w, sink_w = sink_attention(q, k, v, sinks, scaled=scaled, temperature=temperature)
    scores = q @ np.swapaxes(k, -1, -2) / (np.sqrt(4) if scaled else 1.0)
    both = softmax(
        np.concatenate([scores, np.broadcast_to(sinks[:, None, None], (H, T_q, 1))], -1), temperature=temperature
    )
    np.testing.assert_allclose(w, both[..., :-1], atol=1e-12)
    np.testing.assert_allclose(sink_w, both[..., -1], atol=1e-12)
    np.testing.assert_allclose(out, both[..., :-1] @ v, atol=1e-12)
    real = w.sum(-1)
    assert np.all(sink_w > 0) and np.all(real <= 1 + 1e-15)
    assert np.all(real[sink_w > 2**-50] < 1)  # < 1 in floats whenever the sink's share is above rounding
    np.testing.assert_allclose(real + sink_w, 1.0, atol=1e-12)


@given(st.integers(0, 2**31), st.integers(1, 9), st.integers(1, 8), st.booleans())
def test_sink_attention_matches_gpt_oss_torch_reference(seed, T, H, causal):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, H, T, 8))
    sinks = rng.uniform(-3, 3, H)
    mask = causal_mask(T) if causal else None
    out, w, _ = sink_attention(q, k, v, sinks, mask=mask)
    ref_out, ref_w = gpt_oss_sdpa(
        *map(torch.from_numpy, (q, k, v, sinks)), None if mask is None else torch.from_numpy(mask)
    )
    np.testing.assert_allclose(w, ref_w.numpy(), atol=1e-12)
    np.testing.assert_allclose(out, ref_out.numpy(), atol=1e-12)


@given(st.integers(0, 2**31), st.integers(1, 9), st.integers(1, 8), st.floats(0.1, 10), st.booleans())
def test_no_sink_is_plain_attention(seed, T, H, temperature, masked):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 2, H, T, 4))
    mask = rng.random((T, T)) < 0.5 if masked else None  # may contain fully masked rows
    plain_out, plain_w = scaled_dot_product_attention(q, k, v, mask=mask, temperature=temperature)
    for sinks in (None, np.full(H, -np.inf), -np.inf):
        out, w, sink_w = sink_attention(q, k, v, sinks, mask=mask, temperature=temperature)
        np.testing.assert_allclose(w, plain_w, atol=1e-12)
        np.testing.assert_allclose(out, plain_out, atol=1e-12)
        assert np.all(sink_w == 0)


def test_sink_edge_cases_never_nan():
    q, k, v = np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.arange(24.0).reshape(2, 3, 4)
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    out, w, sink_w = sink_attention(q, k, v, [0.0, -np.inf], mask=mask)
    assert np.isfinite(out).all() and np.isfinite(w).all() and np.isfinite(sink_w).all()
    assert sink_w[0, 1] == 1.0 and np.all(w[0, 1] == 0) and np.all(out[0, 1] == 0)  # nothing allowed: all to the sink
    assert sink_w[1, 1] == 0.0 and np.all(w[1, 1] == 0) and np.all(out[1, 1] == 0)  # no sink: zeros, as plain attention
    big = sink_attention(q, k, v, [1e4, -1e4])[1]
    assert np.all(big[0] == 0) and np.allclose(big[1].sum(-1), 1)
    assert sink_attention(q, k, v, 0.0)[2].shape == (2, 3)  # one logit for every head broadcasts


@pytest.mark.parametrize(
    "sinks, match", [([np.nan, 0], "NaN"), ([np.inf, 0], "inf"), ([0, 1, 2], "broadcast"), ("abc", "numbers")]
)
def test_sink_attention_rejects_bad_sinks(sinks, match):
    with pytest.raises(ValueError, match=match):
        sink_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4)), sinks)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(k=np.ones((2, 3, 5))), "share d_k"),
        (dict(v=np.ones((2, 2, 4))), "T_k"),
        (dict(temperature=-1), "temperature"),
        (dict(mask=np.ones((3, 3))), "boolean"),
        (dict(mask=np.ones((4, 4), bool)), "broadcast"),
    ],
)
def test_sink_attention_rejects_bad_arguments(kwargs, match):
    args = dict(q=np.ones((2, 3, 4)), k=np.ones((2, 3, 4)), v=np.ones((2, 3, 4)), sink_logits=[0.0, 0.0]) | kwargs
    with pytest.raises(ValueError, match=match):
        sink_attention(**args)


@given(st.integers(1, 30), st.integers(0, 8), st.integers(1, 12))
def test_streaming_mask_keeps_first_tokens_and_last_window(T, n_sink, window):
    m = streaming_mask(T, n_sink, window)
    ref = np.array([[j <= i and (j < n_sink or i - j < window) for j in range(T)] for i in range(T)])
    np.testing.assert_array_equal(m, ref)
    assert m.dtype == bool and np.all(m.sum(1) <= n_sink + window) and np.all(np.diagonal(m))
    assert not np.triu(m, 1).any()  # causal
    if n_sink + window >= T:
        np.testing.assert_array_equal(m, causal_mask(T))
    if n_sink == 0:
        np.testing.assert_array_equal(m, np.tril(np.triu(np.ones((T, T), bool), -(window - 1))))  # a plain band


@pytest.mark.parametrize(
    "args, match", [((0, 1, 1), "T"), ((4, -1, 1), "n_sink"), ((4, 1, 0), "window"), ((4, 1.5, 2), "integer")]
)
def test_streaming_mask_rejects_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        streaming_mask(*args)


# ---------------------------------------------------------------- linear attention


@given(st.integers(0, 2**31), st.integers(1, 12), st.integers(1, 8), st.integers(1, 6), st.floats(0.1, 5))
def test_causal_parallel_form_equals_recurrent_form(seed, T, d_k, d_v, scale):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 2, 3, T, d_k)) * scale
    v = rng.standard_normal((2, 3, T, d_v))
    par, w = linear_attention(q, k, v, causal=True)
    rec, S, z = linear_attention_recurrent(q, k, v)
    np.testing.assert_allclose(rec, par, rtol=1e-10, atol=1e-12)
    fk = elu_feature_map(k)
    np.testing.assert_allclose(S, np.swapaxes(fk, -1, -2) @ v, rtol=1e-10, atol=1e-12)  # S = sum phi(k) v^T
    np.testing.assert_allclose(z, fk.sum(-2), rtol=1e-12)  # z = sum phi(k)
    assert S.shape == (2, 3, d_k, d_v) and z.shape == (2, 3, d_k)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    assert not np.triu(w, 1).any() and np.all(w[..., causal_mask(T)] > 0)


@given(st.integers(0, 2**31), st.integers(1, 10), st.integers(1, 10), st.integers(1, 8), st.integers(1, 6))
def test_non_causal_parallel_form_equals_factorised_form(seed, T_q, T_k, d_k, d_v):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((2, T_q, d_k)), rng.standard_normal((2, T_k, d_k)), rng.standard_normal((2, T_k, d_v))
    par, w = linear_attention(q, k, v)
    fac, S, z = linear_attention_factorised(q, k, v)
    np.testing.assert_allclose(fac, par, rtol=1e-10, atol=1e-12)
    assert w.shape == (2, T_q, T_k) and np.all(w > 0)
    if T_q == T_k:  # the recurrent state after the last token is the factorised state
        _, S_rec, z_rec = linear_attention_recurrent(q, k, v)
        np.testing.assert_allclose(S_rec, S, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(z_rec, z, rtol=1e-12)


@given(st.integers(0, 2**31), st.integers(1, 12), st.integers(1, 8))
def test_linear_attention_matches_a_torch_cumsum_formulation(seed, T, d):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 2, T, d))
    tq, tk, tv = map(torch.from_numpy, (q, k, v))
    fq, fk = F.elu(tq) + 1, F.elu(tk) + 1
    S = torch.cumsum(fk[..., :, None] * tv[..., None, :], dim=-3)  # (B, T, d, d): S_i
    z = torch.cumsum(fk, dim=-2)  # (B, T, d)
    ref = torch.einsum("btd,btde->bte", fq, S) / torch.einsum("btd,btd->bt", fq, z)[..., None]
    np.testing.assert_allclose(linear_attention(q, k, v, causal=True)[0], ref.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(elu_feature_map(q), fq.numpy(), atol=1e-15)


def test_feature_map_is_positive_and_continuous():
    x = np.array([-1000.0, -1.0, -1e-12, 0.0, 1e-12, 1.0, 50.0])
    phi = elu_feature_map(x)
    assert np.all(phi >= 0) and np.all(phi[1:] > 0)
    np.testing.assert_allclose(phi, [0.0, np.exp(-1), 1.0, 1.0, 1.0, 2.0, 51.0], atol=1e-11)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: linear_attention(np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2))), "share d_k"),
        (lambda: linear_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 2))), "T_k"),
        (lambda: linear_attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2)), causal=True), "T_q == T_k"),
        (lambda: linear_attention_recurrent(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2))), "T_q == T_k"),
        (lambda: linear_attention_factorised(np.ones(4), np.ones((3, 4)), np.ones((3, 2))), "dimension"),
        (lambda: linear_attention(np.full((3, 4), np.nan), np.ones((3, 4)), np.ones((3, 2))), "finite"),
        (lambda: elu_feature_map("x"), "numeric"),
    ],
)
def test_linear_attention_rejects_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()
