"""The live run of the Train page: one session's trainer and what its buttons do (play, pause, +1 step, reset),
rationed by the server-wide training queue and the session's step budget (ui/lessons/train/rationing.py).

A run is paused (the buttons train one step or start playing) or playing: the page's live fragment reruns itself
every ``TICK`` seconds and each rerun trains one chunk (:meth:`LiveRun.tick`) while the queue gives the session a
slot. Playing stops by itself at the run's length, at the step a link had reached (the link retrains exactly to
it: same settings and seed, same run), or when the budget is spent. Changing a setting starts a new run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import streamlit as st

from attention_core.training import TrainConfig, Trainer
from ui.lessons.train.rationing import QUEUE, STEP_BUDGET, train_chunk

KEY = "tr_live"  # the session's LiveRun in st.session_state (not a widget: it survives page switches)
TICK = 0.3  # seconds between the reruns of a playing run's fragment


@dataclass(eq=False)
class LiveRun:
    """One session's live run. The buttons' callbacks change it before the page draws, so the page (and the
    buttons' disabled states) always show the state the click made."""

    target: int = 0  # the step a link had reached: the run plays exactly to it (0: none)
    sid: str = field(default_factory=lambda: uuid.uuid4().hex)  # this session in the training queue
    trainer: Trainer | None = None
    playing: bool = False
    used: int = 0  # live steps this session has taken (at most STEP_BUDGET)
    moved: bool = False  # the run moved since the page last drew it: the page then shows the newest snapshot

    @classmethod
    def of_session(cls, link_step: int) -> LiveRun:
        """The session's live run; the first one made plays to ``link_step`` (the link's step=) when it is > 0."""
        if KEY not in st.session_state:
            st.session_state[KEY] = cls(target=link_step)
        return st.session_state[KEY]

    def use(self, cfg: TrainConfig) -> Trainer:
        """The run of the setting ``cfg``: a new run when the setting changed (it waits paused, unless a link
        asks it to retrain to a step; a changed setting forgets the link's step)."""
        if self.trainer is None or self.trainer.cfg != cfg:
            if self.trainer is not None:
                self.target = 0
            QUEUE.release(self.sid)
            self.trainer = Trainer(cfg)
            self.playing, self.moved = self.target > 0, True
        return self.trainer

    @property
    def stop_at(self) -> int:
        """The step where playing stops: the link's step, else the run's length."""
        return self.target or self.trainer.cfg.steps

    def play(self) -> None:
        self.playing = True

    def pause(self) -> None:
        self.playing = False
        QUEUE.release(self.sid)

    def single_step(self) -> None:
        """+1 step (within the budget)."""
        if self.used < STEP_BUDGET:
            self.trainer.train(1)
            self.used += 1
        self.moved = True

    def reset(self) -> None:
        """The same setting from its first step, paused."""
        QUEUE.release(self.sid)
        self.trainer = Trainer(self.trainer.cfg)
        self.playing, self.target, self.moved = False, 0, True

    def tick(self) -> int:
        """One rerun of a playing run: stop where it stops (``playing`` is then False, and the page reruns whole to
        redraw its buttons and end the timer), else train one chunk if the queue gives this session a slot.
        Returns the session's place in the queue (0: it holds a slot)."""
        place = QUEUE.request(self.sid)
        left = STEP_BUDGET - self.used
        if left <= 0 or self.trainer.step >= self.stop_at:
            self.playing, self.target = False, 0
            QUEUE.release(self.sid)
        elif not place:
            self.used += train_chunk(self.trainer, self.stop_at, left)
            self.moved = True
        return place
