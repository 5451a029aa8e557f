"""What the class pulse keeps in the student's browser, and the short way into a class.

- One browser, one student: a student's id in a class (random, signed by the class: classpulse.sign_voter) is kept
  in the cookie ``aexp_student`` (``CODE.ID``), so a reload, a phone that reloads a tab when the student comes back
  to it, and a second tab answer as the same student: an answer replaces theirs, never adds one.
- The teacher's token leaves the address bar (a projector shows it to the room): the teacher's page keeps it in
  the cookie ``aexp_teacher`` (``CODE.TOKEN``), so a reload of the page keeps the teacher a teacher.
- Joining in seconds: ``/?join=CODE`` and Home's "Join a class" box take a student to the page the teacher's
  class is on (its students' link, which the teacher's page keeps in the store); the teacher's view shows the
  code large and a QR code of the short address.

The cookies are written by a small inline module (pulse_device.js; nothing fetched) and read from the request
that opened the session (``st.context.cookies``). They hold nothing about the student and end with the class.
"""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import urlsplit

import segno
import streamlit as st

from classpulse import ALPHABET, CLASS_HOURS, CODE_LENGTH, Outcome, parse_code
from classpulse.model import split_lead
from ui.server.cache import cached
from ui.text import md_escape

STUDENT_COOKIE, TEACHER_COOKIE = "aexp_student", "aexp_teacher"
JOIN = "join"  # the short address's parameter: /?join=7QX2K
_KEEP = st.components.v2.component(
    "attention_explorer.pulse_keep", js=Path(__file__).with_suffix(".js").read_text(encoding="utf-8")
)
_COOKIES = "pulse_cookies"  # name -> value this session asks the browser to keep


def browser_cookie(name: str) -> str:
    """The cookie ``name`` the browser sent when this session's connection opened ("" when none)."""
    return str(st.context.cookies.get(name) or "")


def class_cookie(name: str, code: str) -> str:
    """What cookie ``name`` holds for class ``code`` (the part after ``CODE.``), "" when it is another class's."""
    head, _, value = browser_cookie(name).partition(".")
    return value if head == code else ""


def keep(name: str, code: str, value: str) -> None:
    """Ask the browser to keep ``value`` for class ``code`` in cookie ``name`` (drawn by :func:`draw_keepsakes`)."""
    st.session_state.setdefault(_COOKIES, {})[name] = f"{code}.{value}"


def kept(name: str) -> str:
    """What this session asked the browser to keep in cookie ``name`` ("" when nothing)."""
    return st.session_state.get(_COOKIES, {}).get(name, "")


def draw_keepsakes() -> None:
    """The cookies this session keeps, written by the browser (every full run: a mount costs a few bytes)."""
    cookies = [[n, v, int(CLASS_HOURS * 3600)] for n, v in sorted(st.session_state.get(_COOKIES, {}).items())]
    if cookies:
        _KEEP(key="pulse_keep", data={"cookies": cookies, "go": ""}, height=0)


# ---- joining


def base_path() -> str:
    """The app's path on its server ("" at the root, "/explorer" under a base URL path)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def join_address(code: str) -> str:
    """The short address of class ``code`` (absolute when the browser told us its address)."""
    parts = urlsplit(st.context.url or "")
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    return f"{origin}{base_path()}/?{JOIN}={code}"


def join_target(raw: object) -> tuple[str, str]:
    """Where a typed or linked join code takes a student: (a same-origin path with its query, "") or ("", what to
    do). Spaces and lower case are forgiven; what the store kept is a page name and its query, checked again."""
    from ui.classroom.pulse import store  # the process's store (ui/classroom/pulse.py imports this module)

    typed = str(raw or "")
    code = parse_code("".join(typed.split()))
    if code is None:
        shown = md_escape(typed.strip()[:20]) or "nothing"
        return "", (
            f"'{shown}' is not a class code: a class code is {CODE_LENGTH} letters and digits (from {ALPHABET}), "
            "as the projector shows it. Type it again, or open the link your teacher shared."
        )
    link = store().link(code)
    if link is Outcome.NO_CLASS:
        return "", f"There is no class {code} running: check the code on the projector, or ask your teacher."
    if link is Outcome.EXPIRED:
        return "", f"Class {code} has ended (a class lasts {CLASS_HOURS:g} hours): ask your teacher for a new code."
    if isinstance(link, Outcome):
        return "", f"Class {code} cannot be looked up right now ({link.value}): try again in a moment."
    link = split_lead(link)[0]  # where the class is led, without the teacher's "explore freely" mark
    return f"{base_path()}/{link or f'?class={code}&classroom=lock'}", ""


def join(typed: object) -> str:
    """Send the browser to the class page of a typed or linked join code (:func:`join_target`), with a link for a
    browser that does not follow by itself; or return what to do ("" when it went)."""
    target, why = join_target(typed)
    if not target:
        return why
    st.info(f"Joining class {parse_code(''.join(str(typed).split()))}…", icon=":material/groups:")
    st.link_button("Open the class's page", target, type="primary")
    _KEEP(key="pulse_go", data={"cookies": [], "go": target}, height=0)
    return ""


def follow_join_link() -> None:
    """A page opened with ``?join=CODE`` (the short address, a QR code) goes to the class's page, or says why not."""
    raw = st.query_params.get(JOIN)
    if raw is None:
        return
    del st.query_params[JOIN]
    why = join(raw)
    if why:
        st.warning(f"Join: {why}", icon=":material/warning:")


def join_box() -> None:
    """Home's "Join a class": the code the projector shows, typed (spaces and lower case forgiven)."""
    with st.container(border=True):
        st.markdown("**:material/groups: Join a class**")
        with st.form("pulse_join", border=False, enter_to_submit=True):
            typed = st.text_input(
                "Class code",
                max_chars=24,
                placeholder="7QX2K",
                help=f"The {CODE_LENGTH}-character code your teacher's screen shows. Nothing asks for your name.",
            )
            sent = st.form_submit_button("Join", icon=":material/login:")
        why = join(typed) if sent else ""
        if why:
            st.warning(why, icon=":material/warning:")


@cached(max_mb=1)
def qr_png(text: str) -> bytes:
    """A QR code of ``text`` as PNG (black on white, a quiet zone of 4 modules), made here (no service asked)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=8, border=4)
    return out.getvalue()


def join_card(code: str) -> None:
    """For the teacher to show the room: the class code large, the short address and its QR code."""
    address = join_address(code)
    text, qr = st.columns([4, 1], vertical_alignment="center")
    text.metric("Class code", code)
    text.markdown(
        f"Students: scan the QR code, open **{md_escape(address)}**, or type the code under *Join a class* on "
        "Home. Nothing asks for their name."
    )
    qr.image(qr_png(address), width=180, alt=f"QR code that opens {address}")
