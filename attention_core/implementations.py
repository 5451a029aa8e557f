"""The same multi-head attention computed by every implementation we can run, for side-by-side checks.

Each runner takes ``(x (T, d_model), w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature)``
(NumPy, ``x @ W`` weights, bool mask True = may attend) and returns ``(output (T, d_model),
weights (H, T, T) or None)`` as NumPy arrays. Libraries that always divide by sqrt(d_k) get the
scaling and the temperature folded into W_q instead (q' = q * s * sqrt(d_k) with s the factor we want).
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .attention import merge_heads, multi_head_attention, score_factor, split_heads


def numpy_functional(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """attention_core.multi_head_attention: the reference."""
    return multi_head_attention(
        x, w_q, w_k, w_v, w_o, n_heads=n_heads, mask=mask, scaled=scaled, temperature=temperature
    )


def torch_functional(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """From-scratch torch: project, split heads, scaled_dot_product_attention_torch, merge, project."""
    import torch

    from .torch_attention import scaled_dot_product_attention_torch

    X = torch.from_numpy(np.array(x, dtype=np.float32))  # (T, d_model)
    W = [torch.from_numpy(np.array(w, dtype=np.float32)) for w in (w_q, w_k, w_v, w_o)]
    q, k, v = (split_heads(X @ w, n_heads) for w in W[:3])  # (H, T, d_k) each
    m = None if mask is None else torch.from_numpy(np.array(mask))
    z, weights = scaled_dot_product_attention_torch(q, k, v, m, scaled=scaled, temperature=temperature)
    out = merge_heads(z) @ W[3]  # (T, d_model)
    return out.numpy(), weights.numpy()


def torch_module(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """From-scratch nn.Module MultiHeadSelfAttention with the weights loaded."""
    import torch

    from .torch_attention import MultiHeadSelfAttention

    mha = MultiHeadSelfAttention(x.shape[1], n_heads, scaled=scaled, temperature=temperature)
    mha.load_numpy_weights(w_q, w_k, w_v, w_o).eval()
    with torch.inference_mode():
        m = None if mask is None else torch.from_numpy(np.array(mask))
        out, weights = mha(torch.from_numpy(np.array(x, dtype=np.float32))[None], m)
    return out[0].numpy(), weights[0].numpy()


def self_attention_head1(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """From-scratch single-head SelfAttention with head 1's slices; returns head 1's weights and its
    contribution to the output (head 1 @ its rows of W_o). Compared with the reference's head 1."""
    import torch

    from .torch_attention import SelfAttention

    d_model = x.shape[1]
    d_k = d_model // n_heads
    sa = SelfAttention(d_model, d_k=d_k, d_v=d_k, scaled=scaled, temperature=temperature).eval()
    with torch.no_grad():
        for lin, w in ((sa.W_q, w_q), (sa.W_k, w_k), (sa.W_v, w_v)):
            lin.weight.copy_(torch.as_tensor(np.asarray(w)[:, :d_k], dtype=torch.float32).T)
        sa.W_o.weight.copy_(torch.as_tensor(np.asarray(w_o)[:d_k], dtype=torch.float32).T)
        m = None if mask is None else torch.from_numpy(np.array(mask))
        out, weights = sa(torch.from_numpy(np.array(x, dtype=np.float32))[None], m)
    return out[0].numpy(), weights[0].numpy()[None]


def torch_sdpa(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """torch.nn.functional.scaled_dot_product_attention (fused; returns no weights)."""
    import torch
    import torch.nn.functional as F

    X = torch.from_numpy(np.array(x, dtype=np.float32))  # (T, d_model)
    W = [torch.from_numpy(np.array(w, dtype=np.float32)) for w in (w_q, w_k, w_v, w_o)]
    q, k, v = (split_heads(X @ w, n_heads) for w in W[:3])  # (H, T, d_k) each
    m = None if mask is None else torch.from_numpy(np.array(mask))
    with torch.inference_mode():
        z = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=score_factor(q.shape[-1], scaled, temperature))
    return (merge_heads(z) @ W[3]).numpy(), None  # (T, d_model)


