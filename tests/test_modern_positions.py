"""RoPE, ALiBi and the position comparison: offset-only scores, kept norms, the paper's slopes, torch parity."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attention_core import causal_mask, multi_head_attention, random_projection_weights, scaled_dot_product_attention
from attention_core import positions as pm  # the position methods (RoPE, ALiBi, learned, sinusoidal)
from attention_core.alibi import alibi_attention, alibi_bias, alibi_slopes, attention_with_bias
from attention_core.positional import sinusoidal_positional_encoding
from attention_core.rope import apply_rope, rope_angles, rope_attention, rope_frequencies, rope_scores

even_d = st.integers(1, 16).map(lambda h: 2 * h)


def rope_complex(x, positions, base=10000.0, pairing="interleaved"):
    """Reference: each pair as one complex number, multiplied by exp(i * position * theta)."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    z = x[..., 0::2] + 1j * x[..., 1::2] if pairing == "interleaved" else x[..., : d // 2] + 1j * x[..., d // 2 :]
    z = z * np.exp(1j * np.asarray(positions, dtype=np.float64)[:, None] * theta)
    out = np.empty(x.shape)
    if pairing == "interleaved":
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
    else:
        out[..., : d // 2], out[..., d // 2 :] = z.real, z.imag
    return out


def rope_torch_llama(x, positions, base=10000.0):
    """Meta's Llama reference: interleaved pairs viewed as complex numbers (torch.view_as_complex)."""
    d = x.shape[-1]
    freqs = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    freqs_cis = torch.polar(
        torch.ones(len(positions), d // 2, dtype=torch.float64), torch.outer(positions.to(torch.float64), freqs)
    )
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(-2)


def rope_torch_hf(x, positions, base=10000.0):
    """Hugging Face's formulation: halves, cos/sin duplicated, rotate_half."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    emb = torch.cat([torch.outer(positions.to(torch.float64), inv_freq)] * 2, dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


# ---------------------------------------------------------------- RoPE


@given(
    st.integers(0, 2**31),
    st.integers(1, 9),
    even_d,
    st.sampled_from(["interleaved", "halves"]),
    st.sampled_from([100.0, 10000.0, 500000.0]),
)
def test_rope_matches_complex_reference_and_torch(seed, T, d, pairing, base):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, T, d))
    pos = rng.integers(0, 4096, T)
    ours = apply_rope(x, pos, base, pairing)
    np.testing.assert_allclose(ours, rope_complex(x, pos, base, pairing), atol=1e-10)
    ref = rope_torch_llama if pairing == "interleaved" else rope_torch_hf
    np.testing.assert_allclose(ours, ref(torch.from_numpy(x), torch.from_numpy(pos), base).numpy(), atol=1e-9)


@given(
    st.integers(0, 2**31),
    st.integers(1, 9),
    st.integers(1, 9),
    even_d,
    st.sampled_from(["interleaved", "halves"]),
    st.integers(-1000, 100000),
)
def test_rope_scores_depend_only_on_the_offset(seed, T_q, T_k, d, pairing, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((T_q, d)), rng.standard_normal((T_k, d))
    pq, pk = rng.integers(0, 512, T_q), rng.integers(0, 512, T_k)
    s = rope_scores(q, k, pq, pk, pairing=pairing)
    shifted = rope_scores(q, k, pq + 1000, pk + 1000, pairing=pairing)
    np.testing.assert_allclose(shifted, s, atol=1e-9 * (1 + np.abs(s).max()))
    np.testing.assert_allclose(
        rope_scores(q, k, pq + shift, pk + shift, pairing=pairing), s, atol=1e-8 * (1 + np.abs(s).max())
    )
    # <R_m q, R_n k> = <q, R_(n-m) k>: rotate only the key, by the offset
    for i in range(T_q):
        direct = q[i] @ apply_rope(k, pk - pq[i], pairing=pairing).T / math.sqrt(d)
        np.testing.assert_allclose(s[i], direct, atol=1e-9 * (1 + np.abs(s).max()))


@given(st.integers(0, 2**31), st.integers(1, 9), even_d, st.sampled_from(["interleaved", "halves"]))
def test_rope_keeps_norms_and_position_zero_is_identity(seed, T, d, pairing):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, T, d))
    r = apply_rope(x, rng.integers(0, 10**6, T), pairing=pairing)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-10)
    pairs = (
        r[..., 0::2] ** 2 + r[..., 1::2] ** 2
        if pairing == "interleaved"
        else r[..., : d // 2] ** 2 + r[..., d // 2 :] ** 2
    )
    orig = (
        x[..., 0::2] ** 2 + x[..., 1::2] ** 2
        if pairing == "interleaved"
        else x[..., : d // 2] ** 2 + x[..., d // 2 :] ** 2
    )
    np.testing.assert_allclose(pairs, orig, rtol=1e-9, atol=1e-12)  # every pair keeps its own norm
    np.testing.assert_array_equal(apply_rope(x, np.zeros(T), pairing=pairing), x)


@given(st.integers(0, 2**31), st.integers(1, 8), even_d, st.floats(0.1, 10), st.booleans())
def test_rope_attention_is_sdpa_on_rotated_q_and_k(seed, T, d, temperature, causal):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 2, T, d))
    mask = causal_mask(T) if causal else None
    out, w = rope_attention(q, k, v, mask=mask, temperature=temperature)
    ref_out, ref_w = scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, mask=mask, temperature=temperature)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


def test_rope_frequencies_and_angles():
    np.testing.assert_allclose(rope_frequencies(8), [1, 0.1, 0.01, 0.001])
    np.testing.assert_allclose(rope_angles([0, 1, 2], 4, base=100.0), [[0, 0], [1, 0.1], [2, 0.2]])
    halves = apply_rope(np.arange(8.0)[None], [3], pairing="halves")
    perm = [0, 4, 1, 5, 2, 6, 3, 7]  # halves pairs (i, i + d/2) are interleaved pairs of the permuted vector
    np.testing.assert_allclose(halves[0, perm], apply_rope(np.arange(8.0)[perm][None], [3])[0])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: apply_rope(np.ones((4, 3))), "even"),
        (lambda: apply_rope(np.ones((4, 1))), "even"),
        (lambda: rope_frequencies(7), "even"),
        (lambda: rope_frequencies(True), "even"),
        (lambda: apply_rope(np.ones((4, 4)), pairing="llama"), "pairing"),
        (lambda: apply_rope(np.ones((4, 4)), base=1.0), "base"),
        (lambda: apply_rope(np.ones((4, 4)), base="x"), "base"),
        (lambda: apply_rope(np.ones((4, 4)), positions=[0, 1]), "positions"),
        (lambda: apply_rope(np.ones((4, 4)), positions=[0, 1, np.nan, 3]), "finite"),
        (lambda: apply_rope(np.ones(4)), "dimension"),
        (lambda: rope_scores(np.ones((2, 4)), np.ones((2, 6))), "share d"),
        (lambda: rope_attention(np.ones((2, 4)), np.ones((2, 4)), np.ones((3, 4))), "T_k"),
        (lambda: rope_attention(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), temperature=0), "temperature"),
        (lambda: rope_angles(np.ones((2, 2)), 4), "1-D"),
    ],
)
def test_rope_rejects_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- ALiBi


def paper_slopes(n):
    """The slopes as written in the ALiBi authors' code (ofirpress/attention_with_linear_biases)."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2) + paper_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def test_alibi_slopes_match_the_paper():
    np.testing.assert_allclose(alibi_slopes(8), [1 / 2**h for h in range(1, 9)])
    for H in range(1, 65):
        np.testing.assert_allclose(alibi_slopes(H), paper_slopes(H), rtol=1e-12)
        if H & (H - 1) == 0:
            np.testing.assert_allclose(alibi_slopes(H), [2 ** (-8 * h / H) for h in range(1, H + 1)], rtol=1e-12)


@given(st.integers(0, 2**31), st.integers(1, 10), st.integers(1, 16), st.floats(0.1, 10), st.booleans())
def test_alibi_distance_and_key_position_forms_give_the_same_softmax(seed, T, H, temperature, scaled):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, H, T, 4))
    mask = causal_mask(T)
    out_d, w_d = alibi_attention(q, k, v, mask=mask, form="distance", temperature=temperature, scaled=scaled)
    out_j, w_j = alibi_attention(q, k, v, mask=mask, form="key_position", temperature=temperature, scaled=scaled)
    np.testing.assert_allclose(w_d, w_j, atol=1e-12)
    np.testing.assert_allclose(out_d, out_j, atol=1e-12)
    # the two biases differ by -m * i, a constant on every row
    diff = alibi_bias(T, T, H, "distance") - alibi_bias(T, T, H, "key_position")
    np.testing.assert_allclose(diff, np.broadcast_to(diff[..., :1], diff.shape), atol=1e-12)


