"""Efficient attention: GQA/MQA, the KV cache, sliding windows and the tiled online softmax (FlashAttention).

Each invariant is a hypothesis property on random shapes; GQA is checked against PyTorch's own
``F.scaled_dot_product_attention(..., enable_gqa=True)``.
"""

import tracemalloc

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attention_core import causal_mask, multi_head_attention, random_projection_weights, scaled_dot_product_attention
from attention_core.flash import flash_attention, flash_attention_steps
from attention_core.gqa import (
    DTYPE_BYTES,
    MODELS,
    MODELS_BY_NAME,
    ModelShape,
    allowed_kv_heads,
    gqa_self_attention,
    grouped_query_attention,
    kv_cache_bytes,
    repeat_kv,
)
from attention_core.kv_cache import KVCache, decode_with_cache
from attention_core.windows import (
    influence_by_layer,
    measured_receptive_field,
    reach_matrix,
    receptive_field_formula,
    sliding_window_mask,
    window_score_count,
)

torch.set_num_threads(1)
temperatures = st.sampled_from([0.3, 1.0, 2.5])


@st.composite
def head_counts(draw):
    """(H, G) with G dividing H."""
    H = draw(st.integers(1, 8))
    return H, draw(st.sampled_from(allowed_kv_heads(H)))


def rand(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- grouped-query attention


@given(
    head_counts(),
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 6),
    st.integers(0, 10**6),
    st.booleans(),
    temperatures,
    st.booleans(),
)
def test_gqa_equals_loop_over_heads_with_repeated_kv(hg, T_q, T_k, d, seed, scaled, temperature, masked):
    H, G = hg
    q, k, v = rand(seed, 2, H, T_q, d), rand(seed + 1, 2, G, T_k, d), rand(seed + 2, 2, G, T_k, d + 1)
    mask = np.random.default_rng(seed).random((T_q, T_k)) < 0.7 if masked else None
    out, w = grouped_query_attention(q, k, v, mask=mask, scaled=scaled, temperature=temperature)
    assert out.shape == (2, H, T_q, d + 1) and w.shape == (2, H, T_q, T_k)
    k_rep, v_rep = repeat_kv(k, H // G), repeat_kv(v, H // G)
    for h in range(H):
        ref_out, ref_w = scaled_dot_product_attention(
            q[:, h], k_rep[:, h], v_rep[:, h], mask=mask, scaled=scaled, temperature=temperature
        )
        np.testing.assert_allclose(out[:, h], ref_out, atol=1e-12)
        np.testing.assert_allclose(w[:, h], ref_w, atol=1e-12)
        np.testing.assert_array_equal(k_rep[:, h], k[:, h // (H // G)])  # query head h reads KV head h // (H/G)


@given(head_counts(), st.integers(1, 6), st.integers(1, 6), st.integers(0, 10**6), st.booleans())
def test_gqa_matches_torch_enable_gqa(hg, T, d, seed, causal):
    H, G = hg
    q, k, v = rand(seed, 1, H, T, d), rand(seed + 1, 1, G, T, d), rand(seed + 2, 1, G, T, d)
    out, _ = grouped_query_attention(q, k, v, mask=causal_mask(T) if causal else None)
    ref = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=causal, enable_gqa=True)
    np.testing.assert_allclose(out, ref.numpy(), atol=1e-10)


@given(
    st.sampled_from([(8, 1), (8, 2), (12, 3), (16, 4), (6, 6)]),
    st.integers(1, 6),
    st.integers(0, 10**6),
    st.booleans(),
    temperatures,
)
def test_gqa_layer_with_all_kv_heads_is_multi_head_attention(dh, T, seed, causal, temperature):
    d_model, H = dh
    x = rand(seed, T, d_model)
    w = random_projection_weights(d_model, seed % 1000)
    mask = causal_mask(T) if causal else None
    out, weights = gqa_self_attention(x, *w, n_heads=H, n_kv_heads=H, mask=mask, temperature=temperature)
    ref, ref_w = multi_head_attention(x, *w, n_heads=H, mask=mask, temperature=temperature)
    np.testing.assert_allclose(out, ref, atol=1e-5)
    np.testing.assert_allclose(weights, ref_w, atol=1e-6)


def test_mqa_shares_one_key_per_query_head():
    q, k, v = rand(0, 4, 3, 2), rand(1, 1, 5, 2), rand(2, 1, 5, 2)
    _, w = grouped_query_attention(q, k, v)
    for h in range(4):
        np.testing.assert_allclose(w[h], scaled_dot_product_attention(q[h], k[0], v[0])[1])


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: grouped_query_attention(rand(0, 6, 2, 2), rand(1, 4, 2, 2), rand(2, 4, 2, 2)),
            r"allowed n_kv_heads: \[1, 2, 3, 6\]",
        ),
        (
            lambda: grouped_query_attention(rand(0, 4, 2, 2), rand(1, 2, 2, 2), rand(2, 1, 2, 2)),
            "same number of key/value heads",
        ),
        (lambda: grouped_query_attention(rand(0, 2, 2), rand(1, 2, 2), rand(2, 2, 2)), "at least 3"),
        (
            lambda: grouped_query_attention(
                rand(0, 2, 2, 2), rand(1, 1, 2, 2), rand(2, 1, 2, 2), mask=np.ones((3, 3), bool)
            ),
            "broadcast",
        ),
        (
            lambda: gqa_self_attention(rand(0, 3, 8), *random_projection_weights(8, 0), n_heads=4, n_kv_heads=2),
            r"G \* d_k",
        ),
        (lambda: kv_cache_bytes(0, 8, 128, 4096), "layers=0"),
        (lambda: MODELS[0].cache_bytes(10, dtype="float8"), "dtype='float8'"),
        (lambda: MODELS[0].cache_bytes(10, kv_heads=5), "allowed n_kv_heads"),
        (lambda: ModelShape("x", 1, 6, 4, 8, 16, None, "-"), "does not divide"),
    ],
)
def test_gqa_bad_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_kv_cache_bytes_formula_and_published_shapes():
    llama70 = MODELS_BY_NAME["Llama-2-70B"]
    # 2 x 80 layers x 8 KV heads x 128 x 4096 tokens x 2 bytes = 1 342 177 280 bytes (1.34 GB)
    assert llama70.cache_bytes(4096, 1, "float16") == 2 * 80 * 8 * 128 * 4096 * 2 == 1_342_177_280
    assert llama70.cache_bytes(4096, kv_heads=64) == 8 * llama70.cache_bytes(4096)  # MHA would need 8x
    assert MODELS_BY_NAME["Llama-2-7B"].cache_bytes(4096) == 2 * 32 * 32 * 128 * 4096 * 2
    mistral = MODELS_BY_NAME["Mistral-7B (v0.1)"]
    assert mistral.cache_bytes(32768) == mistral.cache_bytes(4096)  # rolling buffer: the window, not the context
    assert mistral.cache_bytes(32768, rolling=False) == 8 * mistral.cache_bytes(4096)
    assert kv_cache_bytes(12, 12, 64, 1024, 3, DTYPE_BYTES["float32"]) == 2 * 12 * 12 * 64 * 1024 * 3 * 4
    for m in MODELS:
        v = m.variants()
        assert list(v.values())[0] == m.heads and list(v.values())[-1] == 1 and m.heads % list(v.values())[1] == 0


