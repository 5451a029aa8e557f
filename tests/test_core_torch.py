"""Parity: NumPy vs torch-from-scratch vs PyTorch's own attention, and the gradient helper."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

import attention_core as ac
from attention_core.sweep import score_gradient
from attention_core.torch_attention import (
    MultiHeadSelfAttention,
    SelfAttention,
    scaled_dot_product_attention_torch,
)

TOL = dict(atol=2e-5, rtol=1e-4)  # float32


@given(
    st.integers(0, 2**31),
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(1, 16),
    st.booleans(),
    st.sampled_from(["none", "causal", "random"]),
)
def test_sdpa_numpy_torch_and_pytorch_reference_agree(seed, T_q, T_k, d_k, scaled, mask_kind):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((2, 3, T_q, d_k), dtype=np.float32)
    k = rng.standard_normal((2, 3, T_k, d_k), dtype=np.float32)
    v = rng.standard_normal((2, 3, T_k, 5), dtype=np.float32)
    mask = None
    if mask_kind == "causal":
        mask = np.tril(np.ones((T_q, T_k), bool))
    elif mask_kind == "random":
        mask = rng.random((T_q, T_k)) < 0.6
        mask[:, 0] = True  # PyTorch's reference gives NaN for fully masked rows; ours gives 0 (tested below)
    out_np, w_np = ac.scaled_dot_product_attention(q, k, v, mask=mask, scaled=scaled)
    tq, tk, tv = map(torch.from_numpy, (q, k, v))
    tm = None if mask is None else torch.from_numpy(mask)
    out_t, w_t = scaled_dot_product_attention_torch(tq, tk, tv, tm, scaled=scaled)
    ref = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, scale=None if scaled else 1.0)
    np.testing.assert_allclose(w_t.numpy(), w_np, **TOL)
    np.testing.assert_allclose(out_t.numpy(), out_np, **TOL)
    np.testing.assert_allclose(ref.numpy(), out_np, **TOL)


def test_torch_fully_masked_row_is_zero():
    q, k, v = torch.randn(3, 2), torch.randn(4, 2), torch.randn(4, 2)
    mask = torch.tensor([[True, False, False, False], [False] * 4, [True] * 4])
    out, w = scaled_dot_product_attention_torch(q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    assert (w[1] == 0).all() and (out[1] == 0).all()


@given(
    st.integers(0, 2**31),
    st.integers(1, 9),
    st.sampled_from([(8, 1), (8, 2), (12, 3), (16, 4), (16, 16)]),
    st.booleans(),
)
def test_multi_head_matches_nn_multiheadattention(seed, T, dims, causal):
    d_model, H = dims
    torch.manual_seed(seed % 10000)
    ref = torch.nn.MultiheadAttention(d_model, H, bias=False, batch_first=True).eval()
    ours = MultiHeadSelfAttention(d_model, H).eval()
    W = ref.in_proj_weight.detach()
    w_q, w_k, w_v = (W[i * d_model : (i + 1) * d_model].T.numpy() for i in range(3))
    w_o = ref.out_proj.weight.detach().T.numpy()
    ours.load_numpy_weights(w_q, w_k, w_v, w_o)
    x = torch.randn(2, T, d_model)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool)) if causal else None
    with torch.no_grad():
        out_ref, w_ref = ref(
            x, x, x, attn_mask=None if mask is None else ~mask, need_weights=True, average_attn_weights=False
        )
        out_ours, w_ours = ours(x, mask)
    out_np, w_np = ac.multi_head_attention(
        x.numpy(), w_q, w_k, w_v, w_o, n_heads=H, mask=None if mask is None else mask.numpy()
    )
    np.testing.assert_allclose(w_ours.numpy(), w_ref.numpy(), **TOL)
    np.testing.assert_allclose(out_ours.numpy(), out_ref.numpy(), **TOL)
    np.testing.assert_allclose(w_np, w_ref.numpy(), **TOL)
    np.testing.assert_allclose(out_np, out_ref.numpy(), **TOL)


def test_self_attention_module_matches_numpy_and_has_named_projections():
    torch.manual_seed(0)
    m = SelfAttention(6, d_k=4, d_v=3)
    assert [n for n, _ in m.named_children()] == ["W_q", "W_k", "W_v", "W_o"]
    assert m.W_q.weight.shape == (4, 6) and m.W_v.weight.shape == (3, 6) and m.W_o.weight.shape == (6, 3)
    x = torch.randn(2, 5, 6)
    with torch.no_grad():
        out, w = m(x)
    q, k, v = (x @ lin.weight.T for lin in (m.W_q, m.W_k, m.W_v))
    z, w_np = ac.scaled_dot_product_attention(q.detach().numpy(), k.detach().numpy(), v.detach().numpy())
    np.testing.assert_allclose(w.numpy(), w_np, **TOL)
    np.testing.assert_allclose(out.numpy(), z @ m.W_o.weight.detach().numpy().T, **TOL)
    assert w.shape == (2, 5, 5) and out.shape == (2, 5, 6)
    with pytest.raises(ValueError, match="d_model=6"):
        m(torch.randn(1, 2, 5))
    with pytest.raises(ValueError, match="not divisible"):
        MultiHeadSelfAttention(10, 3)


def test_modules_do_not_use_pytorch_attention_internally():
    import inspect

    import attention_core.torch_attention as mod

    src = inspect.getsource(mod)
    assert "scaled_dot_product_attention(" not in src.replace("def scaled_dot_product_attention_torch(", "")
    assert "MultiheadAttention(" not in src


def test_cross_attention_module_shape():
    m = MultiHeadSelfAttention(8, 2)
    out, w = m(torch.randn(1, 3, 8), kv=torch.randn(1, 7, 8))
    assert out.shape == (1, 3, 8) and w.shape == (1, 2, 3, 7)


def mean_gradient_norm(d_k: int, seq_len: int, scaled: bool, n_rows: int, seed: int) -> float:
    """The mean over rows of the L2 norm of the gradient that reaches the logits (what the Softmax page plots)."""
    return float(score_gradient(d_k, seq_len, scaled, n_rows=n_rows, seed=seed).grad_norm.mean())


def test_gradient_vanishes_without_scaling_and_stays_flat_with_it():
    # Logits of std 1 (d_k = 1) are near-uniform over 32 keys; the Jacobian peaks a little later and
    # then falls as the unscaled logits (std sqrt(d_k)) push rows to one-hot.
    d_ks = [1, 16, 64, 256, 1024]
    unscaled = [mean_gradient_norm(d, 32, scaled=False, n_rows=512, seed=0) for d in d_ks]
    scaled = [mean_gradient_norm(d, 32, scaled=True, n_rows=512, seed=0) for d in d_ks]
    assert all(a > b for a, b in zip(unscaled[1:], unscaled[2:])), unscaled
    assert unscaled[-1] < unscaled[1] / 5
    assert max(scaled) / min(scaled) < 1.3, scaled
    assert unscaled[0] == pytest.approx(scaled[0])  # at d_k = 1 scaling changes nothing


def test_gradient_helper_matches_jacobian():
    # J^T g with J from saturation.softmax_jacobian, computed by hand for one row
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(1, 4, generator=gen, dtype=torch.float64)
    k = torch.randn(1, 5, 4, generator=gen, dtype=torch.float64)
    g = torch.randn(1, 5, generator=gen, dtype=torch.float64)
    logits = torch.einsum("nd,ntd->nt", q, k) / 2.0
    p = torch.softmax(logits, -1).numpy()[0]
    expected = np.linalg.norm(ac.softmax_jacobian(p).T @ g.numpy()[0])
    assert mean_gradient_norm(4, 5, scaled=True, n_rows=1, seed=3) == pytest.approx(expected, rel=1e-9)


def test_temperature_sqrt_dk_equals_scaling():
    rng = np.random.default_rng(0)
    d_k = 64
    q, k, v = (rng.standard_normal((6, d_k)) for _ in range(3))
    a, wa = ac.scaled_dot_product_attention(q, k, v, scaled=True)
    b, wb = ac.scaled_dot_product_attention(q, k, v, scaled=False, temperature=math.sqrt(d_k))
    np.testing.assert_allclose(wa, wb, atol=1e-12)
    np.testing.assert_allclose(a, b, atol=1e-12)