@given(st.integers(1, 12), st.integers(0, 12), st.integers(1, 16))
def test_alibi_bias_shape_and_decode_rows(T_q, extra, H):
    T_k = T_q + extra
    full = alibi_bias(T_k, T_k, H)
    part = alibi_bias(T_q, T_k, H)
    assert part.shape == (H, T_q, T_k)
    np.testing.assert_array_equal(part, full[:, T_k - T_q :])  # queries are the last T_q positions
    sym = alibi_bias(T_k, T_k, H, "symmetric")
    low = np.tril(np.ones((T_k, T_k), bool))
    np.testing.assert_array_equal(sym[:, low], full[:, low])
    np.testing.assert_array_equal(sym, np.swapaxes(sym, -1, -2))
    assert np.all(full[:, low] <= 0) and np.all(np.diagonal(full, axis1=1, axis2=2) == 0)


@given(st.integers(0, 2**31), st.integers(1, 9), st.integers(1, 8), st.sampled_from([2, 4, 8]), st.booleans())
def test_alibi_matches_torch_sdpa_with_a_float_attn_mask(seed, T, H, d_k, causal):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 2, H, T, d_k))
    form = "distance" if causal else "symmetric"
    mask = causal_mask(T) if causal else None
    out, _ = alibi_attention(q, k, v, mask=mask, form=form)
    bias = torch.from_numpy(alibi_bias(T, T, H, form))
    if causal:
        bias = bias.masked_fill(~torch.from_numpy(causal_mask(T)), float("-inf"))
    ref = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), attn_mask=bias)
    np.testing.assert_allclose(out, ref.numpy(), atol=1e-10)