# ---- the KV cache


@given(
    st.sampled_from([(8, 1, 1), (8, 2, 2), (8, 2, 1), (12, 4, 2), (16, 4, 4), (12, 6, 3)]),
    st.integers(1, 9),
    st.integers(0, 10**6),
    st.booleans(),
    temperatures,
)
def test_decoding_with_cache_equals_one_causal_pass(shape, T, seed, scaled, temperature):
    d_model, H, G = shape
    x = rand(seed, T, d_model)
    w_q, w_k, w_v, w_o = random_projection_weights(d_model, seed % 1000)
    cols = G * (d_model // H)
    run = decode_with_cache(
        x, w_q, w_k[:, :cols], w_v[:, :cols], w_o, n_heads=H, n_kv_heads=G, scaled=scaled, temperature=temperature
    )
    ref, ref_w = gqa_self_attention(
        x, w_q, w_k[:, :cols], w_v[:, :cols], w_o, H, G, mask=causal_mask(T), scaled=scaled, temperature=temperature
    )
    np.testing.assert_allclose(run.output, ref, atol=1e-5)
    if G == H:
        mha, _ = multi_head_attention(
            x, w_q, w_k, w_v, w_o, H, mask=causal_mask(T), scaled=scaled, temperature=temperature
        )
        np.testing.assert_allclose(run.output, mha, atol=1e-5)
    for step in run.steps:  # each step: one new q, k, v row; t rows reused; its weights are row t of the full map
        assert step.q.shape == (H, d_model // H) and step.k.shape == (G, d_model // H) and step.reused == step.t
        np.testing.assert_allclose(step.weights, ref_w[:, step.t, : step.t + 1], atol=1e-6)
    assert run.k.shape == (G, T, d_model // H) and run.cache_bytes == 2 * G * T * (d_model // H) * run.k.itemsize


def test_kv_cache_rejects_bad_use():
    cache = KVCache(2, 3, 3, capacity=1)
    cache.append(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="full"):
        cache.append(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="expected k"):
        KVCache(2, 3, 3, capacity=2).append(np.zeros((3, 3)), np.zeros((2, 3)))
    w = random_projection_weights(8, 0)
    with pytest.raises(ValueError, match="allowed n_kv_heads"):
        decode_with_cache(rand(0, 3, 8), *w, n_heads=4, n_kv_heads=3)
    with pytest.raises(ValueError, match="not divisible"):
        decode_with_cache(rand(0, 3, 8), *w, n_heads=3)
    with pytest.raises(ValueError, match="at least one token"):
        decode_with_cache(np.zeros((0, 8)), *w, n_heads=2)
    with pytest.raises(ValueError, match="temperature"):
        decode_with_cache(rand(0, 3, 8), *w, n_heads=2, temperature=0)


# ---- sliding windows


@given(st.integers(1, 40), st.integers(1, 45), st.integers(1, 8))
def test_receptive_field_is_L_times_w_minus_1_plus_1(T, w, L):
    measured = measured_receptive_field(T, w, L)
    assert measured[0] == 1
    assert [int(n) for n in measured[1:]] == [receptive_field_formula(w, layer, T) for layer in range(1, L + 1)]
    reach = reach_matrix(T, w, L)  # every query, by full boolean matrix powers
    np.testing.assert_array_equal(reach.sum(axis=1), np.minimum(np.arange(T) + 1, L * (w - 1) + 1))
    np.testing.assert_array_equal(reach[-1], influence_by_layer(T, w, L)[-1])
    assert not np.triu(reach, 1).any()  # still causal: nothing from the future


@given(st.integers(1, 30), st.integers(1, 35))
def test_sliding_window_mask(T, w):
    m = sliding_window_mask(T, w)
    assert m.dtype == bool and m.shape == (T, T)
    np.testing.assert_array_equal(m.sum(axis=1), np.minimum(np.arange(T) + 1, w))
    if w >= T:
        np.testing.assert_array_equal(m, causal_mask(T))


@given(st.integers(1, 40), st.integers(1, 45))
def test_window_score_count_is_the_masks_allowed_cells(T, w):
    """T w - w(w - 1)/2, not T w: the first w - 1 queries see fewer than w keys (T = 8, w = 3: 21, not 24)."""
    n = window_score_count(T, w)
    assert n == int(sliding_window_mask(T, w).sum()) == sum(min(i + 1, w) for i in range(T))
    if w >= T:
        assert n == int(causal_mask(T).sum()) == T * (T + 1) // 2
    else:
        assert (n < T * w) == (w > 1)
    assert window_score_count(8, 3) == 21 and window_score_count(8, 8) == 36 == window_score_count(8, 100)


@pytest.mark.parametrize(
    "call",
    [
        lambda: sliding_window_mask(4, 0),
        lambda: sliding_window_mask(0, 2),
        lambda: receptive_field_formula(3, 0),
        lambda: influence_by_layer(4, 2, 2, query=4),
        lambda: reach_matrix(4, 2, -1),
        lambda: sliding_window_mask(4, 2.5),
    ],
)
def test_window_bad_arguments_raise(call):
    with pytest.raises(ValueError, match="not allowed|must be an integer"):
        call()


# ---- the tiled online softmax


@given(
    st.integers(1, 24),
    st.integers(1, 24),
    st.integers(1, 8),
    st.integers(1, 30),
    st.integers(0, 10**6),
    st.sampled_from(["none", "causal", "random", "random+causal"]),
    st.booleans(),
    temperatures,
    st.sampled_from([1.0, 200.0]),
)
def test_flash_equals_full_attention_for_any_tile(T_q, T_k, d, tile, seed, mask_kind, scaled, temperature, boost):
    q, k, v = rand(seed, 2, T_q, d) * boost, rand(seed + 1, 2, T_k, d), rand(seed + 2, 2, T_k, d + 2)
    mask = np.random.default_rng(seed).random((T_q, T_k)) < 0.6 if "random" in mask_kind else None
    causal = "causal" in mask_kind
    full_mask = mask
    if causal:
        below = np.arange(T_q)[:, None] >= np.arange(T_k)[None, :]
        full_mask = below if mask is None else mask & below
    ref, _ = scaled_dot_product_attention(q, k, v, mask=full_mask, scaled=scaled, temperature=temperature)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow, 0/0 or NaN (underflow is fine)
        out = flash_attention(q, k, v, mask=mask, causal=causal, tile_size=tile, scaled=scaled, temperature=temperature)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, atol=1e-9, rtol=1e-7)


def test_flash_fully_masked_rows_are_zero_not_nan():
    q, k, v = rand(0, 4, 3), rand(1, 6, 3), rand(2, 6, 2)
    mask = np.ones((4, 6), bool)
    mask[1] = False
    out = flash_attention(q, k, v, mask=mask, tile_size=4)
    np.testing.assert_array_equal(out[1], 0)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, mask=mask)[0], atol=1e-12)


