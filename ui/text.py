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


def marked(text: str, start: str, end: str) -> str:
    """The text between the marker lines ``start`` and ``end`` of a generated section (ValueError if missing)."""
    if start not in text or end not in text.split(start, 1)[1]:
        raise ValueError(f"the markers {start!r} and {end!r} were not found")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def with_marked(text: str, start: str, end: str, body: str) -> str:
    """``text`` with the section between the marker lines ``start`` and ``end`` replaced by ``body``."""
    marked(text, start, end)  # both markers are there
    head, rest = text.split(start, 1)
    return head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]