@given(st.integers(0, 2**31), st.integers(1, 8), st.floats(0.1, 10))
def test_attention_with_zero_bias_is_plain_attention(seed, T, temperature):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 2, T, 4))
    mask = rng.random((T, T)) < 0.5
    a = attention_with_bias(q, k, v, np.zeros((T, T)), mask=mask, temperature=temperature)
    b = scaled_dot_product_attention(q, k, v, mask=mask, temperature=temperature)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, atol=1e-12)
        assert np.isfinite(x).all()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: alibi_slopes(0), "n_heads"),
        (lambda: alibi_slopes(2.5), "integer"),
        (lambda: alibi_bias(5, 4, 2), "T_q=5 must be <= T_k=4"),
        (lambda: alibi_bias(4, 4, 2, form="abs"), "form"),
        (lambda: alibi_bias(0, 4, 2), "T_q"),
        (lambda: alibi_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), "heads"),
        (lambda: alibi_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4))), "dimension"),
        (lambda: attention_with_bias(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 2))), "broadcast"),
        (
            lambda: attention_with_bias(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.full((3, 3), np.inf)),
            "finite",
        ),
        (lambda: attention_with_bias(np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 4))), "T_k"),
    ],
)
def test_alibi_rejects_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- the four methods side by side


@given(
    st.integers(0, 2**31),
    st.integers(1, 40),
    st.sampled_from([(8, 2), (16, 4), (12, 6)]),
    st.booleans(),
    st.sampled_from([100.0, 10000.0]),
)
def test_pair_scores_offset_only_for_rope_and_alibi(seed, P, dims, causal, base):
    d_model, d_k = dims
    rng = np.random.default_rng(seed)
    x_q, x_k = rng.standard_normal((2, d_model))
    w_q, w_k = rng.standard_normal((2, d_model, d_k))
    rope = pm.pair_scores("rope", x_q, x_k, w_q, w_k, P, base=base)
    assert pm.offset_profile(rope, causal).spread < 1e-9 * (1 + np.abs(rope).max())
    np.testing.assert_allclose(
        rope, rope_scores(np.tile(x_q @ w_q, (P, 1)), np.tile(x_k @ w_k, (P, 1)), base=base), atol=1e-12
    )
    alibi = pm.pair_scores("alibi", x_q, x_k, w_q, w_k, P, slope=0.25, symmetric=not causal)
    assert pm.offset_profile(alibi, causal).spread == 0.0
    assert alibi[P - 1, 0] == pytest.approx(float(x_q @ w_q @ (x_k @ w_k)) / math.sqrt(d_k) - 0.25 * (P - 1))
    pe = sinusoidal_positional_encoding(P, d_model, base).astype(np.float64)
    sin = pm.pair_scores("sinusoidal", x_q, x_k, w_q, w_k, P, base=base)
    np.testing.assert_allclose(sin, ((x_q + pe) @ w_q) @ ((x_k + pe) @ w_k).T / math.sqrt(d_k), atol=1e-10)


def test_added_positions_depend_on_absolute_positions():
    rng = np.random.default_rng(3)
    x_q, x_k = rng.standard_normal((2, 16))
    w_q, w_k = rng.standard_normal((2, 16, 4))
    table = pm.learned_position_table(64, 16, seed=1)
    for method in ("sinusoidal", "learned"):
        assert pm.offset_profile(pm.pair_scores(method, x_q, x_k, w_q, w_k, 32, table=table)).spread > 1.0


def test_offset_profile_groups_by_diagonal():
    toeplitz = np.subtract.outer(np.arange(5), np.arange(5)) * 2.0  # s[m, n] = 2 (m - n)
    prof = pm.offset_profile(toeplitz)
    np.testing.assert_array_equal(prof.offsets, np.arange(-4, 5))
    np.testing.assert_array_equal(prof.mean, -2.0 * prof.offsets)
    assert prof.spread == 0.0
    s = toeplitz.copy()
    s[3, 1] += 0.5  # offset -2
    causal = pm.offset_profile(s, causal=True)
    np.testing.assert_array_equal(causal.offsets, np.arange(-4, 1))
    assert causal.spread == 0.5 and causal.high[2] - causal.low[2] == 0.5