@given(st.integers(1, 20), st.integers(1, 25), st.integers(0, 10**6), st.booleans())
def test_stepper_records_the_running_max_sum_and_rescale(T, tile, seed, causal):
    q, k, v = rand(seed, T, 3) * 5, rand(seed + 1, T, 3), rand(seed + 2, T, 3)
    run = flash_attention_steps(q, k, v, causal=causal, tile_size=tile)
    np.testing.assert_allclose(run.output, flash_attention(q, k, v, causal=causal, tile_size=tile), atol=1e-12)
    assert len(run.steps) == -(-T // tile) and run.steps[-1].stop == T
    logits = q @ k.T / np.sqrt(3)
    if causal:
        logits = np.where(causal_mask(T), logits, -np.inf)
    for s in run.steps:
        np.testing.assert_allclose(s.m, logits[:, : s.stop].max(axis=1))  # running max = max over the keys seen
        m_safe = np.where(np.isfinite(s.m), s.m, 0)
        np.testing.assert_allclose(s.l, np.exp(logits[:, : s.stop] - m_safe[:, None]).sum(axis=1), rtol=1e-10)
        np.testing.assert_allclose(s.rescale, np.exp(s.m_before - m_safe))
        assert np.all(s.rescale <= 1)
        rose = np.isfinite(s.m_before) & (s.m > s.m_before)
        np.testing.assert_array_equal(s.rescaled, rose)
        assert np.all(s.rescale[rose] < 1) or np.all(s.m[rose] - s.m_before[rose] < 1e-15)
        assert np.all(s.rescale[np.isfinite(s.m_before) & ~rose] == 1)  # unchanged max: factor 1, nothing rescaled
    assert run.tile_bytes == T * min(tile, T) * 8 and run.full_bytes == T * T * 8


def test_flash_never_allocates_t_by_t():
    T, d = 2048, 64
    q, k, v = (np.random.default_rng(i).standard_normal((T, d), dtype=np.float32) for i in range(3))
    full_bytes = T * T * 4  # one float32 T x T matrix: 16 MiB
    peaks = {}
    for name, fn in (
        ("tiled", lambda: flash_attention(q, k, v, causal=True, tile_size=64)),
        ("full", lambda: scaled_dot_product_attention(q, k, v, mask=causal_mask(T))),
    ):
        tracemalloc.start()
        fn()
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks["full"] >= full_bytes  # the full version holds at least one T x T matrix
    assert peaks["tiled"] < full_bytes / 4, peaks  # the tiled one never comes near it


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 2), rand(2, 3, 2), tile_size=0), "tile_size=0"),
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 3), rand(2, 3, 2)), "share d_k"),
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 2), rand(2, 4, 2)), "same number of tokens T_k"),
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 2), rand(2, 3, 2), mask=np.ones((2, 2), bool)), "broadcast"),
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 2), rand(2, 3, 2), mask=np.ones((3, 3))), "boolean"),
        (lambda: flash_attention(rand(0, 3, 2), rand(1, 3, 2), rand(2, 3, 2), causal="yes"), "causal must be"),
        (lambda: flash_attention(rand(0, 3, 2) * np.nan, rand(1, 3, 2), rand(2, 3, 2)), "finite"),
        (lambda: flash_attention_steps(rand(0, 2, 3, 2), rand(1, 2, 3, 2), rand(2, 2, 3, 2)), "one head"),
    ],
)
def test_flash_bad_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- the pages' views and their caches (ui/compute.py declares every cached computation, issue #11)


