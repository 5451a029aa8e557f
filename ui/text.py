"""User text inside Markdown: escape it so that it shows exactly as typed (no HTML, no formatting)."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:])")


def md_escape(text: str) -> str:
    """Backslash-escape every Markdown/HTML-significant character of ``text``."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def fmt(x: float, digits: int = 3) -> str:
    """A number as short text for the sentences on a page (3 significant digits)."""
    return f"{x:.{digits}g}"


def plain_text(markdown: str) -> str:
    """Markdown as the plain text it shows: bold marks dropped, backslash escapes undone (for a store or a title)."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("**", ""))
