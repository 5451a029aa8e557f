"""One what-if experiment as a frozen, validated dataclass.

Each field declares its allowed values once (:class:`Setting` in the field's metadata); ``WhatIf(...)``
checks them and raises ``ValueError`` saying what is allowed. The UI derives its URL parser and widget
bounds from the same declarations (``ui/session/url.py``); the URL encoding is not the core's business.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Self

from .inputs import MAX_TOKENS

MASK_KINDS = ("none", "causal", "padding", "causal+padding")
INPUT_KINDS = ("random", "sentence", "one_hot")
MAX_D_MODEL = 1024
MAX_HEADS = 16
T_MIN, T_MAX = 0.1, 10.0
MAX_SEED = 2**31 - 1
MAX_TEXT = 5000  # characters kept from a typed sentence or pattern
DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired"
DEFAULT_PATTERN = "A A B A"


def allowed_heads(d_model: int) -> list[int]:
    """Head counts the app offers for ``d_model``: divisors of it, at most MAX_HEADS."""
    return [h for h in range(1, MAX_HEADS + 1) if d_model % h == 0]


def nearest_heads(d_model: int, n_heads: int) -> int:
    """The allowed head count for ``d_model`` closest to ``n_heads`` (the smaller one on a tie)."""
    return min(allowed_heads(d_model), key=lambda h: (abs(h - n_heads), h))


@dataclass(frozen=True)
class Setting:
    """How one WhatIf field may vary: declared once, used by the validation here and by the UI (URL parser,
    widget bounds)."""

    kind: str  # "int", "float", "bool", "choice" or "text"
    lo: float | None = None  # smallest allowed number (int, float)
    hi: float | None = None  # largest allowed number (int, float)
    choices: tuple[str, ...] = ()  # allowed values (choice)
    max_len: int = MAX_TEXT  # characters (text)

    def allowed(self) -> str:
        """What is allowed, in words, for messages."""
        if self.kind == "int":
            return f"an integer from {self.lo:g} to {self.hi:g}"
        if self.kind == "float":
            return f"a number from {self.lo:g} to {self.hi:g}"
        if self.kind == "bool":
            return "True or False"
        if self.kind == "choice":
            return f"one of {list(self.choices)}"
        return f"text with at least one token and at most {self.max_len} characters"

    def check(self, name: str, value) -> None:
        """Raise ValueError if ``value`` is not allowed for the field ``name``."""
        ok = {
            "int": lambda v: not isinstance(v, bool) and isinstance(v, int) and self.lo <= v <= self.hi,
            "float": lambda v: (
                not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and self.lo <= v <= self.hi
            ),
            "bool": lambda v: isinstance(v, bool),
            "choice": lambda v: v in self.choices,
            "text": lambda v: isinstance(v, str) and bool(v.split()) and len(v) <= self.max_len,
        }[self.kind](value)
        if not ok:
            shown = value if not isinstance(value, str) or len(value) < 80 else value[:40] + "..."
            raise ValueError(f"{name}={shown!r} is not allowed; it must be {self.allowed()}")


def setting(default, kind: str, **limits):
    """A dataclass field with its :class:`Setting` in the metadata."""
    return dataclasses.field(default=default, metadata={"setting": Setting(kind, **limits)})


class HeadSplit:
    """Mixin for the frozen configs whose ``d_model`` is split into ``n_heads`` heads (WhatIf, TrainConfig)."""

    @property
    def d_k(self) -> int:
        """Width of one head's queries and keys, d_model / n_heads."""
        return self.d_model // self.n_heads

    def replace(self, **changes) -> Self:
        """A copy with some fields changed (validated again by the constructor)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class WhatIf(HeadSplit):
    """The shared controls of every page. Each field declares its range once (``setting``)."""

    seq_len: int = setting(8, "int", lo=1, hi=MAX_TOKENS)  # T, tokens of the random / one-hot input
    d_model: int = setting(64, "int", lo=1, hi=MAX_D_MODEL)  # embedding width
    n_heads: int = setting(4, "int", lo=1, hi=MAX_HEADS)  # H, must divide d_model; d_k = d_model / H
    scaled: bool = setting(True, "bool")  # divide the scores by sqrt(d_k)
    temperature: float = setting(1.0, "float", lo=T_MIN, hi=T_MAX)  # divides the logits before the softmax
    mask: str = setting("none", "choice", choices=MASK_KINDS)  # which mask (see .causal and .padded)
    pad_count: int = setting(2, "int", lo=0, hi=MAX_TOKENS)  # trailing padded keys, clamped to T by the run
    input_kind: str = setting("random", "choice", choices=INPUT_KINDS)  # where the input vectors come from
    sentence: str = setting(DEFAULT_SENTENCE, "text")  # used when input_kind == "sentence"
    pattern: str = setting(DEFAULT_PATTERN, "text", max_len=200)  # one-hot symbols, tiled to seq_len
    seed: int = setting(0, "int", lo=0, hi=MAX_SEED)  # seeds the random input and the projection weights
    positional: bool = setting(False, "bool")  # add the sinusoidal positional encoding to the input

    def __post_init__(self):
        for name, spec in SETTINGS.items():
            spec.check(name, getattr(self, name))
        if self.d_model % self.n_heads:
            raise ValueError(
                f"n_heads={self.n_heads} is not allowed; d_model={self.d_model} is not divisible by it; "
                f"allowed: {allowed_heads(self.d_model)}"
            )

    @property
    def causal(self) -> bool:
        """Whether the mask hides later keys (mask "causal" or "causal+padding")."""
        return self.mask in ("causal", "causal+padding")

    @property
    def padded(self) -> bool:
        """Whether the last ``pad_count`` keys are padding (mask "padding" or "causal+padding")."""
        return self.mask in ("padding", "causal+padding")


SETTINGS: dict[str, Setting] = {f.name: f.metadata["setting"] for f in dataclasses.fields(WhatIf)}
