"""Linear attention (Katharopoulos et al., 2020, "Transformers are RNNs", arXiv:2006.16236).

Replace ``exp(q . k)`` by a product of features ``phi(q) . phi(k)`` with ``phi(x) = elu(x) + 1 > 0``:

    out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j)
          = phi(q_i)^T S / phi(q_i)^T z,   S = sum_j phi(k_j) v_j^T  (d_k, d_v),   z = sum_j phi(k_j)  (d_k,)

The parallel form builds the ``(T_q, T_k)`` matrix; the right-hand side never does. Causally (j <= i),
S and z become running sums: an RNN whose state has a fixed size ``d_k x d_v + d_k`` however long
the sequence. There is no softmax, so no temperature and no 1/sqrt(d_k).

Shapes: T tokens (T_q / T_k), d_k query/key width, d_v value width; leading dims ``...`` are kept.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_finite_array, check_qkv


def elu_feature_map(x) -> np.ndarray:
    """``phi(x) = elu(x) + 1``: x + 1 for x > 0, exp(x) otherwise; always > 0."""
    x = check_finite_array("x", x)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def linear_attention(q, k, v, causal: bool = False):
    """Linear attention in its parallel (quadratic) form, returning the implicit weights too.

    Reference::

        a = phi(q) @ phi(k).T                 # (T_q, T_k), every entry > 0
        a = tril(a) if causal else a
        weights = a / a.sum(-1, keepdims=True)
        output = weights @ v                  # (T_q, d_v)

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        causal: query i sees keys 0 .. i only (needs T_q == T_k).

    Returns:
        ``(output, weights)``: ``(..., T_q, d_v)`` and ``(..., T_q, T_k)`` (rows sum to 1).
    """
    q, k, v = check_qkv(q, k, v)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal linear attention needs T_q == T_k; got {q.shape[-2]} and {k.shape[-2]}")
    a = elu_feature_map(q) @ np.swapaxes(elu_feature_map(k), -1, -2)  # (..., T_q, T_k)
    if causal:
        a = np.tril(a)
    weights = a / a.sum(axis=-1, keepdims=True)  # (..., T_q, T_k); the diagonal keeps every row > 0
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def linear_attention_factorised(q, k, v):
    """Non-causal linear attention without the T_q x T_k matrix: ``phi(q) (phi(k)^T v) / phi(q) . sum phi(k)``.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.

    Returns:
        ``(output, S, z)``: output ``(..., T_q, d_v)``, state ``S = phi(k)^T v`` ``(..., d_k, d_v)``
        and normaliser ``z = sum_j phi(k_j)`` ``(..., d_k)``.
    """
    q, k, v = check_qkv(q, k, v)
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (..., T_q, d_k), (..., T_k, d_k)
    S = np.swapaxes(fk, -1, -2) @ v  # (..., d_k, d_v)
    z = fk.sum(axis=-2)  # (..., d_k)
    out = (fq @ S) / (fq @ z[..., None])  # (..., T_q, d_v) / (..., T_q, 1)
    return out, S, z


def linear_attention_recurrent(q, k, v):
    """Causal linear attention as an RNN: one token at a time with a fixed-size state.

    Reference::

        S, z = zeros(d_k, d_v), zeros(d_k)
        for i in range(T):
            S += outer(phi(k[i]), v[i])       # (d_k, d_v)
            z += phi(k[i])                    # (d_k,)
            out[i] = phi(q[i]) @ S / (phi(q[i]) @ z)

    Args:
        q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)``.

    Returns:
        ``(output, S, z)``: output ``(..., T, d_v)`` equal to ``linear_attention(q, k, v, causal=True)[0]``,
        and the final state ``S`` ``(..., d_k, d_v)`` and normaliser ``z`` ``(..., d_k)``.
    """
    q, k, v = check_qkv(q, k, v)
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"the recurrent (causal) form needs T_q == T_k; got {q.shape[-2]} and {k.shape[-2]}")
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (..., T, d_k)
    lead = np.broadcast_shapes(fq.shape[:-2], fk.shape[:-2], v.shape[:-2])
    dtype = np.result_type(fq.dtype, v.dtype)
    S = np.zeros((*lead, fk.shape[-1], v.shape[-1]), dtype=dtype)  # (..., d_k, d_v)
    z = np.zeros((*lead, fk.shape[-1]), dtype=dtype)  # (..., d_k)
    out = np.empty((*lead, q.shape[-2], v.shape[-1]), dtype=dtype)  # (..., T, d_v)
    for i in range(q.shape[-2]):
        S += fk[..., i, :, None] * v[..., i, None, :]  # (..., d_k, d_v) outer product
        z += fk[..., i, :]  # (..., d_k)
        fq_i = fq[..., i, None, :]  # (..., 1, d_k)
        out[..., i, :] = (fq_i @ S)[..., 0, :] / (fq_i @ z[..., None])[..., 0, :]  # (..., d_v)
    return out, S, z
