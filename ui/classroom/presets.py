"""Named classroom experiments, one small JSON file each in presets/.

A preset names a page, the shared settings (URL parameter names, see ui/session/url.py), and
optionally the two sides of the Compare page ("a", "b") and Step-by-step matrices ("matrices").
Files are validated strictly: a malformed file is reported by name and skipped; the rest load.
This module does not import streamlit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from attention_core import WhatIf, parse_matrix
from ui.server.cache import cached
from ui.session.url import URL_NAMES, from_query_params, to_query_params

ROOT = Path(__file__).resolve().parents[2]
PRESETS_DIR = Path(os.environ.get("ATTENTION_EXPLORER_PRESETS", ROOT / "presets"))
COMPARE_PAGE = "pages/Compare.py"
STEP_PAGE = "pages/Step_by_step.py"
MATRIX_PARAMS = ("wq", "wk", "wv")
MAX_LINK = 2000


@dataclass(frozen=True)
class Preset:
    """One validated experiment."""

    slug: str  # file name without .json
    name: str
    description: str
    page: str  # path relative to the repo root
    question: str  # what the class is asked to find out (shown on the page the preset opens)
    look_for: str  # where on that page the answer shows
    settings: WhatIf
    a: WhatIf | None = None  # Compare page sides
    b: WhatIf | None = None
    matrices: dict[str, str] = field(default_factory=dict)  # Step-by-step W_q, W_k, W_v as "a,b;c,d"

    def query_params(self) -> dict[str, str]:
        """Every parameter of the preset's link."""
        params = dict(to_query_params(self.settings))
        for prefix, side in (("a_", self.a), ("b_", self.b)):
            if side is not None:
                params.update({prefix + k: v for k, v in to_query_params(side).items()})
        params.update(self.matrices)
        params["preset"] = self.slug
        return params

    def link(self, base: str = "") -> str:
        """``base`` (the app's address, may be empty) + the page path + the parameters."""
        page = Path(self.page).stem
        return f"{base.rstrip('/')}/{page}?{urlencode(self.query_params())}"


def _settings(obj, where: str, base: WhatIf | None = None) -> WhatIf:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object of URL parameters")
    unknown = sorted(set(obj) - set(URL_NAMES.values()))
    if unknown:
        raise ValueError(f"{where} has unknown parameters {unknown}; allowed: {sorted(URL_NAMES.values())}")
    params = {k: ("1" if v else "0") if isinstance(v, bool) else str(v) for k, v in obj.items()}
    cfg, notices = from_query_params(params, base=base)
    if notices:
        raise ValueError(f"{where}: " + " ".join(notices))
    return cfg


def parse_preset(slug: str, text: str, pages: set[str]) -> Preset:
    """Validate one preset file's text; raise ValueError saying what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError("must be a JSON object")
    for key in ("name", "description", "question", "look_for", "page"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"needs a non-empty text field {key!r}")
    extra = sorted(
        set(data) - {"name", "description", "question", "look_for", "page", "settings", "a", "b", "matrices"}
    )
    if extra:
        raise ValueError(f"has unknown fields {extra}")
    if data["page"] not in pages:
        raise ValueError(f"page {data['page']!r} does not exist; choose one of {sorted(pages)}")
    settings = _settings(data.get("settings", {}), "settings")
    a = b = None
    if "a" in data or "b" in data:
        if data["page"] != COMPARE_PAGE:
            raise ValueError(f"'a' and 'b' are only for the Compare page ({COMPARE_PAGE})")
        a = _settings(data.get("a", {}), "a", base=settings)
        b = _settings(data.get("b", {}), "b", base=settings)
    matrices = {}
    if "matrices" in data:
        if data["page"] != STEP_PAGE or not isinstance(data["matrices"], dict):
            raise ValueError(f"'matrices' must be an object and is only for the Step-by-step page ({STEP_PAGE})")
        for k, v in data["matrices"].items():
            if k not in MATRIX_PARAMS:
                raise ValueError(f"matrices has unknown key {k!r}; allowed: {list(MATRIX_PARAMS)}")
            parse_matrix(k, str(v), (2, 2))
            matrices[k] = str(v)
    preset = Preset(
        slug,
        data["name"].strip(),
        data["description"].strip(),
        data["page"],
        data["question"].strip(),
        data["look_for"].strip(),
        settings,
        a,
        b,
        matrices,
    )
    if len(preset.link("https://example.streamlit.app")) > MAX_LINK:
        raise ValueError(f"its link is longer than {MAX_LINK} characters")
    return preset


def find_preset(slug: str) -> Preset | None:
    """The valid preset whose file is ``slug``.json, or None (files are re-read only when they change)."""
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(PRESETS_DIR.glob("*.json")))
    return _presets_by_slug(str(PRESETS_DIR), stamp).get(slug)


@cached(max_mb=1)
def _presets_by_slug(folder: str, stamp: tuple) -> dict[str, Preset]:
    return {p.slug: p for p in load_presets(Path(folder))[0]}


def load_presets(folder: Path | None = None, pages: set[str] | None = None) -> tuple[list[Preset], list[str]]:
    """All valid presets of ``folder`` (sorted by file name) and one message per skipped file."""
    folder = Path(folder or PRESETS_DIR)
    if pages is None:
        pages = {"streamlit_app.py"} | {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    presets, errors = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            presets.append(parse_preset(path.stem, path.read_text(encoding="utf-8"), pages))
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            errors.append(f"{path.name}: {exc}")
    return presets, errors
