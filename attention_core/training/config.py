"""The settings of one training run: a frozen dataclass validated on construction.

Every field has a range; :meth:`TrainConfig.clamped` turns arbitrary (URL) values into the nearest
valid config plus a list of notices, and the constructor raises ``ValueError`` for anything invalid.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..config import HeadSplit

TASKS = ("induction", "copy", "reverse", "sort", "previous", "find_b")
TASK_LABELS = {
    "induction": "induction (repeat a random run)",
    "copy": "copy",
    "reverse": "reverse",
    "sort": "sort",
    "previous": "previous token",
    "find_b": "find the B",
}
POSITIONAL = ("learned", "sinusoidal", "rope")

# (low, high) for every numeric field; the page's sliders use the same ranges.
RANGES = {
    "n_layers": (1, 2),
    "n_heads": (1, 4),
    "d_model": (8, 64),
    "vocab": (8, 128),
    "context": (8, 64),
    "batch": (1, 256),
    "steps": (1, 5000),
    "seed": (0, 2**31 - 1),
    "lr": (1e-4, 3e-2),
    "snapshot_every": (1, 500),
}


MIN_INDUCTION_CONTEXT = 10  # periods 4..context/2 must vary: a fixed period is never offered


def positional_kinds() -> tuple[str, ...]:
    """Positional encodings on offer: learned or sinusoidal (added to the embedding) or rope (rotates q and k)."""
    return POSITIONAL


@dataclass(frozen=True)
class TrainConfig(HeadSplit):
    """One run of the tiny transformer on one task. Equal configs give bit-identical runs (one thread, one machine)."""

    task: str = "induction"  # one of TASKS
    n_layers: int = 2  # attention layers (1-2)
    n_heads: int = 2  # heads per layer (1-4), must divide d_model
    d_model: int = 32  # residual stream width (8-64)
    pos: str = "learned"  # learned or sinusoidal (added to the token embedding) or rope (rotates q, k; d_k even)
    mlp: bool = False  # add a 4*d_model ReLU MLP after each attention layer
    layernorm: bool = False  # pre-norm LayerNorm before each sub-layer and the unembedding
    vocab: int = 64  # number of symbols the task draws from (8-128)
    context: int = 32  # tokens the model sees (8-64)
    lr: float = 1e-3  # AdamW learning rate (constant)
    batch: int = 64  # sequences per step (1-256)
    seed: int = 0  # initial weights and the training batches
    steps: int = 1500  # steps the run aims for (1-5000)
    snapshot_every: int = 25  # a snapshot (weights, scores, held-out metrics) every this many steps

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task={self.task!r} is not offered; choose one of {TASKS}")
        if self.pos not in positional_kinds():
            raise ValueError(f"pos={self.pos!r} is not allowed; choose one of {positional_kinds()}")
        for name in ("mlp", "layernorm"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False; got {getattr(self, name)!r}")
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if name == "lr":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise ValueError(f"lr must be a finite number; got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer; got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name}={value} is not allowed; it must be between {low} and {high}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.pos == "rope" and self.d_k % 2:
            raise ValueError(
                f"pos='rope' rotates pairs of dimensions, so d_model / n_heads must be even; got "
                f"d_model={self.d_model}, n_heads={self.n_heads} (d_k={self.d_k})"
            )
        if self.task == "induction" and self.context < MIN_INDUCTION_CONTEXT:
            raise ValueError(
                f"induction needs context >= {MIN_INDUCTION_CONTEXT} so that the repeat length varies "
                f"(4..context/2); got context={self.context}"
            )

    @classmethod
    def clamped(cls, **raw) -> tuple[TrainConfig, list[str]]:
        """The nearest valid config to ``raw`` (strings allowed, as from a URL) and what was changed.

        Unknown keys are ignored; a value that is not a number falls back to the default; numbers are
        clamped into their range; n_heads becomes the nearest divisor of d_model.
        """
        base, notices, values = cls(), [], {}
        for f in dataclasses.fields(cls):
            if f.name not in raw or raw[f.name] is None:
                continue
            value, default = raw[f.name], getattr(base, f.name)
            if f.name in ("task", "pos"):
                allowed = TASKS if f.name == "task" else positional_kinds()
                if str(value) in allowed:
                    values[f.name] = str(value)
                else:
                    notices.append(
                        f"{f.name}={value!r} is not offered; using {default!r} (allowed: {', '.join(allowed)})"
                    )
                continue
            if f.name in ("mlp", "layernorm"):
                text = str(value).strip().lower()
                if text in ("1", "true", "on", "yes"):
                    values[f.name] = True
                elif text in ("0", "false", "off", "no", ""):
                    values[f.name] = False
                else:
                    notices.append(f"{f.name}={value!r} is not on/off; using {int(default)}")
                continue
            low, high = RANGES[f.name]
            try:
                number = float(value)
                if not math.isfinite(number):
                    raise ValueError
            except (TypeError, ValueError):
                notices.append(f"{f.name}={value!r} is not a number; using {default}")
                continue
            if f.name != "lr":
                if number != int(number):
                    notices.append(f"{f.name}={value!r} is not a whole number; rounded to {round(number)}")
                number = round(number)
            clipped = min(max(number, low), high)
            if clipped != number:
                notices.append(f"{f.name}={value} is out of range {low}-{high}; using {clipped}")
            values[f.name] = float(clipped) if f.name == "lr" else int(clipped)
        d_model = values.get("d_model", base.d_model)
        heads = values.get("n_heads", base.n_heads)
        rope = values.get("pos", base.pos) == "rope"
        if rope and d_model % 2:
            notices.append(f"pos='rope' needs an even width; using d_model={d_model + 1} instead of {d_model}")
            d_model = values["d_model"] = d_model + 1  # d_model <= 63 here, so d_model + 1 is in range
        if d_model % heads or (rope and (d_model // heads) % 2):
            divisors = [
                h
                for h in range(RANGES["n_heads"][0], RANGES["n_heads"][1] + 1)
                if d_model % h == 0 and not (rope and (d_model // h) % 2)
            ]
            nearest = min(divisors, key=lambda h: (abs(h - heads), h))
            why = (
                f"d_model={d_model} is not divisible by n_heads={heads}"
                if d_model % heads
                else f"d_model={d_model} / n_heads={heads} = {d_model // heads} is odd and rope needs an even d_k"
            )
            notices.append(f"{why}; using n_heads={nearest}")
            values["n_heads"] = nearest
        if values.get("task", base.task) == "induction" and values.get("context", base.context) < MIN_INDUCTION_CONTEXT:
            notices.append(f"induction needs context >= {MIN_INDUCTION_CONTEXT}; using {MIN_INDUCTION_CONTEXT}")
            values["context"] = MIN_INDUCTION_CONTEXT
        return cls(**values), notices
