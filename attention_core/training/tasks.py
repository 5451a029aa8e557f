"""The toy tasks, generated on the fly from a torch.Generator (so a seed fixes every batch).

Every task gives a :class:`Batch`: input tokens, the target at every position and a loss mask
(True where the position is scored). Symbols are 0 .. vocab-1; token ``vocab`` is the separator SEP.

    induction  a run of p distinct random symbols repeated to fill the context, p drawn per sequence
               from 4..16 (never a fixed period: with one period a single layer fakes it with a
               fixed-offset head); predict the next token (repeated positions are predictable).
    copy       x_1..x_n SEP x_1..x_n, predict the second half.
    reverse    x_1..x_n SEP x_n..x_1.
    sort       x_1..x_n SEP sorted(x).
    previous   every position outputs the token before it.
    find_b     the class-notes sequence: filler symbols and one B (symbol 0); every position outputs
               where the B is (bidirectional attention: the B may come after the query).

Shapes: B batch, T = context tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import TASKS, TrainConfig

PERIOD_MIN, PERIOD_MAX = 4, 16  # induction repeat lengths (inclusive), drawn per sequence
HELDOUT_SEED, SCORE_SEED, PROBE_SEED = 1_000_003, 1_000_033, 1_000_037  # fixed: the same for every run
HELDOUT_SIZE, SCORE_SIZE = 256, 64
B_SYMBOL = 0  # find_b: the token to find


@dataclass(frozen=True)
class Batch:
    """One batch of a task (tensors, not to be modified)."""

    tokens: torch.Tensor  # (B, T) int64 inputs
    targets: torch.Tensor  # (B, T) int64, the output wanted at every position
    loss_mask: torch.Tensor  # (B, T) bool, True where the position is scored (loss and accuracy)
    period: torch.Tensor | None = None  # (B,) int64 induction repeat length, else None
    b_pos: torch.Tensor | None = None  # (B,) int64 find_b position of the B, else None
    acc_mask: torch.Tensor | None = None  # (B, T) bool positions that count for accuracy (None: loss_mask)

    @property
    def scored(self) -> torch.Tensor:
        """(B, T) bool: the positions accuracy is measured on."""
        return self.loss_mask if self.acc_mask is None else self.acc_mask


def period_range(cfg: TrainConfig) -> tuple[int, int]:
    """Induction repeat lengths (low, high), inclusive: 4..16, capped by context/2 and the vocab."""
    high = min(PERIOD_MAX, cfg.context // 2, cfg.vocab)
    if high <= PERIOD_MIN:
        raise ValueError(
            f"induction needs varying periods: context={cfg.context} and vocab={cfg.vocab} allow only "
            f"{PERIOD_MIN}..{high}; use context >= {2 * PERIOD_MIN + 2} and vocab >= {PERIOD_MIN + 1}"
        )
    return PERIOD_MIN, high


def vocab_sizes(cfg: TrainConfig) -> tuple[int, int]:
    """(input tokens, output classes): symbols plus SEP in; find_b outputs positions, so >= context out."""
    return cfg.vocab + 1, max(cfg.vocab + 1, cfg.context)


def is_causal(task: str) -> bool:
    """Every task but find_b is a left-to-right (causal) task."""
    if task not in TASKS:
        raise ValueError(f"task={task!r} is not offered; choose one of {TASKS}")
    return task != "find_b"


def _symbols(gen: torch.Generator, shape, vocab: int) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=gen)


def induction_batch(
    gen: torch.Generator, n: int, T: int, vocab: int, periods: tuple[int, int], fixed_period: int | None = None
) -> Batch:
    """Runs of distinct random symbols repeated to fill T + 1 tokens; next-token targets.

    ``fixed_period`` is only for the probe sequence drawn on the page; training never uses it.
    """
    low, high = periods
    if fixed_period is None:
        p = torch.randint(low, high + 1, (n,), generator=gen)  # (B,)
    else:
        p = torch.full((n,), int(fixed_period), dtype=torch.int64)
    run = torch.argsort(torch.rand(n, vocab, generator=gen), dim=-1)[:, :high]  # (B, high) distinct symbols
    t = torch.arange(T + 1)  # (T+1,)
    seq = torch.gather(run, 1, t[None, :] % p[:, None])  # (B, T+1): seq[b, t] = run[b, t mod p_b]
    mask = torch.ones(n, T, dtype=torch.bool)  # every next token is in the loss (the first run is a guess)
    predictable = t[None, :-1] >= p[:, None] - 1  # (B, T): the target t + 1 repeats an earlier token
    return Batch(seq[:, :-1], seq[:, 1:], mask, period=p, acc_mask=predictable)


def _sequence_task(gen: torch.Generator, task: str, n: int, T: int, vocab: int) -> Batch:
    half = T // 2  # x_1..x_half SEP answer: 2 * half + 1 <= T + 1 tokens
    x = _symbols(gen, (n, half), vocab)  # (B, half)
    answer = {"copy": x, "reverse": x.flip(-1), "sort": x.sort(dim=-1).values}[task]
    sep = torch.full((n, 1), vocab, dtype=torch.int64)
    seq = torch.cat([x, sep, answer], dim=1)  # (B, 2*half+1)
    if seq.shape[1] < T + 1:
        seq = torch.cat([seq, sep], dim=1)  # odd T: one trailing SEP, not scored
    mask = torch.zeros(n, T, dtype=torch.bool)
    mask[:, half : 2 * half] = True  # positions half..2half-1 predict the answer tokens
    return Batch(seq[:, :-1], seq[:, 1:], mask)


def make_batch(cfg: TrainConfig, gen: torch.Generator, n: int) -> Batch:
    """A batch of ``n`` sequences of ``cfg.task``, drawn from ``gen``."""
    T, vocab = cfg.context, cfg.vocab
    if cfg.task == "induction":
        return induction_batch(gen, n, T, vocab, period_range(cfg))
    if cfg.task in ("copy", "reverse", "sort"):
        return _sequence_task(gen, cfg.task, n, T, vocab)
    if cfg.task == "previous":
        x = _symbols(gen, (n, T), vocab)  # (B, T)
        targets = torch.cat([x[:, :1], x[:, :-1]], dim=1)  # (B, T): the token before (position 0 unscored)
        mask = torch.ones(n, T, dtype=torch.bool)
        mask[:, 0] = False
        return Batch(x, targets, mask)
    # find_b
    x = 1 + _symbols(gen, (n, T), vocab - 1)  # (B, T) fillers 1..vocab-1
    b_pos = torch.randint(0, T, (n,), generator=gen)  # (B,)
    x[torch.arange(n), b_pos] = B_SYMBOL
    targets = b_pos[:, None].expand(n, T).clone()  # (B, T): every position outputs where B is
    return Batch(x, targets, torch.ones(n, T, dtype=torch.bool), b_pos=b_pos)


def heldout_batch(cfg: TrainConfig) -> Batch:
    """The fixed held-out set of the task (its own seed, the same for every run)."""
    return make_batch(cfg, torch.Generator().manual_seed(HELDOUT_SEED), HELDOUT_SIZE)


def score_batch(cfg: TrainConfig) -> Batch:
    """Sequences the head scores are measured on: repeated random runs (periods 4-16) for the causal
    tasks, find_b sequences for find_b. Fixed seed, independent of the run."""
    gen = torch.Generator().manual_seed(SCORE_SEED)
    if cfg.task == "find_b":
        return make_batch(cfg, gen, SCORE_SIZE)
    low, high = PERIOD_MIN, max(PERIOD_MIN + 1, min(PERIOD_MAX, cfg.context // 2, cfg.vocab))
    return induction_batch(gen, SCORE_SIZE, cfg.context, cfg.vocab, (low, high))


def probe_batch(cfg: TrainConfig) -> Batch:
    """The one sequence whose attention maps the page draws (batch of 1); induction uses period 10 or less."""
    gen = torch.Generator().manual_seed(PROBE_SEED)
    if cfg.task == "induction":
        low, high = period_range(cfg)
        return induction_batch(gen, 1, cfg.context, cfg.vocab, (low, high), fixed_period=min(10, high))
    return make_batch(cfg, gen, 1)
