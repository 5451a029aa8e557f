"""Core: MultiHeadAttention (cross) vs PyTorch, the cross-attention runner, the read-outs, the class-notes heads."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_core.class_notes import purposeful_vs_random_heads
from attention_core.cross_attention import run_cross_attention
from attention_core.readout import (
    compare_runs,
    differing_settings,
    logit_std,
    relative_difference,
    sharpness,
    uniform_max_weight,
)
from attention_core.torch_attention import MultiHeadAttention, MultiHeadSelfAttention

TOL = dict(atol=2e-5, rtol=1e-4)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31), st.integers(1, 7), st.integers(1, 9), st.sampled_from([(8, 1), (8, 2), (12, 3), (16, 16)])
)
def test_multi_head_attention_cross_matches_pytorch_and_numpy(seed, T_q, T_k, dims):
    d_model, H = dims
    torch.manual_seed(seed % 10000)
    ref = torch.nn.MultiheadAttention(d_model, H, bias=False, batch_first=True).eval()
    W = ref.in_proj_weight.detach()
    w_q, w_k, w_v = (W[i * d_model : (i + 1) * d_model].T.numpy() for i in range(3))
    w_o = ref.out_proj.weight.detach().T.numpy()
    ours = MultiHeadAttention(d_model, H).load_numpy_weights(w_q, w_k, w_v, w_o).eval()
    x, mem = torch.randn(2, T_q, d_model), torch.randn(2, T_k, d_model)
    with torch.no_grad():
        out_ref, w_ref = ref(x, mem, mem, need_weights=True, average_attn_weights=False)
        out, w = ours(x, mem)
    assert w.shape == (2, H, T_q, T_k) and out.shape == (2, T_q, d_model)
    np.testing.assert_allclose(w.numpy(), w_ref.numpy(), **TOL)
    np.testing.assert_allclose(out.numpy(), out_ref.numpy(), **TOL)
    out_np, w_np = ac.multi_head_attention(x.numpy(), w_q, w_k, w_v, w_o, n_heads=H, kv=mem.numpy())
    np.testing.assert_allclose(w_np, w_ref.numpy(), **TOL)
    np.testing.assert_allclose(out_np, out_ref.numpy(), **TOL)


def test_self_attention_is_the_kv_equals_x_case_and_stays_compatible():
    torch.manual_seed(1)
    self_attn = MultiHeadSelfAttention(8, 2)
    assert isinstance(self_attn, MultiHeadAttention)
    general = MultiHeadAttention(8, 2)
    general.load_state_dict(self_attn.state_dict())  # same parameter names: checkpoints load either way
    assert list(self_attn.state_dict()) == ["W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"]
    x, mem = torch.randn(1, 5, 8), torch.randn(1, 3, 8)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    with torch.no_grad():
        a, wa = self_attn(x, mask)
        b, wb = general(x, x, mask=mask)
        c, wc = general(x, mask=mask)
        d, wd = self_attn(x, kv=mem)  # the old cross-attention call
        e, we = general(x, mem)
    for p, q in ((a, b), (a, c), (wa, wb), (d, e), (wd, we)):
        torch.testing.assert_close(p, q)
    assert wd.shape == (1, 2, 5, 3) and (wa[..., 0, 1:] == 0).all()
    with pytest.raises(ValueError, match="kv must be"):
        general(x, torch.randn(1, 3, 6))
    with pytest.raises(ValueError, match="not divisible"):
        MultiHeadAttention(10, 3)


def test_run_cross_attention_shapes_rows_and_parity():
    cfg = ac.WhatIf(input_kind="sentence", sentence="the cat sat on the mat", d_model=16, n_heads=4, seed=3)
    kv = cfg.replace(sentence="le chat est assis sur le tapis")
    run = run_cross_attention(cfg, kv)
    assert (run.T_q, run.T_k) == (6, 7) and run.tokens_kv[-1] == "tapis"
    assert run.weights.shape == (4, 6, 7) and run.output.shape == (6, 16) and run.q.shape == (4, 6, 4)
    np.testing.assert_allclose(run.weights.sum(-1), 1.0, atol=1e-5)
    out, w = ac.multi_head_attention(run.x_q, *ac.random_projection_weights(16, 3), n_heads=4, kv=run.x_kv)
    np.testing.assert_array_equal(w, run.weights)
    np.testing.assert_array_equal(out, run.output)
    # the same word gets the same vector on both sides ("the" twice in the queries)
    np.testing.assert_array_equal(run.x_q[0], run.x_q[4])
    rnd = run_cross_attention(
        cfg.replace(input_kind="random", seq_len=3), cfg.replace(input_kind="random", seq_len=11, seed=4)
    )
    assert rnd.weights.shape == (4, 3, 11) and rnd.tokens_q == ["q1", "q2", "q3"] and rnd.tokens_kv[-1] == "k11"
    long = run_cross_attention(cfg, kv.replace(sentence=" ".join(["w"] * 600), d_model=16))
    assert long.T_k == 512 and long.notices and long.notices[0].startswith("Key/value sequence:")
    with pytest.raises(ValueError, match="same d_model"):
        run_cross_attention(cfg, kv.replace(d_model=8, n_heads=2))
    with pytest.raises(ValueError, match="must be WhatIf"):
        run_cross_attention(cfg, "le chat")


@given(st.integers(0, 2**31), st.floats(0.01, 100))
def test_relative_difference_properties(seed, scale):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    r = relative_difference(b, a)
    assert r == pytest.approx(np.linalg.norm(b - a) / np.linalg.norm(a))
    assert relative_difference(scale * b, scale * a) == pytest.approx(r, rel=1e-9)  # scale-free
    assert relative_difference(a, a) == 0.0


def test_relative_difference_edges():
    z = np.zeros((2, 2))
    assert relative_difference(z, z) == 0.0 and relative_difference(np.ones((2, 2)), z) == math.inf
    with pytest.raises(ValueError, match="same shape"):
        relative_difference(np.ones(3), np.ones(4))


def test_uniform_max_weight_and_sharpness():
    assert uniform_max_weight(None, 4, 8) == 0.125
    causal = ac.causal_mask(4)
    assert uniform_max_weight(causal, 4, 4) == pytest.approx(np.mean([1, 1 / 2, 1 / 3, 1 / 4]))
    assert uniform_max_weight(np.zeros((2, 2), bool), 2, 2) == 0.0
    with pytest.raises(ValueError, match="mask must be bool"):
        uniform_max_weight(np.ones((2, 3)), 2, 2)
    u = 1 / 8
    assert sharpness(0.867, u) == "sharp"  # the temperature-0.1 case of issue #12: not "soft"
    assert sharpness(0.6, u) == "peaked" and sharpness(0.3, u) == "soft"
    assert sharpness(0.13, u) == "nearly uniform" and sharpness(1.0, 1.0) == "single key"
    assert sharpness(0.018, 1 / 512) == "nearly uniform"
    levels = [sharpness(m, u) for m in np.linspace(u, 1, 50)]
    order = ["nearly uniform", "soft", "peaked", "sharp"]
    assert [order.index(x) for x in levels] == sorted(order.index(x) for x in levels)  # monotone in m
    with pytest.raises(ValueError, match="must lie in"):
        sharpness(1.5, u)


def test_logit_std_matches_direct_computation():
    run = ac.run_whatif(ac.WhatIf(seq_len=6, d_model=16, n_heads=2, temperature=0.5, mask="causal"))
    got = logit_std(run.q, run.k, scaled=True, temperature=0.5, mask=run.mask)
    for h in range(2):
        s = (run.q[h] @ run.k[h].T / math.sqrt(8) / 0.5)[run.mask]
        assert got[h] == pytest.approx(float(s.std()), rel=1e-5)
    unscaled = logit_std(run.q, run.k, scaled=False, temperature=0.5, mask=run.mask)
    np.testing.assert_allclose(unscaled, got * math.sqrt(8), rtol=1e-5)
    assert logit_std(run.q[:, :1], run.k[:, :1]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="share H and d_k"):
        logit_std(run.q, run.k[:1])


def test_differing_settings_lists_only_what_matters():
    base = ac.WhatIf()
    assert differing_settings(base, base.replace(scaled=False)) == (("scaled", True, False),)
    assert differing_settings(base.replace(n_heads=1), base.replace(n_heads=8)) == (("n_heads", 1, 8),)
    assert differing_settings(base, base.replace(temperature=0.2, seed=3)) == (
        ("temperature", 1.0, 0.2),
        ("seed", 0, 3),
    )
    assert differing_settings(base, base.replace(sentence="a b")) == ()  # neither side reads a sentence
    assert differing_settings(base, base.replace(pad_count=3)) == ()  # nobody pads
    # one side pads: the mask differs, and the other side's pad count means nothing
    assert differing_settings(base, base.replace(mask="padding", pad_count=3)) == (("mask", "none", "padding"),)
    padded = base.replace(mask="padding")
    assert differing_settings(padded, padded.replace(pad_count=3)) == (("pad_count", 2, 3),)
    s = base.replace(input_kind="sentence")
    assert differing_settings(s, s.replace(seq_len=20, sentence="a b")) == (("sentence", s.sentence, "a b"),)
    # one side reads a sentence: its words set its length, and the other's sentence is not read
    assert differing_settings(base, s.replace(seq_len=20, sentence="a b")) == (("input_kind", "random", "sentence"),)
    one_hot = base.replace(input_kind="one_hot")
    assert differing_settings(base, one_hot.replace(pattern="a b")) == (("input_kind", "random", "one_hot"),)
    assert differing_settings(one_hot, one_hot.replace(pattern="a b")) == (("pattern", one_hot.pattern, "a b"),)
    with pytest.raises(ValueError, match="must be WhatIf"):
        differing_settings(base, {})


def test_compare_runs():
    a, b = ac.run_whatif(ac.WhatIf(scaled=True)), ac.run_whatif(ac.WhatIf(scaled=False))
    c = compare_runs(a, b, 1, 1)
    np.testing.assert_array_equal(c.weight_diff, b.weights[1] - a.weights[1])
    assert c.output_change == pytest.approx(np.linalg.norm(b.output - a.output) / np.linalg.norm(a.output), rel=1e-6)
    assert c.differing == (("scaled", True, False),)
    other = compare_runs(a, ac.run_whatif(ac.WhatIf(seq_len=5, n_heads=1)), 0, 0)
    assert other.weight_diff is None and other.output_diff is None and other.output_change is None
    with pytest.raises(ValueError, match="head_b=1 is outside"):
        compare_runs(a, ac.run_whatif(ac.WhatIf(n_heads=1)), 0, 1)


@pytest.mark.parametrize("scaled, temperature", [(True, 1.0), (False, 1.0), (True, 0.1), (True, 10.0)])
def test_purposeful_head_matches_the_class_notes_formula(scaled, temperature):
    demo = purposeful_vs_random_heads(scaled, temperature, seed=0)
    s = 10 / (math.sqrt(2) if scaled else 1) / temperature  # score of B3; A keys score 0
    b = math.exp(s) / (3 + math.exp(s))
    np.testing.assert_allclose(demo.purposeful_weights[:, 2], b, rtol=1e-5)
    assert demo.focus_on_b == pytest.approx(b, rel=1e-5)
    assert demo.labels == ["A1", "A2", "B3", "A4"] and demo.random_weights.shape == (2, 4, 4)
    np.testing.assert_allclose(demo.random_weights.sum(-1), 1.0, atol=1e-6)
    assert not np.array_equal(
        purposeful_vs_random_heads(seed=1).random_weights, purposeful_vs_random_heads().random_weights
    )
    with pytest.raises(ValueError, match="seed"):
        purposeful_vs_random_heads(seed=-1)
