"""RoPE in the Train page's model: config, the torch rotation vs attention_core.rope, training, parity, the script."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.rope import apply_rope
from attention_core.training import TrainConfig, Trainer, build_model, flat_parameters, positional_kinds, probe_batch
from attention_core.training.inspect import attention_parity, model_from_params, query_key_picture
from attention_core.training.rotary import RotarySelfAttention, rope_torch
from attention_core.training.trajectory import from_trainer
from tests.train_script import SORT_WITH_MLP, assert_script_matches_trainer

torch.set_num_threads(1)

ROPE = TrainConfig(pos="rope", steps=6, snapshot_every=3)


def test_rope_is_offered_and_odd_head_widths_are_rejected_with_a_message():
    assert "rope" in positional_kinds()
    with pytest.raises(ValueError, match="d_model / n_heads must be even"):
        TrainConfig(pos="rope", d_model=12, n_heads=4)  # d_k = 3
    with pytest.raises(ValueError, match="even head width"):
        RotarySelfAttention(12, 4)
    with pytest.raises(ValueError, match="must be even"):
        rope_torch(torch.zeros(4, 5))
    TrainConfig(pos="learned", d_model=12, n_heads=4)  # odd d_k is fine without rope


def test_clamped_makes_rope_head_widths_even_with_a_notice():
    cfg, notes = TrainConfig.clamped(pos="rope", d_model="12", n_heads="4")
    assert (cfg.d_model, cfg.n_heads, cfg.d_k) == (12, 3, 4)
    assert notes == ["d_model=12 / n_heads=4 = 3 is odd and rope needs an even d_k; using n_heads=3"]
    cfg, notes = TrainConfig.clamped(pos="rope", d_model="9", n_heads="1")
    assert (cfg.d_model, cfg.n_heads) == (10, 1) and "d_model=10" in notes[0]
    cfg, notes = TrainConfig.clamped(pos="rope", d_model="30", n_heads="4")  # divisors 1, 2, 3: 3 gives d_k=10
    assert (cfg.n_heads, cfg.d_k) == (3, 10) and len(notes) == 1
    assert TrainConfig.clamped(pos="rope", d_model="32", n_heads="4") == (TrainConfig(pos="rope", n_heads=4), [])


@settings(max_examples=30, deadline=None)
@given(T=st.integers(1, 40), half=st.integers(1, 16), lead=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_torch_rotation_equals_attention_core_apply_rope(T, half, lead, seed):
    x = np.random.default_rng(seed).normal(size=(lead, 2, T, 2 * half)) * 3
    ours = rope_torch(torch.from_numpy(x)).numpy()  # float64
    np.testing.assert_allclose(ours, apply_rope(x), rtol=0, atol=1e-12)
    ours32 = rope_torch(torch.from_numpy(x.astype(np.float32))).numpy()
    assert ours32.dtype == np.float32
    np.testing.assert_allclose(ours32, apply_rope(x.astype(np.float32)), rtol=0, atol=1e-5)
    if T > 1 and half > 1:  # (d = 2 or a single position: the two pairings coincide)
        assert not np.allclose(apply_rope(x, pairing="halves"), ours)  # interleaved, not Llama's halves


def test_rope_model_adds_no_positions_and_its_scores_see_only_offsets():
    model = build_model(ROPE)
    assert model.pos_emb is None and isinstance(model.blocks[0].attn, RotarySelfAttention)
    assert sum(p.numel() for p in model.parameters()) == sum(
        p.numel() for p in build_model(ROPE.replace(pos="sinusoidal")).parameters()
    )  # no position table
    # the same vector at every position: rope scores depend on the positions only through the offset
    attn = model.blocks[0].attn
    x = torch.randn(1, 1, 32).expand(1, 12, 32)  # (B, T, d_model) the same vector at every position
    _, w = attn(x, None)  # (1, H, T, T), no mask
    logits = torch.log(w[0])  # (H, T, T) up to a per-row constant
    offsets = logits[:, 5, :] - logits[:, 5, 5:6]  # row 5 relative to its diagonal
    shifted = logits[:, 8, 3:] - logits[:, 8, 8:9]  # row 8, keys 3.. (offset -5 .. +3 like row 5's keys 0..8)
    torch.testing.assert_close(offsets[:, :9], shifted[:, :9], rtol=0, atol=1e-5)


def test_rope_training_is_deterministic_and_not_the_learned_run():
    a = Trainer(ROPE).train(6)
    b = Trainer(ROPE).train(2).train(0).train(4)
    assert a.train_loss == b.train_loss and len(a.snapshots) == 3
    assert all(np.array_equal(x.params, y.params) for x, y in zip(a.snapshots, b.snapshots))
    assert Trainer(ROPE.replace(pos="learned")).train(6).train_loss != a.train_loss
    assert Trainer(ROPE.replace(seed=1)).train(2).train_loss != a.train_loss[:2]


@pytest.mark.parametrize(
    "extra", [{}, {"task": "find_b", "mlp": True, "layernorm": True, "n_layers": 1, "n_heads": 4, "d_model": 16}]
)
def test_rope_parity_with_numpy_attention_below_1e_6(extra):
    cfg = ROPE.replace(**extra)
    tr = Trainer(cfg).train(6)
    model = model_from_params(cfg, from_trainer(tr).params[-1])
    torch_w, numpy_w, diff = attention_parity(model, probe_batch(cfg).tokens)
    assert torch_w.shape == (cfg.n_layers, cfg.n_heads, cfg.context, cfg.context)
    assert diff < 1e-6
    assert attention_parity(tr.model, probe_batch(cfg).tokens, dtype=torch.float32)[2] < 1e-5
    np.testing.assert_allclose(numpy_w.sum(-1), 1.0, atol=1e-9)


def unrotated_twin(model):
    """The same weights without RoPE: a sinusoidal model whose position table is dropped (same layer-0 input)."""
    plain = model_from_params(ROPE.replace(pos="sinusoidal"), flat_parameters(model))
    plain.pos_emb = None
    return plain


def test_rope_parity_would_catch_a_missing_rotation():
    model = Trainer(ROPE).train(6).model
    tokens = probe_batch(ROPE).tokens
    with torch.no_grad():
        _, plain_w = unrotated_twin(model)(tokens)
    _, numpy_w, _ = attention_parity(model, tokens)
    assert np.abs(plain_w[0][0].numpy() - numpy_w[0]).max() > 1e-3


def test_query_key_picture_of_a_rope_head_uses_the_rotated_vectors():
    model = Trainer(ROPE).train(6).model
    tokens = probe_batch(ROPE).tokens
    pic = query_key_picture(model, tokens, layer=0, head=1, n_top=1)
    assert pic.queries.shape == (ROPE.context, 2) and np.allclose(pic.weights.sum(-1), 1, atol=1e-5)
    assert pic.top_keys[:, 0].tolist() == np.argmax(pic.weights, axis=1).tolist()
    plain = query_key_picture(unrotated_twin(model), tokens, layer=0, head=1, n_top=1)  # same q, k unrotated
    assert np.abs(np.abs(pic.queries) - np.abs(plain.queries)).max() > 1e-3


SCRIPT_CONFIGS = [ROPE.replace(steps=4), SORT_WITH_MLP.replace(pos="rope", d_model=16, steps=4)]


@pytest.mark.parametrize("cfg", SCRIPT_CONFIGS)
def test_standalone_script_prints_the_same_losses_with_rope(cfg, tmp_path):
    printed = assert_script_matches_trainer(cfg, tmp_path, steps=4)
    learned = Trainer(cfg.replace(pos="learned")).train(4).train_loss
    assert np.abs(np.array(learned) - printed).max() > 1e-4  # the script really ran rope
