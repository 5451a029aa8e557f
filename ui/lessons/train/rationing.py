"""The Train page's live training on the server: the server-wide training queue, the per-session step budget
and one chunk of training per rerun. (The views of a run, the shipped ones included, are
attention_core/training/views.py; ui/compute.py declares their caches.)

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

import torch

from attention_core.training import Trainer

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
