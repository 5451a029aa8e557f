"""Downloads: CSV tables of a run, and "Reproduce in Python" scripts for a setting.

Two scripts print the same weights: one calls attention_core, the other rebuilds the input with the
same seeded NumPy draws and does the attention in plain torch (with a copy of attention_core's masked
softmax, ``softmax_torch``, taken from its source). Tests run both in a subprocess and
compare the numbers with the page's. This module does not import streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

import attention_core
from attention_core import WhatIf, WhatIfRun
from ui.server.cache import cached

PRINT_MAX = 16  # the scripts print up to this many rows and columns of each head


def weights_csv(run: WhatIfRun, head: int | None = None) -> str:
    """Long table: head, query index, query token, key index, key token, weight (every head, or one 0-based head)."""
    weights = run.weights if head is None else run.weights[head : head + 1]
    H, T, _ = weights.shape
    h, i, j = np.meshgrid(np.arange(H), np.arange(T), np.arange(T), indexing="ij")
    tok = np.asarray(run.tokens, dtype=object)
    first = 1 if head is None else head + 1
    df = pd.DataFrame(
        {
            "head": h.ravel() + first,
            "query": i.ravel() + 1,
            "query_token": tok[i.ravel()],
            "key": j.ravel() + 1,
            "key_token": tok[j.ravel()],
            "weight": weights.ravel(),
        }
    )
    return df.to_csv(index=False, float_format="%.8g")


def qkv_csv(run: WhatIfRun) -> str:
    """Long table: matrix (Q, K or V), head, token index, token, then one column per dimension."""
    frames = []
    for name, arr in (("Q", run.q), ("K", run.k), ("V", run.v)):
        H, T, d = arr.shape
        df = pd.DataFrame(arr.reshape(H * T, d), columns=[f"d{c}" for c in range(d)])
        df.insert(0, "token", [run.tokens[t] for _ in range(H) for t in range(T)])
        df.insert(0, "position", [t + 1 for _ in range(H) for t in range(T)])
        df.insert(0, "head", [hh + 1 for hh in range(H) for _ in range(T)])
        df.insert(0, "matrix", name)
        frames.append(df)
    return pd.concat(frames).to_csv(index=False, float_format="%.8g")


def output_csv(run: WhatIfRun) -> str:
    """Wide table: position, token, then the output's d_model columns."""
    df = pd.DataFrame(run.output, columns=[f"z{c}" for c in range(run.output.shape[1])])
    df.insert(0, "token", run.tokens)
    df.insert(0, "position", np.arange(1, run.T + 1))
    return df.to_csv(index=False, float_format="%.8g")


def _cfg_literal(cfg: WhatIf) -> str:
    fields = ", ".join(f"{k}={getattr(cfg, k)!r}" for k in cfg.__dataclass_fields__)
    return f"WhatIf({fields})"


_PRINT = f'''
def print_weights(weights, tokens, n={PRINT_MAX}):
    """Each head's weights, up to n rows and columns, 6 decimals."""
    print(f"weights {{tuple(weights.shape)}} (showing up to {{n}} x {{n}} per head)")
    for h, w in enumerate(weights):
        print(f"head {{h + 1}}")
        for i in range(min(n, len(tokens))):
            print(" ".join(f"{{float(x):.6f}}" for x in w[i][:n]))
'''


def snippet_core(cfg: WhatIf) -> str:
    """A standalone script (run from the repository root) that recomputes cfg with attention_core."""
    return f'''"""Attention Explorer: reproduce this setting with attention_core.
Run it from the repository root (or with attention_core on PYTHONPATH): python reproduce_attention_core.py
"""
from attention_core import WhatIf, run_whatif
{_PRINT}
cfg = {_cfg_literal(cfg)}
run = run_whatif(cfg)  # input -> W_q, W_k, W_v -> heads -> softmax(QK^T / sqrt(d_k) / temperature) -> W_o
print("tokens:", run.tokens)
print_weights(run.weights, run.tokens)
'''


@cached(max_mb=0.1)  # the file does not change while the server runs; parsing it cost ~8 ms a rerun
def _softmax_torch_source() -> str:
    """The source of attention_core.torch_attention.softmax_torch (the app's one masked softmax in torch), read
    from its file: importing the module would load torch on every page that offers the script."""
    path = Path(attention_core.__file__).with_name("torch_attention.py")
    text = path.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "softmax_torch")
    return ast.get_source_segment(text, node)