def torch_nn_multihead(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """torch.nn.MultiheadAttention with the weights copied in (its attn_mask is True = blocked)."""
    import torch

    d_model = x.shape[1]
    d_k = d_model // n_heads
    ref = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True).eval()
    fold = score_factor(d_k, scaled, temperature) * math.sqrt(d_k)  # nn.MultiheadAttention always divides by sqrt(d_k)
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat(
                [
                    torch.as_tensor(np.asarray(w) * f, dtype=torch.float32).T
                    for w, f in ((w_q, fold), (w_k, 1.0), (w_v, 1.0))
                ],
                0,
            )
        )
        ref.out_proj.weight.copy_(torch.as_tensor(np.asarray(w_o), dtype=torch.float32).T)
        X = torch.from_numpy(np.array(x, dtype=np.float32))[None]
        m = None if mask is None else ~torch.from_numpy(np.array(mask))
        out, weights = ref(X, X, X, attn_mask=m, need_weights=True, average_attn_weights=False)
    return out[0].numpy(), weights[0].numpy()


_KERAS_LOCK = threading.Lock()


def keras_available() -> bool:
    try:
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return False
    return True


def keras_multihead(x, w_q, w_k, w_v, w_o, n_heads, mask, scaled, temperature):
    """keras.layers.MultiHeadAttention (TensorFlow backend) with the weights copied in.

    Keras keeps every layer it has built in its global state: on a server that runs this for every setting the
    process grew by ~48 MB a call at 512 tokens x d_model 1024. So the layer is built, used and dropped under a
    lock, and ``keras.backend.clear_session()`` releases it (the process then stays flat)."""
    import os

    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    with _KERAS_LOCK:  # clear_session resets Keras' global state: no other session may be mid-build
        T, d_model = x.shape
        d_k = d_model // n_heads
        fold = score_factor(d_k, scaled, temperature) * math.sqrt(d_k)  # Keras always divides q by sqrt(d_k)
        layer = keras.layers.MultiHeadAttention(num_heads=n_heads, key_dim=d_k, use_bias=False, dtype="float32")
        X = np.asarray(x, dtype=np.float32)[None]
        layer(X, X)  # build
        layer._query_dense.kernel.assign((np.asarray(w_q) * fold).reshape(d_model, n_heads, d_k).astype(np.float32))
        layer._key_dense.kernel.assign(np.asarray(w_k).reshape(d_model, n_heads, d_k).astype(np.float32))
        layer._value_dense.kernel.assign(np.asarray(w_v).reshape(d_model, n_heads, d_k).astype(np.float32))
        layer._output_dense.kernel.assign(np.asarray(w_o).reshape(n_heads, d_k, d_model).astype(np.float32))
        m = None if mask is None else np.broadcast_to(np.asarray(mask), (1, T, T))
        out, weights = layer(X, X, attention_mask=m, return_attention_scores=True)
        out, weights = np.asarray(out)[0].copy(), np.asarray(weights)[0].copy()
        del layer
        keras.backend.clear_session()
    return out, weights


KERAS_CODE = """import keras  # TensorFlow backend
d_k = d_model // n_heads
layer = keras.layers.MultiHeadAttention(num_heads=n_heads, key_dim=d_k, use_bias=False)
layer(x, x)  # build, then copy the weights in (Keras kernels are (d_model, H, d_k) and (H, d_k, d_model))
layer._query_dense.kernel.assign(W_q.reshape(d_model, n_heads, d_k))
layer._key_dense.kernel.assign(W_k.reshape(d_model, n_heads, d_k))
layer._value_dense.kernel.assign(W_v.reshape(d_model, n_heads, d_k))
layer._output_dense.kernel.assign(W_o.reshape(n_heads, d_k, d_model))
output, weights = layer(x, x, attention_mask=mask, return_attention_scores=True)  # mask: True = may attend
"""