@given(
    st.integers(0, 2**31),
    st.integers(1, 10),
    st.sampled_from([(8, 1), (8, 2), (12, 3)]),
    st.sampled_from(["none", "causal"]),
)
def test_position_attention_matches_the_plain_paths(seed, T, dims, mask_kind):
    d_model, H = dims
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, d_model))
    w = random_projection_weights(d_model, seed % 1000)
    mask = causal_mask(T) if mask_kind == "causal" else None
    _, w_sin = pm.position_attention("sinusoidal", x, *w[:3], H, mask=mask)
    _, ref = multi_head_attention(x + sinusoidal_positional_encoding(T, d_model), *w, n_heads=H, mask=mask)
    np.testing.assert_allclose(w_sin, ref, atol=1e-10)
    table = pm.learned_position_table(16, d_model)
    _, w_learned = pm.position_attention("learned", x, *w[:3], H, mask=mask, table=table)
    _, ref = multi_head_attention(x + table[:T], *w, n_heads=H, mask=mask)
    np.testing.assert_allclose(w_learned, ref, atol=1e-10)
    _, w_alibi = pm.position_attention("alibi", x, *w[:3], H, mask=mask)
    q, k, v = (np.swapaxes((x @ wi).reshape(T, H, -1), 0, 1) for wi in w[:3])
    _, ref = alibi_attention(q, k, v, mask=mask, form="distance" if mask is not None else "symmetric")
    np.testing.assert_allclose(w_alibi, ref, atol=1e-12)
    _, w_rope = pm.position_attention("rope", x, *w[:3], H, mask=mask)
    _, ref = rope_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(w_rope, ref, atol=1e-12)


def test_learned_table_cannot_extrapolate():
    table = pm.learned_position_table(8, 4, seed=0)
    assert table.shape == (8, 4) and table.dtype == np.float32
    np.testing.assert_array_equal(pm.learned_position_table(8, 4, seed=0), table)
    np.testing.assert_array_equal(pm.lookup_positions(table, np.arange(8)), table)
    with pytest.raises(ValueError, match="position 8 has no row: the learned table has 8 rows"):
        pm.lookup_positions(table, np.arange(9))
    with pytest.raises(ValueError, match="cannot extrapolate"):
        pm.position_attention("learned", np.ones((9, 4)), *random_projection_weights(4)[:3], 2, table=table)
    with pytest.raises(ValueError, match="integers >= 0"):
        pm.lookup_positions(table, [-1])
    with pytest.raises(ValueError, match="integers"):
        pm.lookup_positions(table, [0.5])


def test_angles_beyond_training():
    # d = 2: one pair turning 1 rad per position
    assert pm.angles_beyond_training(4, 5, 2) == 1  # trained 0..3 rad; position 4 is at 4 rad
    assert pm.angles_beyond_training(8, 100, 2) == 0  # 7 rad > 2 pi: every angle was seen
    assert pm.angles_beyond_training(8, 8, 64) == 0  # nothing beyond the trained length
    counts = [pm.angles_beyond_training(L, 512, 64) for L in (2, 8, 64, 256)]
    assert counts == sorted(counts, reverse=True) and 0 < counts[-1] < counts[0] <= 32


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pm.pair_scores("nope", np.ones(4), np.ones(4), np.ones((4, 2)), np.ones((4, 2)), 4), "method"),
        (lambda: pm.pair_scores("rope", np.ones(4), np.ones(4), np.ones((4, 3)), np.ones((4, 3)), 4), "even"),
        (
            lambda: pm.pair_scores("learned", np.ones(4), np.ones(4), np.ones((4, 2)), np.ones((4, 2)), 4),
            "needs a table",
        ),
        (lambda: pm.pair_scores("alibi", np.ones(3), np.ones(4), np.ones((4, 2)), np.ones((4, 2)), 4), "d_model"),
        (lambda: pm.pair_scores("alibi", np.ones(4), np.ones(4), np.ones((4, 2)), np.ones((4, 2)), 0), "n_positions"),
        (lambda: pm.offset_profile(np.ones((2, 3))), "square"),
        (lambda: pm.learned_position_table(0, 4), "n_positions"),
        (lambda: pm.position_attention("rope", np.ones((3, 4)), *np.ones((3, 4, 4)), 4), "even"),
        (lambda: pm.angles_beyond_training(0, 4, 4), "train_len"),
    ],
)
def test_positions_reject_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_methods_listed():
    assert pm.METHODS == ("sinusoidal", "learned", "rope", "alibi")
