"""Encoder / decoder blocks: NumPy and from-scratch torch against PyTorch's own layers."""

import numpy as np
import pytest
import torch

from attention_core.torch_transformer import DecoderBlock, EncoderBlock, load_block, to_torch_reference
from attention_core.transformer import block_params, decoder_block, encoder_block, layer_norm

TOL = dict(atol=3e-5, rtol=1e-4)


def test_layer_norm_rows():
    x = np.random.default_rng(0).standard_normal((4, 6)) * 3 + 2
    y = layer_norm(x, np.ones(6), np.zeros(6))
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, atol=1e-4)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("d_model, heads, T", [(8, 2, 5), (16, 4, 9), (12, 3, 1)])
def test_encoder_block_matches_pytorch(norm_first, d_model, heads, T):
    params = block_params(d_model, seed=3)
    x = np.random.default_rng(1).standard_normal((T, d_model)).astype(np.float32)
    steps = encoder_block(x, params, heads, norm_first=norm_first)
    ours_np = steps.out
    ours_t = load_block(EncoderBlock(d_model, heads, norm_first=norm_first), params).eval()
    ref = to_torch_reference(params, heads, norm_first=norm_first)
    with torch.no_grad():
        xt = torch.from_numpy(x)[None]
        out_t = ours_t(xt)[0].numpy()
        out_ref = ref(xt)[0].numpy()
    np.testing.assert_allclose(out_t, out_ref, **TOL)
    np.testing.assert_allclose(ours_np, out_ref, **TOL)
    # the intermediates fit together: out is the second sub-layer's output, read from the first one's
    assert steps.weights.shape == (heads, T, T) and steps.ffn_hidden.shape == (T, 4 * d_model)
    np.testing.assert_allclose(steps.attn.add, x + steps.attn.sub, atol=1e-6)
    np.testing.assert_allclose(steps.ffn.add, steps.attn.out + steps.ffn.sub, atol=1e-6)
    assert steps.out is steps.ffn.out and (steps.ffn.out is (steps.ffn.add if norm_first else steps.ffn.norm))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("d_model, heads, T_q, T_k", [(8, 2, 4, 6), (16, 4, 7, 3)])
def test_decoder_block_matches_pytorch(norm_first, d_model, heads, T_q, T_k):
    params = block_params(d_model, seed=4, decoder=True)
    rng = np.random.default_rng(2)
    y = rng.standard_normal((T_q, d_model)).astype(np.float32)
    mem = rng.standard_normal((T_k, d_model)).astype(np.float32)
    steps = decoder_block(y, mem, params, heads, norm_first=norm_first)
    assert steps.cross_weights.shape == (heads, T_q, T_k)
    assert np.all(steps.self_weights[:, np.triu_indices(T_q, 1)[0], np.triu_indices(T_q, 1)[1]] == 0)
    ours_t = load_block(DecoderBlock(d_model, heads, norm_first=norm_first), params).eval()
    ref = to_torch_reference(params, heads, norm_first=norm_first)
    with torch.no_grad():
        yt, mt = torch.from_numpy(y)[None], torch.from_numpy(mem)[None]
        out_t = ours_t(yt, mt)[0].numpy()
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T_q)
        out_ref = ref(yt, mt, tgt_mask=causal, tgt_is_causal=True)[0].numpy()
    np.testing.assert_allclose(out_t, out_ref, **TOL)
    np.testing.assert_allclose(steps.out, out_ref, **TOL)


def test_run_block_sentence_and_whatif_input():
    from attention_core import WhatIf, run_whatif
    from attention_core.block_run import encoder_flow, encoder_graph_alt, find_token, run_block

    cfg = WhatIf(d_model=16, n_heads=4, seed=3)
    run = run_block(cfg, "The animal didn't cross the street because it was too tired", decoder_tokens=3)
    assert run.T == 11 and find_token(run.tokens, "it") == 7 and run.decoder_tokens == ["y1", "y2", "y3"]
    assert run.encoder.x.shape == (11, 16) and run.decoder.cross_weights.shape == (4, 3, 11)
    np.testing.assert_allclose(run.decoder.memory, run.encoder.out)
    own = run_block(cfg, None, norm_first=True, decoder_tokens=1)
    np.testing.assert_allclose(own.encoder.x, run_whatif(cfg).x)
    assert own.tokens == run_whatif(cfg).tokens and own.encoder.norm_first
    for bad in ({"decoder_tokens": 0}, {"decoder_tokens": 65}, {"sentence": "  "}):
        with pytest.raises(ValueError):
            run_block(cfg, **{"sentence": "a b", **bad})
    post, pre = encoder_flow(False), encoder_flow(True)
    assert len(post[0]) == len(pre[0]) == 9 and len(post[1]) == len(pre[1]) == 2
    assert ("x", "LN₁") in pre[0] and ("x", "LN₁") not in post[0]
    for norm_first, (flow, residual) in ((False, post), (True, pre)):  # the text alternative names every edge
        alt = encoder_graph_alt(norm_first)
        assert alt.count(";") == len(flow) - 1 and alt.count("(residual)") == 2
        for a, b in flow:
            said = f"{a} to {b}".replace("\\n", " ")
            assert said in alt and (f"{said} (residual)" in alt) == ((a, b) in residual)
