"""Streamlit plumbing of the Train page: the server-wide training queue, the per-session step budget,
loading the shipped trajectories and views of a snapshot (ui/compute.py declares their caches).

Thirty students share one process on two cores, so live training is rationed:
- at most ``MAX_CONCURRENT`` sessions train at once; the others wait in a first-come queue and see their
  place in it (a slot is freed when its session pauses, finishes, or stops asking for ``SLOT_TIMEOUT`` s);
- a session may take at most ``STEP_BUDGET`` live steps in all (the ready experiments cost nothing);
- each rerun trains one small chunk (``CHUNK_SECONDS``), so the GIL is released between reruns and other
  pages keep answering; torch uses one thread.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import torch

from attention_core.training import TrainConfig, Trainer, probe_batch
from attention_core.training.inspect import (
    QKPicture,
    attention_parity,
    model_from_params,
    probe_maps,
    query_key_picture,
)
from attention_core.training.ready import READY_BY_NAME, ready_path
from attention_core.training.trajectory import Trajectory, find_phase_change, load_trajectory

torch.set_num_threads(1)

MAX_CONCURRENT = 2  # live trainings at once, server-wide
SLOT_TIMEOUT = 10.0  # seconds without a request after which a slot or a place in the queue is given up
STEP_BUDGET = 3000  # live steps one session may take
CHUNK_SECONDS = 0.08  # training time per rerun of the live fragment
CHUNK_MAX_STEPS = 25  # and at most this many steps per rerun


class TrainingQueue:
    """A non-blocking, first-come limit on concurrent trainings, shared by every session of the process.

    ``request(who)`` returns 0 when ``who`` may train now (it holds a slot until ``release``), else its
    place in the queue (1 = next). Holders and waiters that stop asking for ``timeout`` seconds are dropped,
    so a closed browser tab never keeps a slot.
    """

    def __init__(self, limit: int = MAX_CONCURRENT, timeout: float = SLOT_TIMEOUT, clock=time.monotonic):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an integer >= 1; got {limit!r}")
        self.limit, self.timeout, self.clock = limit, float(timeout), clock
        self._lock = threading.Lock()
        self._active: dict[str, float] = {}  # holder -> last request time
        self._waiting: OrderedDict[str, float] = OrderedDict()  # waiter -> last request time, in arrival order

    def _expire(self, now: float) -> None:
        for table in (self._active, self._waiting):
            for who in [w for w, seen in table.items() if now - seen > self.timeout]:
                del table[who]

    def request(self, who: str) -> int:
        """0 if ``who`` holds (or now gets) a slot, else its 1-based place in the queue."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if who in self._active:
                self._active[who] = now
                return 0
            if who not in self._waiting:
                self._waiting[who] = now
            self._waiting[who] = now
            order = list(self._waiting)
            free = self.limit - len(self._active)
            if order.index(who) < free:  # first come, first served
                del self._waiting[who]
                self._active[who] = now
                return 0
            return order.index(who) - max(free, 0) + 1

    def release(self, who: str) -> None:
        """Give up a slot or a place in the queue (no-op if ``who`` has neither)."""
        with self._lock:
            self._active.pop(who, None)
            self._waiting.pop(who, None)

    def status(self) -> tuple[int, int]:
        """(trainings running, sessions waiting)."""
        with self._lock:
            self._expire(self.clock())
            return len(self._active), len(self._waiting)


QUEUE = TrainingQueue()


def train_chunk(
    trainer: Trainer, stop_at: int, budget_left: int, seconds: float = CHUNK_SECONDS, max_steps: int = CHUNK_MAX_STEPS
) -> int:
    """Train until ``seconds`` have passed, ``max_steps`` were taken, ``stop_at`` is reached or the budget is
    spent; returns the steps taken (>= 1 unless there is nothing to do)."""
    taken, start = 0, time.perf_counter()
    while taken < min(max_steps, budget_left) and trainer.step < stop_at:
        trainer.train(1)
        taken += 1
        if time.perf_counter() - start > seconds:
            break
    return taken


def load_ready(name: str) -> Trajectory:
    """The shipped run ``name`` (one of READY_BY_NAME), read from trajectories/ (ui.compute caches it)."""
    if name not in READY_BY_NAME:
        raise ValueError(f"no ready experiment {name!r}; choose one of {sorted(READY_BY_NAME)}")
    return load_trajectory(ready_path(name))


@dataclass(frozen=True)
class SnapshotView:
    """Everything the page draws for one snapshot (read-only)."""

    maps: np.ndarray  # (L, H, T, T) attention of every head on the probe
    tokens: tuple[str, ...]  # the probe's tokens as labels
    parity: float  # max |torch - attention_core NumPy| of the attention weights (float64 run)
    parity32: float  # the same with the model in float32, as it trains
    qk: QKPicture  # the chosen head's queries and keys


def probe_labels(cfg: TrainConfig) -> tuple[str, ...]:
    """Short unique labels of the probe's tokens: the symbol (SEP for the separator, B for find_b's B), with a
    prime for each earlier occurrence (38, 38′, 38″, ...), so a repeated token is easy to follow."""
    counts: dict[str, int] = {}
    names = []
    for t in probe_batch(cfg).tokens[0].tolist():
        name = "SEP" if t == cfg.vocab else ("B" if cfg.task == "find_b" and t == 0 else str(t))
        seen = counts.get(name, 0)
        counts[name] = seen + 1
        names.append(name + ("′" * seen if seen < 4 else f"({seen})"))
    return tuple(names)


def snapshot_view(cfg: TrainConfig, params: np.ndarray, layer: int, head: int) -> SnapshotView:
    """Maps, parity and the query/key picture of the weights ``params`` (float16 or float32 vector)."""
    model = model_from_params(cfg, params)
    tokens = probe_batch(cfg).tokens
    return SnapshotView(
        probe_maps(model, tokens),
        probe_labels(cfg),
        attention_parity(model, tokens)[2],
        attention_parity(model, tokens, dtype=torch.float32)[2],
        query_key_picture(model, tokens, layer, head),
    )


def best_prefix_matching(traj: Trajectory) -> np.ndarray:
    """(S,) the best head's prefix-matching score at every snapshot (NaN when not measured)."""
    s = traj.scores[..., 1]
    return np.full(len(traj.steps), np.nan) if np.isnan(s).all() else np.nanmax(s, axis=(1, 2))


def phase_change_step(traj: Trajectory) -> int | None:
    """The step of the induction phase change (prefix-matching jumps), or None."""
    best = best_prefix_matching(traj)
    return None if np.isnan(best).all() else find_phase_change(traj.steps, best)


def most_telling_head(scores: np.ndarray) -> tuple[int, int]:
    """``(layer, head)``, 0-based, of the head to look at first in one snapshot's ``(L, H, 3)`` scores: the best
    prefix-matching head, else (where that was not measured) the best attention-on-B head, else previous-token."""
    k = next((k for k in (1, 2, 0) if not np.isnan(scores[..., k]).all()), 0)
    layer, head = np.unravel_index(np.nanargmax(scores[..., k]), scores.shape[:2])
    return int(layer), int(head)
