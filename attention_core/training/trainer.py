"""Train the tiny transformer step by step and keep snapshots along the way.

A :class:`Trainer` owns a model, an AdamW optimiser (constant learning rate) and the generator of the
training batches; ``train(n)`` takes n steps. Every ``snapshot_every`` steps (and at step 0) it keeps a
:class:`Snapshot`: the weights (float16), the held-out loss and accuracy, and every head's scores.
Runs are deterministic from ``cfg.seed`` when torch uses one thread (``torch.set_num_threads(1)``):
the same config gives bit-identical losses and weights on one machine, however the steps are split into calls
(another CPU's float32 kernels may round differently).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .config import TrainConfig
from .model import TinyTransformer, build_model, flat_parameters
from .scores import head_scores
from .tasks import Batch, heldout_batch, make_batch, score_batch

MAX_SNAPSHOTS = 200  # a run keeps at most this many snapshots (the interval grows for long runs)


@dataclass(frozen=True)
class Snapshot:
    """The state of a run at one step."""

    step: int  # optimiser steps taken
    params: np.ndarray  # (P,) float16 every parameter, in named_parameters order
    heldout_loss: float  # mean cross-entropy on the held-out set (nats)
    heldout_acc: float  # share of correct argmax predictions on the held-out set's scored positions
    scores: np.ndarray  # (L, H, 3) float32 previous-token, prefix-matching, attention-on-B (NaN if n/a)


def snapshot_interval(cfg: TrainConfig) -> int:
    """Steps between snapshots: cfg.snapshot_every, widened so a run keeps at most MAX_SNAPSHOTS + 1."""
    return max(cfg.snapshot_every, math.ceil(cfg.steps / MAX_SNAPSHOTS))


def loss_and_accuracy(logits: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy over the loss mask and accuracy over the scored positions.

    Args:
        logits: ``(B, T, V_out)``; batch: the :class:`Batch` it was computed on.

    Returns:
        ``(loss, accuracy)`` scalar tensors (the loss carries gradients).
    """
    loss = F.cross_entropy(logits[batch.loss_mask], batch.targets[batch.loss_mask])
    scored = batch.scored
    correct = (logits.detach().argmax(-1) == batch.targets)[scored]
    return loss, correct.float().mean()


@torch.no_grad()
def evaluate(model: TinyTransformer, heldout: Batch, scoring: Batch) -> tuple[float, float, np.ndarray]:
    """Held-out loss and accuracy, and the head scores on the scoring batch (see :func:`head_scores`)."""
    logits, _ = model(heldout.tokens)
    loss, acc = loss_and_accuracy(logits, heldout)
    _, weights = model(scoring.tokens)  # n_layers x (B, H, T, T)
    period = None if scoring.period is None else scoring.period.numpy()
    b_pos = None if scoring.b_pos is None else scoring.b_pos.numpy()
    scores = head_scores([w.numpy() for w in weights], period, b_pos)  # (L, H, 3)
    return float(loss), float(acc), scores


class Trainer:
    """One training run of ``cfg``: ``train(n)`` steps on, ``snapshots`` and the per-step curves grow.

    Attributes:
        step: steps taken; train_loss / train_acc: one float per step (lists);
        snapshots: list of :class:`Snapshot`, at step 0 and every :func:`snapshot_interval` steps.
    """

    def __init__(self, cfg: TrainConfig):
        if not isinstance(cfg, TrainConfig):
            raise ValueError(f"cfg must be a TrainConfig; got {type(cfg).__name__}")
        self.cfg = cfg
        self.model = build_model(cfg)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 1)  # the training batches
        self.heldout, self.scoring = heldout_batch(cfg), score_batch(cfg)
        self.interval = snapshot_interval(cfg)
        self.step = 0
        self.train_loss: list[float] = []
        self.train_acc: list[float] = []
        self.snapshots: list[Snapshot] = [self.snapshot()]

    def snapshot(self) -> Snapshot:
        """The current state (weights as float16, held-out metrics, head scores); not stored."""
        loss, acc, scores = evaluate(self.model, self.heldout, self.scoring)
        params = flat_parameters(self.model).numpy().astype(np.float16)
        return Snapshot(self.step, params, loss, acc, scores)

    def train(self, n_steps: int) -> Trainer:
        """Take ``n_steps`` optimiser steps (>= 0), keeping snapshots on the interval."""
        if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 0:
            raise ValueError(f"n_steps must be an integer >= 0; got {n_steps!r}")
        self.model.train()
        for _ in range(n_steps):
            batch = make_batch(self.cfg, self.gen, self.cfg.batch)
            logits, _ = self.model(batch.tokens)  # (B, T, V_out)
            loss, acc = loss_and_accuracy(logits, batch)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.step += 1
            self.train_loss.append(loss.item())
            self.train_acc.append(acc.item())
            if self.step % self.interval == 0:
                self.snapshots.append(self.snapshot())
        return self
