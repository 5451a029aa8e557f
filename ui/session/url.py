"""A WhatIf's round trip through the address bar, derived from the field declarations (attention_core.config).

``from_query_params`` never raises: unknown parameters are ignored, unparsable values keep the base
value, numbers out of range are clamped, a head count that does not divide d_model becomes the nearest
one that does. Each change is described in the returned notices, which the page shows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from attention_core.config import SETTINGS, WhatIf, allowed_heads, nearest_heads

# URL parameter name of each field (short and stable: these names are in shared links); default: the field name
URL_NAMES = {name: name for name in SETTINGS} | {
    "n_heads": "heads",
    "pad_count": "pad",
    "input_kind": "input",
    "positional": "pe",
}
TRUE, FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


def to_query_params(cfg: WhatIf) -> dict[str, str]:
    """Every setting as URL parameters (the text of the current input kind only)."""
    out = {}
    for name, spec in SETTINGS.items():
        if (name == "sentence" and cfg.input_kind != "sentence") or (name == "pattern" and cfg.input_kind != "one_hot"):
            continue
        v = getattr(cfg, name)
        out[URL_NAMES[name]] = (
            ("1" if v else "0") if spec.kind == "bool" else repr(float(v)) if spec.kind == "float" else str(v)
        )
    return out


def _parse(name: str, text: str, current) -> tuple[object, str | None]:
    """(value, notice) for one parameter's text; the value is ``current`` when the text is unusable."""
    spec, url = SETTINGS[name], URL_NAMES[name]
    shown = repr(text[:40])
    if spec.kind in ("int", "float"):
        try:
            x = float(text.strip())
        except ValueError:
            x = float("nan")
        whole = spec.kind == "int"
        if not math.isfinite(x) or (whole and x != int(x)):
            what = "a whole number" if whole else "a finite number"
            return current, f"{url}={shown} is not {what}; kept {current:g} (allowed: {spec.lo:g} to {spec.hi:g})."
        c = min(max(x, spec.lo), spec.hi)
        c = int(c) if whole else c
        if c != x:
            return c, f"{url}={x:g} is outside {spec.lo:g} to {spec.hi:g}; using {c:g}."
        return c, None
    if spec.kind == "bool":
        low = text.strip().lower()
        if low in TRUE or low in FALSE:
            return low in TRUE, None
        return current, f"{url}={shown} is not 1 or 0; kept {int(current)}."
    if spec.kind == "choice":
        if text in spec.choices:
            return text, None
        return current, f"{url}={shown} is not one of {', '.join(spec.choices)}; kept {current}."
    if not text.split():
        return current, f"{url} is empty; kept the previous text."
    if len(text) > spec.max_len:
        return text[: spec.max_len], f"{url} is longer than {spec.max_len} characters; it was cut."
    return text, None


def from_query_params(params: Mapping[str, object], base: WhatIf | None = None) -> tuple[WhatIf, list[str]]:
    """Build a WhatIf from URL parameters over ``base`` (default: the defaults), with notices for every change."""
    values = dataclasses.asdict(base or WhatIf())
    notices: list[str] = []
    for name in SETTINGS:
        raw = params.get(URL_NAMES[name])
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else None
        if raw is None:
            continue
        values[name], notice = _parse(name, str(raw), values[name])
        if notice:
            notices.append(notice)
    if values["d_model"] % values["n_heads"]:
        nearest = nearest_heads(values["d_model"], values["n_heads"])
        notices.append(
            f"heads={values['n_heads']} does not divide d_model={values['d_model']}; using {nearest} "
            f"(allowed: {', '.join(map(str, allowed_heads(values['d_model'])))})."
        )
        values["n_heads"] = nearest
    return WhatIf(**values), notices
