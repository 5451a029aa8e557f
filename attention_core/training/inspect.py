"""Looking inside a trained model at one snapshot: attention maps on a probe, parity with the NumPy
attention of attention_core, and queries and keys in one picture (after AttentionViz).

Shape legend: L layers, H heads, T probe tokens, d_k = d_model / H.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ..attention import multi_head_attention
from ..masks import causal_mask
from ..positions import position_attention
from ..rope import apply_rope
from .config import TrainConfig
from .model import TinyTransformer, load_flat_parameters
from .rotary import ROPE_BASE
from .tasks import is_causal


def model_from_params(cfg: TrainConfig, params) -> TinyTransformer:
    """A model of ``cfg`` holding the snapshot's weights (float16 vectors are widened to float32)."""
    return load_flat_parameters(TinyTransformer(cfg), params).eval()


@torch.no_grad()
def probe_maps(model: TinyTransformer, tokens: torch.Tensor) -> np.ndarray:
    """Every head's weights on one sequence: ``(L, H, T, T)`` float32, from tokens ``(1, T)``."""
    _, weights = model(tokens)
    return np.stack([w[0].numpy() for w in weights]).astype(np.float32)  # (L, H, T, T)


@torch.no_grad()
def attention_parity(
    model: TinyTransformer, tokens: torch.Tensor, dtype: torch.dtype = torch.float64
) -> tuple[np.ndarray, np.ndarray, float]:
    """The model's attention weights recomputed by :func:`attention_core.multi_head_attention` (NumPy)
    from the model's own projection weights and each layer's own input; for a rope model, by
    :func:`attention_core.positions.position_attention` with ``method="rope"`` (each head's q and k rotated).

    Args:
        model: the model (not modified: a copy runs in ``dtype``); tokens: ``(1, T)``.
        dtype: torch.float64 (default) compares the two implementations without float32 rounding;
            torch.float32 shows the rounding of the trained model as it runs.

    Returns:
        ``(torch_weights, numpy_weights, max_abs_difference)``, weights ``(L, H, T, T)``.
    """
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64; got {dtype}")
    model = copy.deepcopy(model).to(dtype)
    _, weights, inputs = model(tokens, return_inputs=True)
    T = tokens.shape[1]
    mask = causal_mask(T) if is_causal(model.cfg.task) else None
    ours = []
    for block, h in zip(model.blocks, inputs):
        a = block.attn
        w = [lin.weight.numpy().T for lin in (a.W_q, a.W_k, a.W_v, a.W_o)]  # x @ W convention
        if model.cfg.pos == "rope":  # every head's q and k rotated by position (the rope_attention reference)
            _, w_np = position_attention("rope", h[0].numpy(), *w[:3], n_heads=a.n_heads, mask=mask, base=ROPE_BASE)
        else:
            _, w_np = multi_head_attention(h[0].numpy(), *w, n_heads=a.n_heads, mask=mask)  # (H, T, T)
        ours.append(w_np)
    torch_w = np.stack([w[0].numpy() for w in weights])  # (L, H, T, T)
    numpy_w = np.stack(ours)  # (L, H, T, T)
    return torch_w, numpy_w, float(np.abs(torch_w - numpy_w).max())


@dataclass(frozen=True)
class QKPicture:
    """One head's queries and keys projected together to 2-D."""

    queries: np.ndarray  # (T, 2) projected queries (rescaled)
    keys: np.ndarray  # (T, 2) projected keys (translated to the queries' centroid, rescaled)
    weights: np.ndarray  # (T, T) the head's attention weights on the probe
    top_keys: np.ndarray  # (T, n_top) int, each query's most attended keys, best first; -1 = none (masked)
    explained: float  # share of the variance of the joint q/k cloud the two axes keep


@torch.no_grad()
def query_key_picture(model: TinyTransformer, tokens: torch.Tensor, layer: int, head: int, n_top: int = 2) -> QKPicture:
    """Queries and keys of one head in one plane, so that near means attended (Yeh et al., AttentionViz, 2023).

    Two changes leave every softmax row unchanged and make distance track the dot product: keys are
    translated so their centroid sits on the queries' centroid (adding a vector c to every key adds
    q.c to a whole row of logits), and q is multiplied and k divided by sqrt(mean|k| / mean|q|)
    (q.k unchanged) so both clouds have the same mean norm. Then one PCA of the stacked q and k
    (for a rope model, the rotated q and k, whose dot products are the scores).

    Args:
        model: the model; tokens: ``(1, T)``; layer, head: which head; n_top: keys per query for the lines.
    """
    cfg = model.cfg
    if not 0 <= layer < cfg.n_layers or not 0 <= head < cfg.n_heads:
        raise ValueError(f"layer must be 0..{cfg.n_layers - 1} and head 0..{cfg.n_heads - 1}; got {layer}, {head}")
    _, weights, inputs = model(tokens, return_inputs=True)
    attn, d_k = model.blocks[layer].attn, cfg.d_k
    cols = slice(head * d_k, (head + 1) * d_k)
    h = inputs[layer][0]  # (T, d_model)
    q = attn.W_q(h)[:, cols].numpy().astype(np.float64)  # (T, d_k)
    k = attn.W_k(h)[:, cols].numpy().astype(np.float64)  # (T, d_k)
    if cfg.pos == "rope":
        q, k = (
            apply_rope(q, base=ROPE_BASE),
            apply_rope(k, base=ROPE_BASE),
        )  # (T, d_k) each: the rotated vectors the scores use
    k = k - k.mean(0) + q.mean(0)  # (T, d_k) same centroid as the queries
    ratio = np.sqrt(np.linalg.norm(k, axis=1).mean() / max(np.linalg.norm(q, axis=1).mean(), 1e-12))
    q, k = q * ratio, k / ratio
    both = np.concatenate([q, k])  # (2T, d_k)
    centred = both - both.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)  # principal axes in vt
    axes = vt[:2] if vt.shape[0] >= 2 else np.vstack([vt, np.zeros_like(vt)])
    proj = centred @ axes.T  # (2T, 2)
    total = float((s**2).sum())
    explained = float((s[:2] ** 2).sum() / total) if total > 0 else 1.0
    w = weights[layer][0, head].numpy()  # (T, T)
    top = np.argsort(-w, axis=1, kind="stable")[:, :n_top]  # (T, n_top)
    top = np.where(np.take_along_axis(w, top, axis=1) > 0, top, -1)  # masked keys (weight 0) are not drawn
    T = tokens.shape[1]
    return QKPicture(proj[:T].astype(np.float32), proj[T:].astype(np.float32), w, top, explained)
