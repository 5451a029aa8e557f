"""Take a run home: its weights as ``.npz`` and a standalone torch-only script that retrains it.

The script is ``standalone_train.py`` (a complete file that needs only torch) with the run's settings
written into its CONFIG line; on one thread it prints the same losses as :class:`Trainer`.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .config import TrainConfig
from .inspect import model_from_params

_TEMPLATE = Path(__file__).with_name("standalone_train.py")
_CONFIG_PREFIX = "CONFIG = "


def weights_npz(cfg: TrainConfig, params) -> bytes:
    """The weights of a snapshot as ``.npz`` bytes: one float32 array per named parameter (``blocks.0.attn.W_q.weight``
    ... in nn.Linear's (out, in) layout) and ``config`` (the run's settings as JSON)."""
    model = model_from_params(cfg, params)
    arrays = {name: p.detach().numpy().astype(np.float32) for name, p in model.named_parameters()}
    buf = io.BytesIO()
    np.savez(buf, config=np.array(json.dumps(asdict(cfg), sort_keys=True)), **arrays)
    return buf.getvalue()


def standalone_script(cfg: TrainConfig) -> str:
    """The torch-only training script for ``cfg`` (the template with its CONFIG line replaced)."""
    if not isinstance(cfg, TrainConfig):
        raise ValueError(f"cfg must be a TrainConfig; got {type(cfg).__name__}")
    settings = {k: v for k, v in asdict(cfg).items() if k != "snapshot_every"}
    lines = _TEMPLATE.read_text().splitlines(keepends=True)
    if sum(line.startswith(_CONFIG_PREFIX) for line in lines) != 1:
        raise ValueError(f"{_TEMPLATE.name} must have exactly one line starting with {_CONFIG_PREFIX!r}")
    out = [
        (
            f"{_CONFIG_PREFIX}{json.dumps(settings).replace('true', 'True').replace('false', 'False')}  # noqa: E501\n"
            if line.startswith(_CONFIG_PREFIX)
            else line
        )
        for line in lines
    ]
    return "".join(out)
