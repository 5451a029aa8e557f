"""Train the Train page's tiny transformer with torch alone and print its loss curve.

This file stands alone (it needs only torch): it is the page's export, with the run's settings in
CONFIG below. It draws the same initial weights and the same batches from the same seed as the page
(attention_core.training), so on one thread it prints the same losses, step for step.

    python train_tiny_transformer.py [--steps N]
"""

import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

CONFIG = {"task": "induction", "n_layers": 2, "n_heads": 2, "d_model": 32, "pos": "learned", "mlp": False, "layernorm": False, "vocab": 64, "context": 32, "lr": 0.001, "batch": 64, "seed": 0, "steps": 1500}  # noqa: E501  # fmt: skip
PERIOD_MIN, PERIOD_MAX = 4, 16  # induction repeat lengths, drawn per sequence


# ----------------------------------------------------------------------------------------- data
def make_batch(cfg, gen, n):
    """(tokens (B, T), targets (B, T), loss_mask (B, T)) of cfg["task"], drawn from gen."""
    T, vocab, task = cfg["context"], cfg["vocab"], cfg["task"]
    if task == "induction":
        high = min(PERIOD_MAX, T // 2, vocab)
        p = torch.randint(PERIOD_MIN, high + 1, (n,), generator=gen)  # (B,) a repeat length per sequence
        run = torch.argsort(torch.rand(n, vocab, generator=gen), dim=-1)[:, :high]  # (B, high) distinct
        seq = torch.gather(run, 1, torch.arange(T + 1)[None, :] % p[:, None])  # (B, T+1)
        return seq[:, :-1], seq[:, 1:], torch.ones(n, T, dtype=torch.bool)
    if task in ("copy", "reverse", "sort"):
        half = T // 2
        x = torch.randint(0, vocab, (n, half), generator=gen)  # (B, half)
        answer = {"copy": x, "reverse": x.flip(-1), "sort": x.sort(dim=-1).values}[task]
        sep = torch.full((n, 1), vocab, dtype=torch.int64)
        seq = torch.cat([x, sep, answer], dim=1)  # (B, 2*half+1)
        if seq.shape[1] < T + 1:
            seq = torch.cat([seq, sep], dim=1)
        mask = torch.zeros(n, T, dtype=torch.bool)
        mask[:, half : 2 * half] = True
        return seq[:, :-1], seq[:, 1:], mask
    if task == "previous":
        x = torch.randint(0, vocab, (n, T), generator=gen)  # (B, T)
        mask = torch.ones(n, T, dtype=torch.bool)
        mask[:, 0] = False
        return x, torch.cat([x[:, :1], x[:, :-1]], dim=1), mask
    x = 1 + torch.randint(0, vocab - 1, (n, T), generator=gen)  # find_b: fillers 1..vocab-1
    b_pos = torch.randint(0, T, (n,), generator=gen)  # (B,)
    x[torch.arange(n), b_pos] = 0  # the B
    return x, b_pos[:, None].expand(n, T).clone(), torch.ones(n, T, dtype=torch.bool)


# ---------------------------------------------------------------------------------------- model
def masked_softmax(z, mask):
    """Softmax over the last dim; blocked entries (mask False) get 0, a fully masked row is all 0."""
    if mask is None:
        return torch.softmax(z, dim=-1)
    z = z.masked_fill(~mask, float("-inf"))
    z_max = z.amax(dim=-1, keepdim=True)
    z_max = torch.where(torch.isfinite(z_max), z_max, torch.zeros_like(z_max))
    e = torch.exp(z - z_max)
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def rope(x, base=10000.0):
    """Rotate each pair (2i, 2i+1) of x's last dim by t * base^(-2i/d), t the token index (RoPE, Su et al. 2021)."""
    T, d = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]  # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2) each
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rotated = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)  # (..., T, d/2, 2)
    return rotated.flatten(-2)  # (..., T, d)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, rotary=False):
        super().__init__()
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.rotary = rotary  # rotate q and k by position (pos = "rope")
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask):
        B, T, _ = x.shape
        H, d_k = self.n_heads, self.d_k
        q = self.W_q(x).reshape(B, T, H, d_k).transpose(-3, -2)  # (B, H, T, d_k)
        k = self.W_k(x).reshape(B, T, H, d_k).transpose(-3, -2)  # (B, H, T, d_k)
        v = self.W_v(x).reshape(B, T, H, d_k).transpose(-3, -2)  # (B, H, T, d_k)
        if self.rotary:
            q, k = rope(q), rope(k)  # (B, H, T, d_k) each, rotated by position
        if mask is not None:
            mask = mask.unsqueeze(-3)  # (1, T, T) the same for every head
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, T)
        weights = masked_softmax(scores, mask)  # (B, H, T, T)
        z = (weights @ v).transpose(-3, -2).reshape(B, T, self.d_model)  # (B, T, d_model)
        return self.W_o(z), weights


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.ln_attn = nn.LayerNorm(d) if cfg["layernorm"] else nn.Identity()
        self.attn = MultiHeadSelfAttention(d, cfg["n_heads"], rotary=cfg["pos"] == "rope")
        self.ln_mlp = nn.LayerNorm(d) if (cfg["layernorm"] and cfg["mlp"]) else nn.Identity()
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d)) if cfg["mlp"] else None

    def forward(self, x, mask):
        out, _ = self.attn(self.ln_attn(x), mask)
        x = x + out
        if self.mlp is not None:
            x = x + self.mlp(self.ln_mlp(x))
        return x