def snippet_torch(cfg: WhatIf) -> str:
    """A standalone script: the same seeded inputs (NumPy draws, as in attention_core.inputs) and
    the attention written in plain torch."""
    T = cfg.seq_len
    if cfg.input_kind == "sentence":
        build = f'''import hashlib
tokens = {cfg.sentence!r}.split()[:512]


def token_vector(token):  # one fixed vector per (token, seed)
    digest = hashlib.blake2b(f"{cfg.seed}\\x00{{token}}".encode("utf-8"), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little")).standard_normal({cfg.d_model}, dtype=np.float32)


x = np.stack([token_vector(t) for t in tokens])'''
    elif cfg.input_kind == "one_hot":
        build = f"""symbols = {cfg.pattern!r}.split()
vocab = sorted(set(symbols))
tiled = [symbols[i % len(symbols)] for i in range({T})]
tokens = [f"{{s}}{{i + 1}}" for i, s in enumerate(tiled)]
x = np.zeros(({T}, {cfg.d_model}), dtype=np.float32)
for i, s in enumerate(tiled):
    x[i, vocab.index(s) % {cfg.d_model}] = 1.0"""
    else:
        build = f"""tokens = [f"t{{i + 1}}" for i in range({T})]
x = np.random.default_rng({cfg.seed}).standard_normal(({T}, {cfg.d_model}), dtype=np.float32)"""
    pe = ""
    if cfg.positional:
        pe = f"""
pos = np.arange(len(tokens), dtype=np.float64)[:, None]
angle = pos / 10000.0 ** (np.arange(0, {cfg.d_model}, 2, dtype=np.float64) / {cfg.d_model})
pe = np.zeros((len(tokens), {cfg.d_model}))
pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle[:, : {cfg.d_model} // 2])
x = x + pe.astype(np.float32)"""
    mask_lines = ["mask = torch.ones(T, T, dtype=torch.bool)  # True = may attend"]
    if cfg.causal:
        mask_lines.append("mask &= torch.tril(torch.ones(T, T, dtype=torch.bool))  # no peeking ahead")
    if cfg.padded:
        mask_lines.append(f"mask[:, max(T - {cfg.pad_count}, 0):] = False  # the last {cfg.pad_count} keys are padding")
    scale = "1 / math.sqrt(d_k)" if cfg.scaled else "1.0"
    return f'''"""Attention Explorer: reproduce this setting in plain torch (NumPy only draws the same seeded numbers).
python reproduce_torch.py
"""
import math

import numpy as np
import torch
{_PRINT}

{_softmax_torch_source()}


# ---- input X (T, d_model), exactly as the app builds it
{build}{pe}
X = torch.from_numpy(x)
T, d_model, H = X.shape[0], {cfg.d_model}, {cfg.n_heads}
d_k = d_model // H

# ---- projection weights W_q, W_k, W_v, W_o (d_model, d_model), x @ W convention
rng = np.random.default_rng([{cfg.seed}, 7919])
W_q, W_k, W_v, W_o = (torch.from_numpy(rng.standard_normal((d_model, d_model), dtype=np.float32)
                                       * np.float32(1 / math.sqrt(d_model))) for _ in range(4))

# ---- multi-head attention
q = (X @ W_q).reshape(T, H, d_k).transpose(0, 1)  # (H, T, d_k)
k = (X @ W_k).reshape(T, H, d_k).transpose(0, 1)  # (H, T, d_k)
v = (X @ W_v).reshape(T, H, d_k).transpose(0, 1)  # (H, T, d_k)
scores = (q @ k.transpose(-2, -1)) * ({scale}) / {cfg.temperature!r}  # (H, T, T)
{chr(10).join(mask_lines)}
weights = softmax_torch(scores, mask)  # (H, T, T); blocked keys get 0, a fully masked row stays 0 (not NaN)
output = (weights @ v).transpose(0, 1).reshape(T, d_model) @ W_o  # (T, d_model)
print("tokens:", tokens)
print_weights(weights, tokens)
'''
