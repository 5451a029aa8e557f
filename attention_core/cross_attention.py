"""Run one cross-attention experiment: queries from one sequence, keys and values from another.

Both inputs are built by :func:`attention_core.whatif.build_input` from a :class:`WhatIf` each, so a
typed sentence, seeded random vectors or a one-hot pattern work on either side exactly as on every
other page. Shapes: T_q query tokens, T_k key/value tokens, d_model width, H heads, d_k = d_model / H.
The projection weights are seeded random and **untrained**: the map shows the mechanics, not meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import multi_head_attention
from .config import WhatIf
from .inputs import random_projection_weights
from .whatif import build_input


@dataclass(frozen=True)
class CrossRun:
    """Everything one cross-attention run computed."""

    config: WhatIf  # the query side's input and the attention settings (d_model, heads, scaling, temperature, seed)
    kv_config: WhatIf  # the key/value side's input (only its input fields are used)
    tokens_q: list[str]  # (T_q,) labels of the query sequence
    tokens_kv: list[str]  # (T_k,) labels of the key/value sequence
    x_q: np.ndarray  # (T_q, d_model) query-side input
    x_kv: np.ndarray  # (T_k, d_model) key/value-side input
    w: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # W_q, W_k, W_v, W_o, (d_model, d_model) each, untrained
    q: np.ndarray  # (H, T_q, d_k) queries, from x_q
    k: np.ndarray  # (H, T_k, d_k) keys, from x_kv
    v: np.ndarray  # (H, T_k, d_k) values, from x_kv
    output: np.ndarray  # (T_q, d_model) one row per query, whatever T_k is
    weights: np.ndarray  # (H, T_q, T_k) each row sums to 1 over the other sequence's keys
    notices: tuple[str, ...]  # what building the inputs had to change (truncation)

    @property
    def T_q(self) -> int:
        return self.x_q.shape[0]

    @property
    def T_k(self) -> int:
        return self.x_kv.shape[0]


def run_cross_attention(cfg: WhatIf, kv_cfg: WhatIf) -> CrossRun:
    """Multi-head cross-attention with queries from ``cfg``'s input and keys/values from ``kv_cfg``'s input.

    Reference::

        x_q, x_kv = build_input(cfg), build_input(kv_cfg)      # (T_q, d_model), (T_k, d_model)
        q = x_q @ W_q; k, v = x_kv @ W_k, x_kv @ W_v            # split into H heads of width d_k
        weights = softmax(q k^T / sqrt(d_k) / temperature)      # (H, T_q, T_k)
        output = concat(weights @ v) @ W_o                      # (T_q, d_model)

    Args:
        cfg: the query side's input (input kind, sentence or seq_len, seed) and the attention settings:
            d_model, n_heads, scaled, temperature; its seed also seeds W_q, W_k, W_v, W_o. Masks are not
            used (a decoder's cross-attention sees the whole source).
        kv_cfg: the key/value side's input; its d_model must equal ``cfg.d_model``.

    Returns:
        :class:`CrossRun` with weights ``(H, T_q, T_k)`` and output ``(T_q, d_model)``.
    """
    if not isinstance(cfg, WhatIf) or not isinstance(kv_cfg, WhatIf):
        raise ValueError(f"cfg and kv_cfg must be WhatIf; got {type(cfg).__name__} and {type(kv_cfg).__name__}")
    if kv_cfg.d_model != cfg.d_model:
        raise ValueError(f"both sides need the same d_model; got {cfg.d_model} (queries) and {kv_cfg.d_model} (keys)")
    tokens_q, x_q, notices_q = build_input(cfg)  # (T_q, d_model)
    tokens_kv, x_kv, notices_kv = build_input(kv_cfg)  # (T_k, d_model)
    if cfg.input_kind == "random":  # "t1, t2, ..." on both sides would read as the same tokens
        tokens_q = [f"q{i}" for i in range(1, len(tokens_q) + 1)]
    if kv_cfg.input_kind == "random":
        tokens_kv = [f"k{j}" for j in range(1, len(tokens_kv) + 1)]
    w = tuple(random_projection_weights(cfg.d_model, cfg.seed))
    output, weights, steps = multi_head_attention(
        x_q, *w, n_heads=cfg.n_heads, scaled=cfg.scaled, temperature=cfg.temperature, return_steps=True, kv=x_kv
    )
    # output (T_q, d_model), weights (H, T_q, T_k)
    notices = tuple([f"Query sequence: {n}" for n in notices_q] + [f"Key/value sequence: {n}" for n in notices_kv])
    return CrossRun(
        cfg, kv_cfg, tokens_q, tokens_kv, x_q, x_kv, w, steps["q"], steps["k"], steps["v"], output, weights, notices
    )
