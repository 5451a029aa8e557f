"""A page's own controls bound to the URL: each declared once as a :class:`PageParam`.

How a value travels (the same plumbing as the shared controls, ui/skeleton/controls.py and ui/session/state.py):
1. The first run of a session parses the control's URL parameter (a bad value gives a notice saying what
   was given, what is allowed and what is used) and keeps the value under ``key + "_kept"``.
2. On the first run of each page visit the widget's key is put back from the kept value: Streamlit drops the
   state of widgets a page does not draw, and ``persist_state="session"`` widgets came back at their minimum
   in Chromium after a switch between legacy pages. Within a visit the widget is the truth; its ``on_change``
   keeps the new value and clears the notices.
3. Before drawing, the value is fitted to what the current setting allows (a head at most the head count,
   a step at most seq_len), with a notice when it had to move. Such limits are declared with the control:
   a page declares those controls in its body, for the setting of this run.
4. After drawing, the values are written to ``st.query_params``, leaving every other parameter alone.

Besides numbers, choices and on/off, a control can be text: free text of at most ``chars`` characters (a
sentence, a model id: drawn as a text box, shown to the learner as text), or typed text that ``parse`` reads
into a value (a matrix) and ``format`` writes back (``chars`` caps its length too). A value the link cannot carry
(too long, or ``parse`` raised ValueError, whose message says what is allowed) is refused with a notice, and the
default is used. A value ``parse`` reads only in part (a list of numbers with one out of range, or more of them
than there are heads) is not refused: ``parse`` returns it as :class:`Fitted`, the value used with one notice that
says what was changed and what is allowed (or a tuple of notices, each shown as its own), as a refusal's is. A value of None is left out of the link,
and so is the default with ``omit_default`` (a long default sentence would otherwise fill every link), and a
value longer than ``link_bytes`` once percent-encoded (:func:`too_long_for_link`: a link a proxy would refuse;
the page says so). A value
whose widget the page draws itself (a matrix in a data editor, one slider per head) is read with ``Page.link`` and
set with :func:`set_value`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import quote

import streamlit as st

from ui.session.state import entered_page, keep, remember, set_kept
from ui.text import head_name, md_text

NOTES_KEY = "page_param_notes"  # this page visit's notices, shown until one of the page's controls changes
TRUE, FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


@dataclass(frozen=True)
class PageParam:
    """One page control: its widget key, its URL name, its default and what it allows."""

    key: str  # widget key in st.session_state (the kept value lives under key + "_kept")
    url: str  # URL parameter name
    default: object  # value when the URL has none, or one that cannot be read
    lo: float | None = None  # smallest allowed number (numbers; None = no lower limit)
    hi: float | None = None  # largest allowed number (numbers; None = no upper limit)
    choices: tuple = ()  # allowed values (a number not offered moves to the nearest one)
    integer: bool = False  # whole numbers only
    boolean: bool = False  # on/off, written as 1/0
    why: str = ""  # why the limits are what they are, e.g. "for seq_len 8" (said in the notices)
    label: str = ""  # the widget's label (default: the URL name)
    widget: str = ""  # "toggle", "slider", "select_slider", "radio", "selectbox", "number", "text" (default: by kind)
    help: str | None = None  # the widget's tooltip
    names: tuple = ()  # how each choice is shown, in the order of ``choices`` (default: the value itself)
    step: float | None = None  # a number slider's step
    leaf: bool = False  # its change alters only the page's drawing: on a page with a body it reruns the body alone
    shown: Callable[[object], str] | None = None  # how the widget writes a value (default: as the link does)
    chars: int = 0  # free text of at most this many characters (a text box); longer text in the link is refused
    parse: Callable[[str], object] | None = None  # typed text: link text to a value (or Fitted), or ValueError why
    format: Callable[[object], str] | None = None  # typed text: a value to the link's text (default: show)
    fallback: str = ""  # what a refused link value gives way to, as its notice says it (default: the default)
    omit_default: bool = False  # the link leaves the parameter out while the value is the default
    link_bytes: int = 0  # the link leaves out a value longer than this once percent-encoded (0: no limit)


class Fitted(NamedTuple):
    """What a typed control's ``parse`` returns for link text it read but had to change (a number moved into range,
    extra items dropped): the value used, and the notices (one, or a tuple of several: each shown as its own) that
    say what was changed and what is allowed."""

    value: object
    notice: str | tuple[str, ...]


def head_param(key: str, H: int, **kw) -> PageParam:
    """The ``head=`` control of a page that looks at one of the H heads of the current setting (1-based in the
    link), drawn as a select box of the heads by name ("head 2", as ``ui.skeleton.widgets.head_picker`` draws a
    head that is not in the link); other keyword arguments are PageParam fields."""
    kw = {"label": "head", "widget": "selectbox", "shown": lambda h: head_name(int(h) - 1), **kw}
    return PageParam(key, "head", 1, lo=1, hi=H, integer=True, why=f"(there are {H} heads)", **kw)


def show(value) -> str:
    """A value as a notice or the URL writes it: 1/0 for booleans, 10000 for 10000.0, text as is."""
    if isinstance(value, bool):
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _quoted(value) -> str:
    return md_text(repr(value[:40])) if isinstance(value, str) else show(value)  # link text in a notice: as text


def _written(p: PageParam, value) -> str:
    return p.format(value) if p.format is not None else show(value)


def link_text(p: PageParam, value) -> str | None:
    """``value`` as ``p``'s URL parameter writes it; None when the link leaves it out (None, or the default with
    ``omit_default``)."""
    if value is None:
        return None
    text = _written(p, value)
    if p.omit_default and p.default is not None and text == _written(p, p.default):
        return None
    if too_long_for_link(p, value):
        return None
    return text


def link_length(p: PageParam, value) -> int:
    """The characters ``value`` takes in a link, percent-encoded (a character outside ASCII takes up to 9)."""
    return len(quote(_written(p, value), safe=""))


def too_long_for_link(p: PageParam, value) -> bool:
    """Whether ``value`` is longer than ``p.link_bytes`` once percent-encoded (a link a proxy would refuse: the
    deployment's nginx takes request lines of up to 16 KB)."""
    return bool(p.link_bytes) and value is not None and link_length(p, value) > p.link_bytes


def _typed(p: PageParam, raw: str) -> tuple[object, str | None]:
    """``(value, notice)`` for a text control: the link's text if it fits in ``p.chars`` and ``p.parse`` reads it
    (with ``parse``'s notice when it returns :class:`Fitted`), else the default with a notice saying what is allowed."""
    fallback = p.fallback or show(p.default)
    if p.chars and len(raw) > p.chars:
        return p.default, f"{p.url}= is {len(raw)} characters long; at most {p.chars} are allowed. Using {fallback}."
    if p.parse is None:
        return raw, None
    try:
        value = p.parse(raw)
    except ValueError as exc:
        return p.default, f"{p.url}={md_text(repr(raw[:40]))} is not read: {md_text(exc)}. Using {fallback}."
    if not isinstance(value, Fitted):
        return value, None
    if isinstance(value.notice, tuple):  # the link's text, quoted in the notices: as text
        return value.value, tuple(md_text(n) for n in value.notice if n) or None
    return value.value, md_text(value.notice) if value.notice else None


def fit(p: PageParam, value) -> tuple[object, str | None]:
    """``(value, notice)``: ``value`` moved into what ``p`` allows; the notice says what was changed (None if nothing)."""
    why = f" {p.why}" if p.why else ""
    if p.choices:
        if value in p.choices:
            return value, None
        numbers = all(isinstance(c, (int, float)) for c in p.choices) and isinstance(value, (int, float))
        if numbers:
            fixed = min(p.choices, key=lambda c: (abs(c - value), c))
        else:
            fixed = p.default if p.default in p.choices else p.choices[0]
        allowed = ", ".join(show(c) for c in p.choices)
        return fixed, f"{p.url}={_quoted(value)} is not allowed{why} (allowed: {allowed}); using {show(fixed)}."
    if p.boolean or (p.lo is None and p.hi is None):
        return value, None
    lo = -math.inf if p.lo is None else p.lo
    hi = math.inf if p.hi is None else p.hi
    fixed = min(max(value, lo), hi)
    fixed = int(fixed) if p.integer else fixed
    if fixed == value:
        return value, None
    if p.lo is not None and p.hi is not None:
        wrong = f"is outside {show(p.lo)} to {show(p.hi)}"
    else:
        wrong = f"is below {show(p.lo)}" if value < lo else f"is above {show(p.hi)}"
    return fixed, f"{p.url}={show(value)} {wrong}{why}; using {show(fixed)}."


def parse_param(p: PageParam, raw: str) -> tuple[object, str | None]:
    """``(value, notice)`` for the URL text ``raw``: read as ``p``'s kind, then fitted (:func:`fit`)."""
    shown = md_text(repr(str(raw)[:40]))  # the link's text, quoted in a Markdown notice: as text
    if p.chars or p.parse is not None:
        return _typed(p, str(raw))
    if p.boolean:
        low = str(raw).strip().lower()
        if low in TRUE + FALSE:
            return low in TRUE, None
        return p.default, f"{p.url}={shown} is not 1 or 0; using {show(p.default)}."
    if p.choices and all(isinstance(c, str) for c in p.choices):
        return fit(p, str(raw))
    try:
        x = float(str(raw).strip())
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or (p.integer and not x.is_integer()):
        kind = "a whole number" if p.integer else "a finite number"
        return p.default, f"{p.url}={shown} is not {kind}; using {show(p.default)}."
    return fit(p, int(x) if p.integer else x)


def note(text: str | tuple[str, ...] | None) -> None:
    """Add a notice to this page visit's list, each of several as its own (None adds nothing)."""
    if isinstance(text, tuple):
        for t in text:
            note(t)
    elif text:
        st.session_state.setdefault(NOTES_KEY, []).append(text)


def clear_notes() -> None:
    st.session_state[NOTES_KEY] = []


def _remember(key: str) -> None:
    """on_change of a page control: keep its new value, and the old notices no longer apply."""
    remember(key)
    clear_notes()


def bind(control: PageParam | str) -> dict:
    """Keyword arguments that bind a widget to a kept control: a PageParam, or the key given to :func:`keep`."""
    key = control.key if isinstance(control, PageParam) else control
    return dict(key=key, on_change=_remember, args=(key,))


def restore(params: list[PageParam]) -> dict[str, object]:
    """Ready the controls for drawing (:func:`draw` does, for its control): seed from the URL on the session's first
    run, put the kept values back into the widgets on the first run of a page visit, fit each value to what the
    control allows now. Returns the values by URL name. A page visit's notices start empty (:func:`start_visit`)."""
    for p in params:
        first, raw = p.default, st.query_params.get(p.url)
        if f"{p.key}_kept" not in st.session_state and raw is not None:  # the session's first look at p
            first, notice = parse_param(p, str(raw))
            note(notice)
        keep(p.key, first)
        value, notice = fit(p, st.session_state[p.key])
        if notice:
            note(notice)
            st.session_state[p.key] = st.session_state[f"{p.key}_kept"] = value
    return {p.url: st.session_state[p.key] for p in params}


def in_link(p: PageParam) -> bool:
    """Whether this run's link names ``p`` (a page that chooses a value itself when the link leaves it out)."""
    return p.url in st.query_params


def set_value(p: PageParam, value) -> None:
    """Set the value of ``p`` from code (one whose widget the page draws itself, read with ``Page.link``): kept
    across page switches, and written into the URL when the run ends."""
    set_kept(p.key, value)


def write_params(params: list[PageParam], qp=None) -> None:
    """Mirror the controls into the URL (leaving every other parameter alone; a value the link leaves out,
    :func:`link_text`, takes its parameter out). ``qp``: a dict of the parameters to write into instead."""
    qp = st.query_params if qp is None else qp
    for p in params:
        text = link_text(p, st.session_state[p.key])
        if text is None:
            if p.url in qp:
                del qp[p.url]
        elif qp.get(p.url) != text:
            qp[p.url] = text


def show_notes(box=st) -> None:
    """Show this visit's notices (bad URL values, values moved to fit the setting) as one visible warning."""
    notes = st.session_state.get(NOTES_KEY) or []
    if notes:
        box.warning(
            "Some page settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes), icon=":material/warning:"
        )


def start_visit() -> None:
    """Every page run calls this before its controls (ui.skeleton.page.Page does): a new page visit starts with no notices."""
    if entered_page():
        clear_notes()


def _changed_leaf(key: str) -> None:
    """on_change of a leaf page control: keep the value, clear the notices, rerun only the page's body."""
    from ui.session.partial import rerun_body

    _remember(key)
    rerun_body()


def draw(p: PageParam, box=st, **kw):
    """Ready ``p`` (:func:`restore`) and draw its widget into ``box``; returns its value. The widget follows the
    declaration: a toggle for on/off, a slider for a range of numbers, a select slider for numeric choices, radio
    buttons for a few named choices, a select box for many (``p.widget`` chooses otherwise). Other keyword
    arguments go to the widget (``disabled``, ``format_func``, ``placeholder``). Free text is a text box."""
    restore([p])
    args = {"key": p.key, "on_change": _changed_leaf if p.leaf else _remember, "args": (p.key,), "help": p.help}
    label = p.label or p.url
    kind = p.widget or (
        "text"
        if p.chars
        else "toggle"
        if p.boolean
        else "select_slider"
        if p.choices and all(isinstance(c, (int, float)) for c in p.choices)
        else "radio"
        if p.choices and len(p.choices) <= 5
        else "selectbox"
        if p.choices
        else "slider"
    )
    if p.shown is not None and "format_func" not in kw:
        kw["format_func"] = p.shown
    elif p.names and "format_func" not in kw:
        shown = dict(zip(p.choices, p.names))
        kw["format_func"] = lambda v: shown.get(v, str(v))
    elif kind == "select_slider" and "format_func" not in kw:
        kw["format_func"] = show
    args |= kw
    if kind == "text":
        return box.text_input(label, max_chars=p.chars or None, **args)
    if kind == "toggle":
        return box.toggle(label, **args)
    if kind == "checkbox":
        return box.checkbox(label, **args)
    if kind == "select_slider":
        return box.select_slider(label, options=list(p.choices), **args)
    if kind == "radio":
        return box.radio(label, list(p.choices), horizontal=True, **args)
    if kind == "selectbox":
        options = list(p.choices) if p.choices else list(range(int(p.lo), int(p.hi) + 1))
        return box.selectbox(label, options, **args)
    if kind == "number":
        return box.number_input(label, p.lo, p.hi, step=p.step or 1, **args)
    lo, hi = (int(p.lo), int(p.hi)) if p.integer else (float(p.lo), float(p.hi))
    if hi <= lo:  # one allowed value (a step of 1 token): a disabled slider, which needs a range
        hi, args["disabled"] = lo + 1, True
    if p.step is not None:
        args["step"] = p.step
    return box.slider(label, lo, hi, **args)
