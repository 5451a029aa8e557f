"""Views of a training run for the Train page, without Streamlit: the shipped runs, one snapshot's maps, parity and
query/key picture, the phase change and the head to look at first (ui/compute.py caches them; ui/lessons/train/rationing.py
holds the server's training queue)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .config import TrainConfig
from .inspect import QKPicture, attention_parity, model_from_params, probe_maps, query_key_picture
from .ready import READY_BY_NAME, ready_path
from .tasks import probe_batch
from .trajectory import Trajectory, find_phase_change, load_trajectory


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
