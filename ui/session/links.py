"""What a shared link says about the lesson, beyond the settings: the preset it comes from, classroom mode
(on, or locked on by the teacher), controls it hides, the projector view, and the class it belongs to.

URL parameters: ``preset=<file name>``, ``classroom=1`` or ``classroom=lock``, ``hide=seq_len,d_model``
(URL names of the shared controls), ``view=projector``, ``class=<code>`` (the class pulse, ui/classroom/pulse.py) and
``teacher=<token>`` (the teacher's link of that class; checked against the store by ui/classroom/pulse.py). They are read once per session (a link opens a
new session), kept for the whole visit, and written back on every page so that a share link carries them; all but
the teacher token, which leaves the address bar once read (the teacher's browser keeps it, ui/classroom/pulse_device.py).
Bad values are ignored with a notice saying what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from classpulse import ALPHABET, CODE_LENGTH, TOKEN_PATTERN, parse_code
from ui.session.url import URL_NAMES

KEY = "link_options"
CLASSROOM = ("off", "on", "lock")
HIDEABLE = {url: name for name, url in URL_NAMES.items() if name not in ("sentence", "pattern")}


@dataclass(frozen=True)
class LinkOptions:
    """The lesson options a link carries."""

    preset: str = ""  # slug of the preset the link was made from ("" = none)
    classroom: str = "off"  # "off", "on" (the student may switch it off) or "lock" (on, no switch)
    hide: tuple[str, ...] = ()  # WhatIf field names whose controls are hidden (their values still apply)
    projector: bool = False  # sidebar collapsed, larger type
    class_code: str = ""  # the class pulse's class ("" = none), a valid code's shape (classpulse.parse_code)
    teacher: str = ""  # the teacher token of that class, as the link gave it ("" = a student's link)

    def query_params(self) -> dict[str, str]:
        out = {}
        if self.preset:
            out["preset"] = self.preset
        if self.classroom != "off":
            out["classroom"] = "lock" if self.classroom == "lock" else "1"
        if self.hide:
            out["hide"] = ",".join(URL_NAMES[n] for n in self.hide)
        if self.projector:
            out["view"] = "projector"
        if self.class_code:
            out["class"] = (
                self.class_code
            )  # never the teacher token: it leaves the address bar (ui/classroom/pulse_device.py)
        return out


def parse_link_options(params: dict) -> tuple[LinkOptions, list[str]]:
    """LinkOptions from URL parameters, and notices for values that were ignored."""
    notices = []
    preset = str(params.get("preset", "") or "")
    if preset and not (preset.replace("_", "").replace("-", "").isalnum() and len(preset) <= 60):
        notices.append("preset must be the file name of a preset (letters, digits, _ and -); ignored.")
        preset = ""
    raw = str(params.get("classroom", "off") or "off").strip().lower()
    classroom = {"1": "on", "on": "on", "true": "on", "lock": "lock", "0": "off", "off": "off", "false": "off"}.get(raw)
    if classroom is None:
        notices.append(f"classroom={raw[:20]!r} is not 1, 0 or lock; classroom mode stays off.")
        classroom = "off"
    hide = []
    for name in filter(None, (h.strip() for h in str(params.get("hide", "") or "").split(","))):
        if name in HIDEABLE:
            hide.append(HIDEABLE[name])
        else:
            notices.append(f"hide={name[:20]!r} is not a control; hideable: {', '.join(sorted(HIDEABLE))}.")
    view = str(params.get("view", "") or "")
    if view not in ("", "projector"):
        notices.append(f"view={view[:20]!r} is not 'projector'; ignored.")
    class_code, teacher = _class_params(params, notices)
    options = LinkOptions(preset, classroom, tuple(dict.fromkeys(hide)), view == "projector", class_code, teacher)
    return options, notices


def _class_params(params: dict, notices: list[str]) -> tuple[str, str]:
    """The class code and teacher token of a link (their shape only: ui/classroom/pulse.py asks the store about them)."""
    raw = str(params.get("class", "") or "").strip()
    code = parse_code(raw) or ""
    if raw and not code:
        notices.append(
            f"class={raw[:20]!r} is not a class code ({CODE_LENGTH} characters from {ALPHABET}); "
            "the page works without a class."
        )
    token = str(params.get("teacher", "") or "").strip()
    if token and not TOKEN_PATTERN.fullmatch(token):  # never echoed: it may be a mistyped real token
        notices.append("teacher= is not a teacher token (the teacher link gives one); ignored.")
        token = ""
    if token and not code:
        notices.append("teacher= needs the class= of its class; ignored.")
        token = ""
    return code, token


def link_options() -> LinkOptions:
    """This session's link options (parsed from the first page's URL)."""
    if KEY not in st.session_state:
        st.session_state[KEY], st.session_state[f"{KEY}_notices"] = parse_link_options(st.query_params.to_dict())
    return st.session_state[KEY]


def set_link_options(options: LinkOptions) -> None:
    st.session_state[KEY] = options


def write_link_options() -> None:
    """Put the session's link options back into the address bar (a page switch drops them)."""
    wanted = link_options().query_params()
    qp = st.query_params
    for name in ("preset", "classroom", "hide", "view", "class", "teacher"):
        if name not in wanted and name in qp:
            del qp[name]
    changed = {k: v for k, v in wanted.items() if qp.get(k) != v}
    if changed:
        qp.update(changed)