def test_views_reject_a_run_they_cannot_use():
    from attention_core import WhatIf, run_whatif
    from attention_core.efficient_views import flash_view
    from attention_core.position_views import positions_view

    with pytest.raises(ValueError, match="unmasked run"):
        flash_view(run_whatif(WhatIf(mask="causal")), "causal", 0, 2)
    with pytest.raises(ValueError, match="mask"):  # a mask name WhatIf does not have, not "no mask"
        flash_view(run_whatif(WhatIf()), "causal padding", 0, 2)
    with pytest.raises(ValueError, match="without positional encoding"):
        positions_view(run_whatif(WhatIf(positional=True)), "rope", 10000.0, 6, 0)


@pytest.mark.parametrize("mask", ["none", "causal", "padding", "causal+padding"])
def test_cached_views_are_the_views_of_the_shared_run(mask):
    from attention_core import WhatIf, run_whatif
    from attention_core.efficient_views import flash_view
    from attention_core.position_views import positions_view
    from attention_core.sinks_linear_views import linear_view
    from ui.compute import cached_flash_view, cached_linear_view, cached_positions_view, cached_run
    from ui.server.cache import cache_report

    cfg = WhatIf(mask=mask, pad_count=2, positional=True, seed=3)
    fv = cached_flash_view(cfg, 1, 3)
    assert fv is cached_flash_view(cfg, 1, 3)  # a hit returns the stored view
    ref = flash_view(run_whatif(cfg.replace(mask="none")), mask, 1, 3)
    np.testing.assert_array_equal(fv.run.output, ref.run.output)
    assert fv.mask_note == ref.mask_note and fv.max_diff < 1e-5
    pv = cached_positions_view(cfg, "alibi", 10000.0, 4, 0)
    assert pv.causal == ("causal" in mask)
    np.testing.assert_array_equal(
        pv.weights, positions_view(run_whatif(cfg.replace(positional=False)), "alibi", 10000.0, 4, 0).weights
    )
    lv = cached_linear_view(cfg, 2)
    np.testing.assert_array_equal(lv.softmax_weights, cached_run(cfg.replace(positional=False)).weights[2])
    assert lv.softmax_weights.dtype == np.float32 and lv.causal == ("causal" in mask)
    assert linear_view(run_whatif(cfg.replace(positional=False)), 2).diff_recurrent < 1e-10
    names = {r["name"] for r in cache_report()}
    for view in ("positions", "decode", "window", "flash", "sinks", "streaming", "linear", "ready_snapshot"):
        assert f"ui.compute.cached_{view}_view" in names
    assert "ui.compute.cached_ready_trajectory" in names


