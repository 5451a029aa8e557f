"""Multi-query and grouped-query attention: H query heads share G key/value heads (G divides H).

GQA (Ainslie et al., 2023, "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head
Checkpoints"); MQA (Shazeer, 2019, "Fast Transformer Decoding: One Write-Head is All You Need").
G = H is ordinary multi-head attention, G = 1 is multi-query attention. Query head h reads key/value
head h // (H / G), as ``torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)`` does.

Shape legend: B batch (any leading dims ``...``), H query heads, G key/value heads, T_q / T_k tokens,
d_k query/key width per head, d_v value width per head, d_model = H * d_k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_positive_int
from .attention import check_heads, merge_heads, scaled_dot_product_attention, split_heads


def check_kv_heads(n_heads: int, n_kv_heads: int) -> int:
    """Return n_kv_heads if it divides n_heads, else raise saying which values are allowed."""
    n_heads = check_positive_int("n_heads", n_heads)
    n_kv_heads = check_positive_int("n_kv_heads", n_kv_heads)
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}; "
            f"allowed n_kv_heads: {allowed_kv_heads(n_heads)}"
        )
    return n_kv_heads


def allowed_kv_heads(n_heads: int) -> list[int]:
    """The key/value head counts that work with ``n_heads`` query heads: its divisors (1 = MQA, n_heads = MHA)."""
    return [g for g in range(1, n_heads + 1) if n_heads % g == 0]


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """``(..., G, T, d)`` -> ``(..., G * n_rep, T, d)``: each key/value head repeated for its n_rep query heads."""
    return np.repeat(x, n_rep, axis=-3)  # (..., H, T, d)


def grouped_query_attention(q, k, v, mask=None, scaled: bool = True, temperature: float = 1.0):
    """Attention where H query heads share G key/value heads (G divides H; G = 1 is MQA, G = H is MHA).

    Reference::

        k, v = repeat_kv(k, H // G), repeat_kv(v, H // G)    # (..., H, T_k, d) each
        return scaled_dot_product_attention(q, k, v, mask)    # per head, as in multi-head attention

    Here the repetition is a broadcast: the queries of one group are stacked against their shared
    key/value head, so no copy of K or V is made.

    Args:
        q: ``(..., H, T_q, d_k)`` queries.
        k: ``(..., G, T_k, d_k)`` keys, G dividing H.
        v: ``(..., G, T_k, d_v)`` values.
        mask: optional bool array broadcastable to ``(..., H, T_q, T_k)``; True = may attend.
        scaled, temperature: as in :func:`attention_core.scaled_dot_product_attention`.

    Returns:
        ``(output, weights)``: output ``(..., H, T_q, d_v)``, weights ``(..., H, T_q, T_k)``.
    """
    q = check_finite_array("q", q, min_ndim=3)
    k = check_finite_array("k", k, min_ndim=3)
    v = check_finite_array("v", v, min_ndim=3)
    H, G = q.shape[-3], k.shape[-3]
    if v.shape[-3] != G:
        raise ValueError(f"k and v must have the same number of key/value heads G; got k {k.shape} and v {v.shape}")
    check_kv_heads(H, G)
    rep = H // G
    *lead, _, T_q, d_k = q.shape
    q_grouped = q.reshape(*lead, G, rep, T_q, d_k)  # (..., G, H/G, T_q, d_k)
    k_grouped, v_grouped = k[..., :, None, :, :], v[..., :, None, :, :]  # (..., G, 1, T_k, d)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise ValueError(f"mask must be a boolean array (True = may attend); got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, (*np.broadcast_shapes(tuple(lead), k.shape[:-3]), H, T_q, k.shape[-2]))
        except ValueError:
            raise ValueError(
                f"mask of shape {mask.shape} does not broadcast to (..., H={H}, T_q={T_q}, T_k={k.shape[-2]})"
            ) from None
        mask = mask.reshape(*mask.shape[:-3], G, rep, T_q, k.shape[-2])  # (..., G, H/G, T_q, T_k)
    out, weights = scaled_dot_product_attention(
        q_grouped, k_grouped, v_grouped, mask=mask, scaled=scaled, temperature=temperature
    )
    out_lead = out.shape[:-4]
    return (
        out.reshape(*out_lead, H, T_q, v.shape[-1]),  # (..., H, T_q, d_v)
        weights.reshape(*out_lead, H, T_q, k.shape[-2]),
    )  # (..., H, T_q, T_k)


def gqa_projections(x, w_q, w_k, w_v, n_heads: int, n_kv_heads: int):
    """Project ``x`` to H query heads and G key/value heads.

    Args:
        x: ``(..., T, d_model)``.
        w_q: ``(d_model, d_model)``; w_k, w_v: ``(d_model, G * d_k)`` (``x @ W`` convention).

    Returns:
        ``(q, k, v)``: ``(..., H, T, d_k)``, ``(..., G, T, d_k)``, ``(..., G, T, d_k)``.
    """
    x = check_finite_array("x", x, min_ndim=2)
    d_model = x.shape[-1]
    n_heads = check_heads(d_model, n_heads)
    n_kv_heads = check_kv_heads(n_heads, n_kv_heads)
    d_k = d_model // n_heads
    for name, w, cols in (("w_q", w_q, d_model), ("w_k", w_k, n_kv_heads * d_k), ("w_v", w_v, n_kv_heads * d_k)):
        if np.shape(w) != (d_model, cols):
            raise ValueError(
                f"{name} must have shape (d_model, {'d_model' if cols == d_model else 'G * d_k'}) = "
                f"{(d_model, cols)}; got {np.shape(w)}"
            )
    return project_heads(
        x,
        check_finite_array("w_q", w_q, 2),
        check_finite_array("w_k", w_k, 2),
        check_finite_array("w_v", w_v, 2),
        n_heads,
        n_kv_heads,
    )


def project_heads(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, n_heads: int, n_kv_heads: int):
    """:func:`gqa_projections` without the checks, for callers that checked once (the KV-cache decoder)."""
    q = split_heads(x @ w_q, n_heads)  # (..., H, T, d_k)
    k = split_heads(x @ w_k, n_kv_heads)  # (..., G, T, d_k)
    v = split_heads(x @ w_v, n_kv_heads)  # (..., G, T, d_k)
    return q, k, v


def gqa_self_attention(
    x, w_q, w_k, w_v, w_o, n_heads: int, n_kv_heads: int, mask=None, scaled: bool = True, temperature: float = 1.0
):
    """Grouped-query self-attention layer: project, attend with shared K/V heads, merge, project.

    With ``n_kv_heads == n_heads`` and square ``w_k, w_v`` this is :func:`attention_core.multi_head_attention`.

    Args:
        x: ``(T, d_model)`` or ``(B, T, d_model)``.
        w_q, w_o: ``(d_model, d_model)``; w_k, w_v: ``(d_model, G * d_k)``.
        n_heads: H query heads (divides d_model); n_kv_heads: G key/value heads (divides H).
        mask: bool, broadcastable to ``(..., T, T)`` (the same for every head); True = may attend.

    Returns:
        ``(output, weights)``: ``(..., T, d_model)`` and ``(..., H, T, T)``.
    """
    q, k, v = gqa_projections(x, w_q, w_k, w_v, n_heads, n_kv_heads)
    w_o = check_finite_array("w_o", w_o, 2)
    if w_o.shape != (x.shape[-1],) * 2:
        raise ValueError(f"w_o must have shape (d_model, d_model) = {(x.shape[-1],) * 2}; got {w_o.shape}")
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask  # (..., 1, T, T): same mask for every head
    heads, weights = grouped_query_attention(q, k, v, mask=mask, scaled=scaled, temperature=temperature)
    return merge_heads(heads) @ w_o, weights  # (..., T, d_model), (..., H, T, T)


# ---- KV-cache memory: what sharing K/V heads saves at decoding time

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}  # bytes per cached number


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, context: int, batch: int = 1, bytes_per_element: int = 2
) -> int:
    """Bytes a KV cache holds: ``2 (K and V) x layers x kv_heads x head_dim x context x batch x bytes_per_element``."""
    values = [
        check_positive_int(n, v)
        for n, v in (
            ("layers", layers),
            ("kv_heads", kv_heads),
            ("head_dim", head_dim),
            ("context", context),
            ("batch", batch),
            ("bytes_per_element", bytes_per_element),
        )
    ]
    out = 2
    for v in values:
        out *= v
    return out


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a published model, as its config.json states it."""

    name: str  # display name
    layers: int  # transformer blocks (n_layer / num_hidden_layers)
    heads: int  # query heads H (n_head / num_attention_heads)
    kv_heads: int  # key/value heads G (num_key_value_heads; = heads for MHA)
    head_dim: int  # d_k = hidden size / heads
    max_context: int  # trained context length (n_positions / max_position_embeddings)
    sliding_window: int | None  # attention window in tokens (Mistral's rolling cache), None = full
    source: str  # where these numbers were checked

    def __post_init__(self):
        for name in ("layers", "heads", "kv_heads", "head_dim", "max_context"):
            check_positive_int(name, getattr(self, name))
        check_kv_heads(self.heads, self.kv_heads)
        if self.sliding_window is not None:
            check_positive_int("sliding_window", self.sliding_window)

    def cache_bytes(
        self, context: int, batch: int = 1, dtype: str = "float16", kv_heads: int | None = None, rolling: bool = True
    ) -> int:
        """KV-cache bytes at ``context`` tokens; ``kv_heads`` overrides the model's (MHA/GQA/MQA what-ifs).

        With ``rolling`` a sliding-window model keeps only its last ``sliding_window`` tokens."""
        if dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype={dtype!r} is not allowed; choose one of {list(DTYPE_BYTES)}")
        g = self.kv_heads if kv_heads is None else check_kv_heads(self.heads, kv_heads)
        context = check_positive_int("context", context)
        if rolling and self.sliding_window is not None:
            context = min(context, self.sliding_window)
        return kv_cache_bytes(self.layers, g, self.head_dim, context, batch, DTYPE_BYTES[dtype])

    def variants(self) -> dict[str, int]:
        """KV-head counts to compare: MHA (G = H), a GQA with about 8 KV heads (the model's own if it has one), MQA."""
        if 1 < self.kv_heads < self.heads:
            gqa = self.kv_heads
        else:
            middle = [g for g in allowed_kv_heads(self.heads) if 1 < g < self.heads] or [self.heads]
            gqa = min(middle, key=lambda g: (abs(g - 8), g))
        return {"MHA": self.heads, f"GQA ({gqa} KV heads)": gqa, "MQA": 1}


_HF = "https://huggingface.co/"
MODELS = (
    ModelShape(
        "GPT-2 small",
        12,
        12,
        12,
        64,
        1024,
        None,
        _HF + "openai-community/gpt2 config.json: n_layer 12, n_head 12, n_embd 768, n_positions 1024",
    ),
    ModelShape(
        "GPT-2 XL",
        48,
        25,
        25,
        64,
        1024,
        None,
        _HF + "openai-community/gpt2-xl/blob/main/config.json: n_layer 48, n_head 25, n_embd 1600",
    ),
    ModelShape(
        "Llama-2-7B",
        32,
        32,
        32,
        128,
        4096,
        None,
        _HF + "meta-llama/Llama-2-7b-hf config.json: num_hidden_layers 32, num_attention_heads 32, "
        "num_key_value_heads 32, hidden_size 4096, max_position_embeddings 4096",
    ),
    ModelShape(
        "Llama-2-70B",
        80,
        64,
        8,
        128,
        4096,
        None,
        _HF + "meta-llama/Llama-2-70b-hf config.json: num_hidden_layers 80, num_attention_heads 64, "
        "num_key_value_heads 8, hidden_size 8192, max_position_embeddings 4096",
    ),
    ModelShape(
        "Mistral-7B (v0.1)",
        32,
        32,
        8,
        128,
        32768,
        4096,
        _HF + "mistralai/Mistral-7B-v0.1 config.json: num_hidden_layers 32, num_attention_heads 32, "
        "num_key_value_heads 8, hidden_size 4096, sliding_window 4096, max_position_embeddings 32768",
    ),
)
MODELS_BY_NAME = {m.name: m for m in MODELS}
