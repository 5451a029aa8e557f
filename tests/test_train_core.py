"""Training core: config validation, tasks, head scores, determinism, parity, trajectories, the landmark."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.training import (
    TASKS,
    TrainConfig,
    Trainer,
    attention_on_b_score,
    head_scores,
    make_batch,
    prefix_matching_score,
    previous_token_score,
    probe_batch,
)
from attention_core.training.export import weights_npz
from attention_core.training.inspect import attention_parity, model_from_params, query_key_picture
from attention_core.training.tasks import PERIOD_MAX, PERIOD_MIN, heldout_batch
from attention_core.training.trajectory import find_phase_change, from_trainer, load_trajectory, save_trajectory
from tests.train_script import SORT_WITH_MLP, assert_script_matches_trainer

torch.set_num_threads(1)


def test_config_rejects_bad_values_with_what_is_allowed():
    with pytest.raises(ValueError, match="divisible"):
        TrainConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="between 1 and 2"):
        TrainConfig(n_layers=3)
    with pytest.raises(ValueError, match="not offered"):
        TrainConfig(task="induction_fixed")
    with pytest.raises(ValueError, match="context >= 10"):
        TrainConfig(task="induction", context=8)
    with pytest.raises(ValueError, match="lr"):
        TrainConfig(lr=float("nan"))


def test_clamped_gives_nearest_valid_config_and_notices():
    cfg, notes = TrainConfig.clamped(
        task="nope", d_model="30", n_heads="4", lr="inf", steps="99999", mlp="1", context="4", seed="abc"
    )
    assert cfg.task == "induction" and cfg.d_model == 30 and cfg.n_heads == 3 and cfg.lr == 1e-3
    assert cfg.steps == 5000 and cfg.mlp is True and cfg.context == 10 and cfg.seed == 0
    joined = " ".join(notes)
    for word in ("task='nope'", "n_heads=3", "lr='inf'", "steps=99999", "context >= 10", "seed='abc'"):
        assert word in joined
    assert TrainConfig.clamped(task="copy", lr="0.002")[0] == TrainConfig(task="copy", lr=0.002)
    assert TrainConfig.clamped()[1] == []


def test_fixed_period_induction_is_not_offered():
    assert not any("fixed" in t or "period" in t for t in TASKS)
    assert PERIOD_MIN < PERIOD_MAX
    for context in (10, 16, 32, 64):
        batch = make_batch(TrainConfig(context=context), torch.Generator().manual_seed(0), 512)
        periods = set(batch.period.tolist())
        assert len(periods) >= 2 and min(periods) == PERIOD_MIN and max(periods) <= min(PERIOD_MAX, context // 2)
    with pytest.raises(ValueError):
        TrainConfig(task="induction", context=9)


def test_induction_sequences_repeat_with_their_period_and_distinct_runs():
    b = make_batch(TrainConfig(), torch.Generator().manual_seed(3), 64)
    seq = torch.cat([b.tokens, b.targets[:, -1:]], dim=1).numpy()  # (B, T+1)
    for row, p in zip(seq, b.period.tolist()):
        assert np.array_equal(row[p:], row[:-p])
        assert len(set(row[:p].tolist())) == p  # distinct symbols in the run
    # accuracy counts exactly the repeated targets: target t + 1 >= p
    t = np.arange(b.tokens.shape[1])
    assert np.array_equal(b.scored.numpy(), t[None, :] + 1 >= b.period.numpy()[:, None])


@pytest.mark.parametrize("task", TASKS)
def test_every_task_batch_is_well_formed(task):
    cfg = TrainConfig(task=task, vocab=16, context=17)
    b = make_batch(cfg, torch.Generator().manual_seed(1), 8)
    assert b.tokens.shape == b.targets.shape == b.loss_mask.shape == (8, 17)
    assert b.tokens.max() <= cfg.vocab and b.loss_mask.any()
    x = b.tokens.numpy()
    if task in ("copy", "reverse", "sort"):
        half = 8
        src, ans = x[:, :half], b.targets.numpy()[:, half : 2 * half]
        want = {"copy": src, "reverse": src[:, ::-1], "sort": np.sort(src, axis=1)}[task]
        assert np.array_equal(ans, want) and (x[:, half] == cfg.vocab).all()
    if task == "previous":
        assert np.array_equal(b.targets.numpy()[:, 1:], x[:, :-1])
    if task == "find_b":
        assert ((x == 0).sum(1) == 1).all()
        assert np.array_equal(b.targets.numpy(), np.repeat(b.b_pos.numpy()[:, None], 17, 1))


def test_heldout_set_is_fixed_and_differs_from_training_batches():
    cfg = TrainConfig()
    assert torch.equal(heldout_batch(cfg).tokens, heldout_batch(cfg.replace(seed=5)).tokens)
    train = make_batch(cfg, torch.Generator().manual_seed(cfg.seed + 1), 256)
    assert not torch.equal(train.tokens, heldout_batch(cfg).tokens)


def _weights_to(targets: np.ndarray) -> np.ndarray:
    w = targets.astype(float) + 1e-12
    return w / w.sum(-1, keepdims=True)


def test_scores_on_hand_built_heads():
    T = 12
    prev = np.zeros((1, T, T))
    prev[0, 0, 0] = 1
    prev[0, np.arange(1, T), np.arange(T - 1)] = 1
    assert previous_token_score(prev) == pytest.approx(1.0)
    period = np.array([4])
    induct = np.zeros((1, T, T))
    for t in range(T):
        induct[0, t, t - 4 + 1 if t >= 4 else 0] = 1  # the token after the last copy
    assert prefix_matching_score(induct, period) == pytest.approx(1.0)
    assert prefix_matching_score(prev, period) == pytest.approx(0.0)
    on_b = np.zeros((2, T, T))
    on_b[0, :, 3] = 1
    on_b[1, :, 7] = 0.5
    on_b[1, :, 0] = 0.5
    assert attention_on_b_score(on_b, np.array([3, 7])) == pytest.approx(0.75)
    s = head_scores([np.stack([prev, induct], axis=1)], period)  # one layer, two heads
    assert s.shape == (1, 2, 3) and s[0, 0, 0] == pytest.approx(1) and s[0, 1, 1] == pytest.approx(1)
    assert np.isnan(s[..., 2]).all()
    with pytest.raises(ValueError):
        prefix_matching_score(induct, np.array([12]))


@settings(max_examples=30, deadline=None)
@given(st.integers(5, 20), st.integers(0, 2**16))
def test_scores_lie_in_unit_interval_for_any_causal_weights(T, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(3, T, T)) * 4
    logits[:, np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    period = rng.integers(2, T, size=3)
    for score in (
        previous_token_score(w),
        prefix_matching_score(w, period),
        attention_on_b_score(w, rng.integers(0, T, size=3)),
    ):
        assert -1e-12 <= float(score) <= 1 + 1e-12


def test_runs_are_bit_identical_however_the_steps_are_split():
    cfg = TrainConfig(steps=30, snapshot_every=10)
    a = Trainer(cfg).train(30)
    b = Trainer(cfg).train(7).train(0).train(23)
    assert a.train_loss == b.train_loss and len(a.snapshots) == len(b.snapshots) == 4
    assert all(np.array_equal(x.params, y.params) for x, y in zip(a.snapshots, b.snapshots))
    assert Trainer(cfg.replace(seed=1)).train(3).train_loss != a.train_loss[:3]


EXTRA = {"mlp": True, "layernorm": True, "pos": "sinusoidal", "n_layers": 1, "n_heads": 4, "d_model": 16}


@pytest.mark.parametrize("task, extra", [(t, {}) for t in TASKS] + [("induction", EXTRA), ("find_b", EXTRA)])
def test_parity_with_numpy_attention_below_1e_6(task, extra):
    cfg = TrainConfig(task=task, steps=6, snapshot_every=3, **extra)
    tr = Trainer(cfg).train(6)
    traj = from_trainer(tr)
    model = model_from_params(cfg, traj.params[-1])
    torch_w, numpy_w, diff = attention_parity(model, probe_batch(cfg).tokens)
    assert torch_w.shape == (cfg.n_layers, cfg.n_heads, cfg.context, cfg.context)
    assert diff < 1e-6
    assert attention_parity(tr.model, probe_batch(cfg).tokens, dtype=torch.float32)[2] < 1e-5
    np.testing.assert_allclose(numpy_w.sum(-1), 1.0, atol=1e-9)
    if cfg.task != "find_b":
        assert np.abs(np.triu(numpy_w, 1)).max() == 0  # causal


def test_parity_would_catch_a_different_attention():
    cfg = TrainConfig(steps=5)
    model = Trainer(cfg).train(5).model
    with torch.no_grad():
        model.blocks[0].attn.scaled = False  # the torch side now skips 1/sqrt(d_k), NumPy does not
    assert attention_parity(model, probe_batch(cfg).tokens)[2] > 1e-4


def test_query_key_picture_keeps_scores_and_draws_top_keys():
    cfg = TrainConfig(steps=10)
    model = Trainer(cfg).train(10).model
    pic = query_key_picture(model, probe_batch(cfg).tokens, layer=1, head=1, n_top=3)
    T = cfg.context
    assert pic.queries.shape == pic.keys.shape == (T, 2) and pic.top_keys.shape == (T, 3)
    assert np.all(pic.top_keys <= np.arange(T)[:, None])  # causal: never a future key
    assert pic.top_keys[0].tolist() == [0, -1, -1] and (pic.top_keys[2:] >= 0).all()
    assert 0 < pic.explained <= 1 + 1e-9
    assert np.allclose(pic.weights.sum(-1), 1, atol=1e-5)
    with pytest.raises(ValueError):
        query_key_picture(model, probe_batch(cfg).tokens, layer=2, head=0)


def test_trajectory_round_trip_and_phase_change(tmp_path):
    tr = Trainer(TrainConfig(task="copy", steps=20, snapshot_every=5)).train(20)
    traj = from_trainer(tr)
    back = load_trajectory(save_trajectory(traj, tmp_path / "run.npz"))
    assert back.cfg == traj.cfg and back.n_steps == 20 and list(back.steps) == [0, 5, 10, 15, 20]
    for name in ("params", "train_loss", "heldout_loss", "scores"):
        assert np.array_equal(getattr(back, name), getattr(traj, name), equal_nan=True)
    assert back.index_at(12) == 2 and back.snapshot(-1).step == 20
    steps = np.arange(0, 1000, 50)
    cliff = np.where(steps < 500, 0.1, 0.9)
    assert find_phase_change(steps, cliff) == 500
    assert find_phase_change(steps, np.linspace(0.1, 0.25, steps.size)) is None
    with pytest.raises(ValueError):
        find_phase_change(steps, cliff[:-1])


LANDMARK_STEPS = 1000


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_layers_form_an_induction_head(seed):
    tr = Trainer(TrainConfig(seed=seed, steps=LANDMARK_STEPS, snapshot_every=100)).train(LANDMARK_STEPS)
    best = max(s.scores[..., 1].max() for s in tr.snapshots)
    assert best > 0.8
    assert tr.snapshots[0].scores[..., 1].max() < 0.3


@pytest.mark.slow
def test_one_layer_never_gets_there():
    tr = Trainer(TrainConfig(n_layers=1, seed=0, steps=LANDMARK_STEPS, snapshot_every=100)).train(LANDMARK_STEPS)
    assert max(s.scores[..., 1].max() for s in tr.snapshots) < 0.3


SCRIPT_CONFIGS = [
    TrainConfig(steps=4),
    SORT_WITH_MLP.replace(pos="sinusoidal", steps=4),
    TrainConfig(task="find_b", n_layers=1, d_model=8, n_heads=1, batch=5, steps=4),
]


@pytest.mark.parametrize("cfg", SCRIPT_CONFIGS)
def test_standalone_script_prints_the_same_losses(cfg, tmp_path):
    assert_script_matches_trainer(cfg, tmp_path, steps=4)


def test_weights_npz_holds_every_parameter(tmp_path):
    import io

    cfg = TrainConfig(steps=2)
    traj = from_trainer(Trainer(cfg).train(2))
    data = np.load(io.BytesIO(weights_npz(cfg, traj.params[-1])))
    assert data["blocks.1.attn.W_q.weight"].shape == (32, 32) and "config" in data.files
    total = sum(data[k].size for k in data.files if k != "config")
    assert total == traj.params.shape[1] == 13376