@dataclass(frozen=True)
class Implementation:
    name: str
    run: Callable
    note: str = ""
    compares_head1_only: bool = False


IMPLEMENTATIONS = [
    Implementation("NumPy functional (reference)", numpy_functional),
    Implementation("torch functional, from scratch", torch_functional),
    Implementation("torch MultiHeadSelfAttention, from scratch", torch_module),
    Implementation(
        "torch SelfAttention, from scratch (head 1)",
        self_attention_head1,
        "one head: compared with the reference's head 1 and its share of the output",
        True,
    ),
    Implementation("torch.nn.functional.scaled_dot_product_attention", torch_sdpa, "fused kernel: no weights returned"),
    Implementation(
        "torch.nn.MultiheadAttention (weights copied)", torch_nn_multihead, "scaling and temperature folded into W_q"
    ),
    Implementation(
        "Keras MultiHeadAttention (weights copied)", keras_multihead, "scaling and temperature folded into W_q"
    ),
]


@dataclass(frozen=True)
class ImplementationResult:
    """One implementation's row in the comparison."""

    name: str  # what ran
    max_diff_weights: float | None  # max |weights - NumPy reference|; None when it returns no weights or did not run
    max_diff_output: float | None  # max |output - NumPy reference| (T, d_model); None when it did not run
    time_ms: float | None  # median wall time of ``repeat`` runs after a warm-up, ms
    note: str  # what differs (folded scaling, head 1 only, missing library, NaN rows)


def compare_implementations(
    x, w_q, w_k, w_v, w_o, n_heads, mask=None, scaled=True, temperature=1.0, repeat: int = 3
) -> list[ImplementationResult]:
    """Run every implementation on the same input and weights and compare it with the NumPy reference.

    Args:
        x: ``(T, d_model)``; w_q, w_k, w_v, w_o: ``(d_model, d_model)``; n_heads: H, divides d_model.
        mask: bool ``(T, T)``, True = may attend; scaled, temperature: as in multi_head_attention.
        repeat: timed runs per implementation (the median is kept), >= 1.

    Returns:
        One :class:`ImplementationResult` per entry of IMPLEMENTATIONS, in order; Keras is skipped with a
        note when TensorFlow is not installed.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat={repeat!r} is not allowed; it must be an integer >= 1")
    # writable float32 copies (torch.from_numpy warns on the read-only arrays of a cache)
    args = (
        np.array(x, dtype=np.float32),
        *(np.array(w, dtype=np.float32) for w in (w_q, w_k, w_v, w_o)),
        n_heads,
        mask,
        scaled,
        temperature,
    )
    ref_out, ref_w = numpy_functional(*args)  # (T, d_model), (H, T, T)
    d_k = args[0].shape[1] // n_heads
    head1_out = (ref_w[0] @ (args[0] @ args[3][:, :d_k])) @ args[4][:d_k]  # (T, d_model): head 1's share
    rows = []
    for impl in IMPLEMENTATIONS:
        if impl.run is keras_multihead and not keras_available():
            rows.append(
                ImplementationResult(
                    impl.name, None, None, None, "TensorFlow is not installed: pip install -r requirements-tf.txt"
                )
            )
            continue
        impl.run(*args)  # warm-up (imports, first-call setup)
        times, result = [], None
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = impl.run(*args)
            times.append(1e3 * (time.perf_counter() - t0))
        out, weights = result
        if impl.compares_head1_only:
            dw = float(np.abs(weights[0] - ref_w[0]).max())
            do = float(np.abs(out - head1_out).max())
        else:
            dw = None if weights is None else float(np.abs(np.asarray(weights) - ref_w).max())
            do = float(np.abs(np.asarray(out) - ref_out).max())
        note = impl.note
        if (dw is not None and not math.isfinite(dw)) or not math.isfinite(do):
            note = (note + "; " if note else "") + "gives NaN for a fully masked row (ours gives 0)"
        rows.append(ImplementationResult(impl.name, dw, do, statistics.median(times), note))
    return rows