def test_rescale_note_says_what_happened():
    """The table's "rescale" column: the factor e^(m - m') only when the running max rose, else why not."""
    q = np.ones((1, 1))
    k = np.array([[1.0], [0.0], [3.0], [-2.0]])  # logits 1, 0, 3, -2 for the one query (d_k = 1: no scaling)
    mask = np.array([[False, True, True, True]])  # the first tile of one key is fully masked for the query
    steps = flash_attention_steps(q, k, k, mask=mask, tile_size=1).steps
    assert [s.rescale_note(0) for s in steps] == [
        "— (all keys masked so far)",
        "— (first allowed keys)",
        f"× {np.exp(-3.0):.4g} = e^(-3)",
        "— (max unchanged)",
    ]
    assert [bool(s.rescaled[0]) for s in steps] == [False, False, True, False]
    assert steps[3].rescale[0] == 1.0 and steps[1].rescale[0] == 0.0  # the numbers the old column showed


@pytest.mark.parametrize("tile", [1, 3, 8, 11])
def test_flash_view_rescaled_rows_are_the_rows_whose_tile_max_rises(tile):
    """A row is rescaled when some later tile holds a larger score than every earlier tile (brute force)."""
    from attention_core import WhatIf, run_whatif
    from attention_core.efficient_views import flash_view

    cfg = WhatIf(seq_len=11, d_model=16, n_heads=2, seed=4)
    run = run_whatif(cfg)
    view = flash_view(run, "none", 1, tile)
    q, k = run.q[1].astype(np.float64), run.k[1].astype(np.float64)
    s = q @ k.T / np.sqrt(q.shape[1])  # (T, T)
    tile_max = np.stack([s[:, j : j + tile].max(1) for j in range(0, s.shape[1], tile)], 1)  # (T, tiles)
    rises = (tile_max[:, 1:] > np.maximum.accumulate(tile_max, 1)[:, :-1]).any(1)  # (T,)
    assert view.rescaled_rows.dtype == bool and view.rescaled_rows.tolist() == rises.tolist()
    assert tile < 11 or not view.rescaled_rows.any()