def sinusoidal(T, d):
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # (T, ceil(d/2))
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe.float()


class TinyTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, T = cfg["d_model"], cfg["context"]
        self.tok_emb = nn.Embedding(cfg["vocab"] + 1, d)
        if cfg["pos"] == "learned":
            self.pos_emb = nn.Parameter(torch.zeros(T, d))
        elif cfg["pos"] == "sinusoidal":
            self.register_buffer("pos_emb", sinusoidal(T, d), persistent=False)
        else:
            self.pos_emb = None  # rope: positions rotate q and k inside attention instead
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg["n_layers"]))
        self.ln_f = nn.LayerNorm(d) if cfg["layernorm"] else nn.Identity()
        self.unembed = nn.Linear(d, max(cfg["vocab"] + 1, T), bias=False)
        causal = cfg["task"] != "find_b"
        self.register_buffer(
            "mask", torch.tril(torch.ones(T, T, dtype=torch.bool)) if causal else None, persistent=False
        )

    def forward(self, tokens):
        x = self.tok_emb(tokens)  # (B, T, d_model)
        if self.pos_emb is not None:
            x = x + self.pos_emb[: tokens.shape[1]]  # (B, T, d_model)
        for block in self.blocks:
            x = block(x, self.mask)
        return self.unembed(self.ln_f(x))  # (B, T, V_out)


def init_weights(model, seed):
    """Draw every parameter from a private generator seeded with ``seed`` (the global RNG is never touched),
    in module order, with PyTorch's default distributions: nn.Linear weights and biases
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), embeddings and learned positions N(0, 1), LayerNorm gain 1, bias 0.
    (attention_core.training.model uses this very function, so the page and this script agree.)"""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                bound = module.in_features**-0.5
                module.weight.uniform_(-bound, bound, generator=gen)
                if module.bias is not None:
                    module.bias.uniform_(-bound, bound, generator=gen)
            elif isinstance(module, nn.Embedding):
                module.weight.normal_(0.0, 1.0, generator=gen)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.fill_(0.0)
            elif module is model and isinstance(getattr(module, "pos_emb", None), nn.Parameter):
                module.pos_emb.normal_(0.0, 1.0, generator=gen)
    return model


# ------------------------------------------------------------------------------------- training
def train(cfg, steps):
    """Yield (step, loss) for steps 1..steps."""
    torch.set_num_threads(1)
    model = init_weights(TinyTransformer(cfg), cfg["seed"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    gen = torch.Generator().manual_seed(cfg["seed"] + 1)
    for step in range(1, steps + 1):
        tokens, targets, mask = make_batch(cfg, gen, cfg["batch"])
        logits = model(tokens)  # (B, T, V_out)
        loss = F.cross_entropy(logits[mask], targets[mask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        yield step, loss.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Train the tiny transformer and print its loss curve.")
    parser.add_argument("--steps", type=int, default=CONFIG["steps"])
    args = parser.parse_args()
    for step, loss in train(CONFIG, args.steps):
        print(f"step {step:5d}  loss {loss:.6f}")
