"""One what-if experiment as a frozen, validated dataclass, and its round trip through a URL.

``WhatIf(...)`` raises ``ValueError`` for anything out of range. ``WhatIf.from_query_params``
never raises: it clamps or replaces bad values and returns notices that say what it changed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping

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

# URL parameter name for each field (short, stable: these names are in shared links).
PARAM_NAMES = {
    "seq_len": "seq_len", "d_model": "d_model", "n_heads": "heads", "scaled": "scaled",
    "temperature": "temperature", "mask": "mask", "pad_count": "pad", "input_kind": "input",
    "sentence": "sentence", "pattern": "pattern", "seed": "seed", "positional": "pe",
}


def allowed_heads(d_model: int) -> list[int]:
    """Head counts the app offers for ``d_model``: divisors of it, at most MAX_HEADS."""
    return [h for h in range(1, MAX_HEADS + 1) if d_model % h == 0]


def nearest_heads(d_model: int, n_heads: int) -> int:
    """The allowed head count for ``d_model`` closest to ``n_heads`` (the smaller one on a tie)."""
    return min(allowed_heads(d_model), key=lambda h: (abs(h - n_heads), h))


@dataclass(frozen=True)
class WhatIf:
    """The shared controls of every page."""

    seq_len: int = 8  # T, number of tokens (random input; the sentence / pattern set it otherwise)
    d_model: int = 64  # embedding width
    n_heads: int = 4  # H, must divide d_model; d_k = d_model / H
    scaled: bool = True  # divide the scores by sqrt(d_k)
    temperature: float = 1.0  # divides the logits before the softmax, 0.1 .. 10
    mask: str = "none"  # one of MASK_KINDS
    pad_count: int = 0  # trailing padded keys for the padding mask, 0 .. seq_len
    input_kind: str = "random"  # one of INPUT_KINDS
    sentence: str = DEFAULT_SENTENCE  # used when input_kind == "sentence"
    pattern: str = DEFAULT_PATTERN  # one-hot symbols, tiled to seq_len, when input_kind == "one_hot"
    seed: int = 0  # seeds the random input and the projection weights
    positional: bool = False  # add the sinusoidal positional encoding to the input

    def __post_init__(self):
        def bad(name, value, allowed):
            raise ValueError(f"{name}={value!r} is not allowed; {allowed}")

        for name, hi in (("seq_len", MAX_TOKENS), ("d_model", MAX_D_MODEL), ("n_heads", MAX_HEADS)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi:
                bad(name, v, f"it must be an integer from 1 to {hi}")
        if self.d_model % self.n_heads:
            bad("n_heads", self.n_heads, f"d_model={self.d_model} is not divisible by it; allowed: {allowed_heads(self.d_model)}")
        if not isinstance(self.scaled, bool):
            bad("scaled", self.scaled, "it must be True or False")
        if not isinstance(self.positional, bool):
            bad("positional", self.positional, "it must be True or False")
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not T_MIN <= t <= T_MAX:
            bad("temperature", t, f"it must be a number from {T_MIN} to {T_MAX}")
        if self.mask not in MASK_KINDS:
            bad("mask", self.mask, f"choose one of {list(MASK_KINDS)}")
        if self.input_kind not in INPUT_KINDS:
            bad("input_kind", self.input_kind, f"choose one of {list(INPUT_KINDS)}")
        if isinstance(self.pad_count, bool) or not isinstance(self.pad_count, int) or not 0 <= self.pad_count <= MAX_TOKENS:
            bad("pad_count", self.pad_count, f"it must be an integer from 0 to {MAX_TOKENS}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            bad("seed", self.seed, f"it must be an integer from 0 to {MAX_SEED}")
        for name in ("sentence", "pattern"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v.split() or len(v) > MAX_TEXT:
                bad(name, v if isinstance(v, str) and len(v) < 80 else "...", f"it must be text with at least one token and at most {MAX_TEXT} characters")

    @property
    def d_k(self) -> int:
        """Width of one head's queries and keys."""
        return self.d_model // self.n_heads

    def replace(self, **changes) -> "WhatIf":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_query_params(self) -> dict[str, str]:
        """Every setting as URL parameters (text for the current input kind only)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name == "sentence" and self.input_kind != "sentence":
                continue
            if f.name == "pattern" and self.input_kind != "one_hot":
                continue
            v = getattr(self, f.name)
            out[PARAM_NAMES[f.name]] = ("1" if v else "0") if isinstance(v, bool) else (repr(float(v)) if isinstance(v, float) else str(v))
        return out

    @classmethod
    def from_query_params(cls, params: Mapping[str, object], base: "WhatIf | None" = None) -> tuple["WhatIf", list[str]]:
        """Build a WhatIf from URL parameters, starting from ``base`` (default: the defaults).

        Never raises: unknown parameters are ignored, unparsable values keep the base value, numbers
        out of range are clamped, a head count that does not divide d_model becomes the nearest one
        that does. Each change is described in the returned notices.
        """
        base = base or cls()
        values = dataclasses.asdict(base)
        notices: list[str] = []

        def raw(name):
            v = params.get(PARAM_NAMES[name])
            if isinstance(v, (list, tuple)):
                v = v[-1] if v else None
            return None if v is None else str(v)

        def parse_int(name, lo, hi):
            s = raw(name)
            if s is None:
                return
            try:
                n = float(s.strip())
                if not math.isfinite(n) or n != int(n):
                    raise ValueError
                n = int(n)
            except ValueError:
                notices.append(f"{PARAM_NAMES[name]}={s[:40]!r} is not a whole number; kept {values[name]} (allowed: {lo} to {hi}).")
                return
            if not lo <= n <= hi:
                c = min(max(n, lo), hi)
                notices.append(f"{PARAM_NAMES[name]}={n} is outside {lo} to {hi}; using {c}.")
                n = c
            values[name] = n

        parse_int("seq_len", 1, MAX_TOKENS)
        parse_int("d_model", 1, MAX_D_MODEL)
        parse_int("n_heads", 1, MAX_HEADS)
        parse_int("pad_count", 0, MAX_TOKENS)
        parse_int("seed", 0, MAX_SEED)

        s = raw("temperature")
        if s is not None:
            try:
                t = float(s.strip())
            except ValueError:
                t = float("nan")
            if not math.isfinite(t):
                notices.append(f"temperature={s[:40]!r} is not a finite number; kept {values['temperature']:g} (allowed: {T_MIN} to {T_MAX}).")
            else:
                c = min(max(t, T_MIN), T_MAX)
                if c != t:
                    notices.append(f"temperature={t:g} is outside {T_MIN} to {T_MAX}; using {c:g}.")
                values["temperature"] = c

        for name in ("scaled", "positional"):
            s = raw(name)
            if s is None:
                continue
            low = s.strip().lower()
            if low in ("1", "true", "on", "yes"):
                values[name] = True
            elif low in ("0", "false", "off", "no"):
                values[name] = False
            else:
                notices.append(f"{PARAM_NAMES[name]}={s[:40]!r} is not 1 or 0; kept {int(values[name])}.")

        for name, kinds in (("mask", MASK_KINDS), ("input_kind", INPUT_KINDS)):
            s = raw(name)
            if s is None:
                continue
            if s in kinds:
                values[name] = s
            else:
                notices.append(f"{PARAM_NAMES[name]}={s[:40]!r} is not one of {', '.join(kinds)}; kept {values[name]}.")

        for name in ("sentence", "pattern"):
            s = raw(name)
            if s is None:
                continue
            if not s.split():
                notices.append(f"{PARAM_NAMES[name]} is empty; kept the previous text.")
                continue
            if len(s) > MAX_TEXT:
                notices.append(f"{PARAM_NAMES[name]} is longer than {MAX_TEXT} characters; it was cut.")
                s = s[:MAX_TEXT]
            values[name] = s

        if values["d_model"] % values["n_heads"]:
            options = allowed_heads(values["d_model"])
            nearest = nearest_heads(values["d_model"], values["n_heads"])
            notices.append(
                f"heads={values['n_heads']} does not divide d_model={values['d_model']}; using {nearest} "
                f"(allowed: {', '.join(map(str, options))})."
            )
            values["n_heads"] = nearest
        return cls(**values), notices
