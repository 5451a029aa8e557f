"""The what-if controls, kept per session and mirrored in the URL.

How the values travel (Streamlit 1.67; checked in AppTest and Chromium, see docs/DESIGN.md):
1. The first run of a session parses ``st.query_params`` (ui/session/url.py: bad values are clamped and the
   notices shown on the page) and seeds each widget's key ("ctl_seq_len", ...) with the result.
2. On the first run of each page visit the widget keys are put back from the last valid WhatIf
   (Streamlit drops the state of widgets a page does not draw; see ui/session/state.py). Within a visit the
   widgets are the truth and the page's WhatIf is built from their keys: no copying in and out.
3. Streamlit does not know two rules of ours, so two callbacks keep them: a d_model that the head
   count does not divide moves heads to the nearest divisor, and an empty text keeps the last one.
4. After drawing, the WhatIf is written to ``st.query_params``: the address bar is a share link.
   (``bind="query-params"`` would drop bad values silently and cannot carry the d_model -> heads rule.)

The shared sidebar set uses widget keys "ctl_*" and unprefixed URL names; the Compare page draws two
more sets ("a_", "b_") with the same function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlencode

import streamlit as st

from attention_core import INPUT_KINDS, MASK_KINDS, WhatIf, allowed_heads
from attention_core.config import SETTINGS, nearest_heads
from ui.classroom.pulse import ClassPlaces, class_controls, class_links_text
from ui.session.links import link_options
from ui.session.partial import rerun_body
from ui.session.state import SHARE_OPEN, STRETCH_KEY, kept_toggle, visit
from ui.session.url import URL_NAMES, from_query_params, to_query_params

TEMPERATURES = [round(10 ** (e / 10), 3) for e in range(-10, 11)]  # 0.1 .. 10 in log steps
MASK_LABELS = {
    "none": "none",
    "causal": "causal (no peeking ahead)",
    "padding": "padding (last keys are pads)",
    "causal+padding": "causal + padding",
}
INPUT_LABELS = {"random": "seeded random", "sentence": "typed sentence", "one_hot": "one-hot pattern"}
ALL_CONTROLS = ("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed", "positional")
# Controls whose change alters no other widget (the tokens, the head count, the shown controls stay): on a page
# with a body fragment they rerun the body alone (ui/session/partial.py). The others rerun the page.
LEAF_CONTROLS = frozenset({"scaled", "temperature", "seed", "pad_count", "positional"})


@dataclass(frozen=True)
class ControlSet:
    """Where one set of what-if controls keeps its state: the last valid WhatIf, widget keys, URL names."""

    state_key: str = "whatif"  # session key of the last valid WhatIf (text fields fall back to it)
    widget_prefix: str = "ctl_"
    url_prefix: str = ""

    @property
    def good_key(self) -> str:
        return self.state_key

    @property
    def notice_key(self) -> str:
        return f"{self.state_key}_notices"

    @property
    def visit_key(self) -> str:
        return f"{self.state_key}_visit"  # the page visit whose widgets were last seeded

    def widget_key(self, name: str) -> str:
        return f"{self.widget_prefix}{name}"

    def url_names(self) -> set[str]:
        return {self.url_prefix + n for n in URL_NAMES.values()}


SHARED = ControlSet()


def _params_for(cs: ControlSet) -> dict:
    """This set's URL parameters with the prefix removed."""
    qp = st.query_params.to_dict()
    n = len(cs.url_prefix)
    return {k[n:]: v for k, v in qp.items() if k.startswith(cs.url_prefix)} if n else qp


def set_current(cfg: WhatIf, notices: list[str] | None = None, cs: ControlSet = SHARED) -> None:
    """Put ``cfg`` into the set's widgets (first run, presets, reset)."""
    for name in SETTINGS:
        st.session_state[cs.widget_key(name)] = getattr(cfg, name)
    st.session_state[cs.good_key] = cfg
    st.session_state[cs.notice_key] = list(notices or [])
    st.session_state[cs.visit_key] = visit()


def current(cs: ControlSet = SHARED, default: WhatIf | None = None) -> WhatIf:
    """The session's WhatIf for this set: seeded from the URL (over ``default``) on first use, then the widgets'."""
    if cs.good_key not in st.session_state:
        cfg, notices = from_query_params(_params_for(cs), base=default)
        set_current(cfg, [f"{cs.url_prefix}{n}" if cs.url_prefix else n for n in notices], cs)
        return cfg
    good = st.session_state[cs.good_key]
    if st.session_state.get(cs.visit_key) != visit():  # a page switch dropped the widgets' state: put it back
        set_current(good, st.session_state.get(cs.notice_key), cs)
        return good
    values = {name: st.session_state.get(cs.widget_key(name), getattr(good, name)) for name in SETTINGS}
    try:
        cfg = WhatIf(**values)
    except ValueError as exc:  # cannot happen through the widgets; keep the last good setting if it does
        st.session_state[cs.notice_key] = [f"Not applied: {exc}"]
        set_current(good, st.session_state[cs.notice_key], cs)
        return good
    if cfg == good:
        return good  # nothing to write back: a write costs as much as a read
    st.session_state[cs.good_key] = cfg
    return cfg


def _heads_follow_d_model(cs: ControlSet) -> None:
    """on_change of d_model: keep the head count a divisor of d_model."""
    d_model, heads = st.session_state[cs.widget_key("d_model")], st.session_state[cs.widget_key("n_heads")]
    notices = []
    if d_model % heads:
        new = nearest_heads(d_model, heads)
        notices.append(f"{heads} heads do not divide d_model={d_model}; switched to {new} heads.")
        st.session_state[cs.widget_key("n_heads")] = new
    st.session_state[cs.notice_key] = notices


def _text_kept_valid(name: str, cs: ControlSet) -> None:
    """on_change of a text field: an empty text keeps the last one (with a notice)."""
    key = cs.widget_key(name)
    if not str(st.session_state.get(key) or "").split():
        st.session_state[key] = getattr(st.session_state[cs.good_key], name)
        st.session_state[cs.notice_key] = [
            f"The {name} is empty; it must have at least one token. Kept the previous one."
        ]
    else:
        st.session_state[cs.notice_key] = []


def _clear_notices(cs: ControlSet) -> None:
    st.session_state[cs.notice_key] = []


def _leaf_changed(cs: ControlSet) -> None:
    """on_change of a leaf control: clear the notices, then rerun only the page's body where it has one."""
    _clear_notices(cs)
    rerun_body()


def whatif_controls(
    box,
    cs: ControlSet = SHARED,
    show: tuple[str, ...] = ALL_CONTROLS,
    default: WhatIf | None = None,
    label_suffix: str = "",
    leaf: frozenset[str] | set[str] = LEAF_CONTROLS,
) -> WhatIf:
    """Draw the chosen controls of one set into ``box`` (the sidebar or a column) and return its WhatIf.

    Controls not in ``show`` keep their values (and stay in the URL). Bounds come from the field declarations.
    The controls named in ``leaf`` rerun only the page's body (ui/session/partial.py) where the page has one.
    """
    cfg = current(cs, default)

    def kw(name, on_change=None, args=None):
        default = _leaf_changed if name in leaf else _clear_notices
        return dict(key=cs.widget_key(name), on_change=on_change or default, args=args or (cs,))

    def bounds(name):
        spec = SETTINGS[name]
        return int(spec.lo), int(spec.hi)

    sfx = label_suffix
    if "input_kind" in show:
        box.radio(
            f"Input{sfx}",
            INPUT_KINDS,
            format_func=INPUT_LABELS.get,
            horizontal=True,
            help="Seeded random vectors, a sentence you type (one vector per word), or one-hot symbols.",
            **kw("input_kind"),
        )
        if cfg.input_kind == "sentence":
            box.text_area(
                f"Sentence{sfx}",
                max_chars=SETTINGS["sentence"].max_len,
                help=f"Split on spaces; up to {bounds('seq_len')[1]} tokens are used.",
                **kw("sentence", _text_kept_valid, ("sentence", cs)),
            )
        elif cfg.input_kind == "one_hot":
            box.text_input(
                f"One-hot pattern{sfx}",
                max_chars=SETTINGS["pattern"].max_len,
                help="Symbols separated by spaces, repeated to seq_len.",
                **kw("pattern", _text_kept_valid, ("pattern", cs)),
            )
    if "seq_len" in show:
        sentence = cfg.input_kind == "sentence" and "input_kind" in show
        box.slider(
            f"seq_len (tokens){sfx}",
            *bounds("seq_len"),
            disabled=sentence,
            help="The sentence sets the number of tokens." if sentence else "Number of tokens T.",
            **kw("seq_len"),
        )
        if sentence:
            box.caption(
                f"The sentence has {min(len(cfg.sentence.split()), bounds('seq_len')[1])} tokens; seq_len "
                "applies to the other inputs."
            )
    if "d_model" in show:
        box.slider(f"d_model{sfx}", *bounds("d_model"), help="Embedding width.", **kw("d_model", _heads_follow_d_model))
    if "n_heads" in show:
        box.select_slider(
            f"heads{sfx}",
            options=allowed_heads(cfg.d_model),
            help=f"Only head counts that divide d_model={cfg.d_model} are offered.",
            **kw("n_heads"),
        )
        box.caption(f"d_k = d_model / heads = {cfg.d_model} / {cfg.n_heads} = {cfg.d_k}")
    if "scaled" in show:
        box.toggle(f"scale by 1/√d_k{sfx}", **kw("scaled"))
    if "temperature" in show:
        spec = SETTINGS["temperature"]
        box.select_slider(
            f"temperature{sfx}",
            options=sorted(set(TEMPERATURES) | {cfg.temperature}),
            format_func=lambda t: f"{t:g}",
            help=f"τ: divides the scores before the softmax, so below 1 it sharpens every row and above 1 it "
            f"flattens it; {spec.lo:g} to {spec.hi:g} in log steps.",
            **kw("temperature"),
        )
    if "mask" in show:
        box.selectbox(
            f"mask{sfx}",
            MASK_KINDS,
            format_func=MASK_LABELS.get,
            help="Which keys each query may see. causal: only itself and the tokens before it; padding: every key but "
            "the last few, which are padding: filler tokens (pads) that make sequences equally long. The Masks page "
            "shows both.",
            **kw("mask"),
        )
    if ("mask" in show and cfg.padded) or "pad_count" in show:
        box.slider(
            f"pad count{sfx}", *bounds("pad_count"), help="How many keys at the end are padding.", **kw("pad_count")
        )
    if "positional" in show:
        box.checkbox(
            f"add positional encoding{sfx}",
            help="Adds to each token's embedding a vector that depends on its position, so attention can tell where "
            "a token is (the Positional encoding page shows why it must).",
            **kw("positional"),
        )
    if "seed" in show:
        box.number_input(
            f"seed{sfx}",
            *bounds("seed"),
            step=1,
            help="The random seed: the same seed draws the same random inputs and weights, so a shared link shows "
            "the same numbers; another seed draws others.",
            **kw("seed"),
        )
    return current(cs)


# A control whose word a later page teaches, as a page before it explains it in passing: (its page, the sentence).
LATER = {
    "mask": ("Masks", "a **mask** decides which keys each query may see"),
    "positional": (
        "Positional encoding",
        "**positional encoding** adds to each token's embedding a vector that depends on its position",
    ),
}
LATER_LABEL = "Settings later pages teach"


def sidebar_widgets(
    show: tuple[str, ...] = ALL_CONTROLS,
    heading: str = "What-if controls",
    leaf: frozenset[str] | set[str] = LEAF_CONTROLS,
    later: tuple[str, ...] = (),
) -> WhatIf:
    """The shared controls in the sidebar (widgets only; a page's full-run part draws them). The controls in
    ``later`` (keys of LATER: words a later page teaches) go under them, in a closed expander whose first line says
    in passing what they are; it is open when one of them is not at its default, so nothing on the maps is
    hidden."""
    st.sidebar.header(heading)
    hidden = [name for name in link_options().hide if name in show]
    cfg = whatif_controls(st.sidebar, SHARED, tuple(n for n in show if n not in hidden and n not in later), leaf=leaf)
    late = tuple(n for n in show if n in later and n not in hidden)
    if late:
        default = WhatIf()
        on = [n for n in late if getattr(cfg, n) != getattr(default, n)]
        box = st.sidebar.expander(LATER_LABEL, expanded=bool(on))
        box.caption(
            "Taught on later pages: "
            + "; ".join(f"{LATER[n][1]} (the {LATER[n][0]} page)" for n in late)
            + ". "
            + (
                "On in this setting: "
                + ", ".join(
                    f"the {cfg.mask.replace('+', ' + ')} mask" if n == "mask" else "positional encoding" for n in on
                )
                + "."
                if on
                else f"Off until you turn {'them' if len(late) > 1 else 'it'} on."
            )
        )
        cfg = whatif_controls(box, SHARED, late, leaf=leaf)
    if hidden:
        st.sidebar.caption(
            "This lesson's link fixes "
            + ", ".join(f"{URL_NAMES[n]} = {getattr(cfg, n)}" for n in hidden)
            + "; those controls are hidden."
        )
    stretch_toggle()
    return cfg


def stretch_toggle() -> bool:
    """The sidebar's choice to stretch the colour scales of the maps drawn together (kept across pages)."""
    return kept_toggle(
        st.sidebar,
        "stretch the colour scales",
        STRETCH_KEY,
        False,
        on_change=rerun_body,
        help="Off: every weight map and weight bar runs from 0 to 1, so what looks sharper is sharper. On: the maps "
        "drawn together (a grid of heads, A and B, a pair of twins) share one range fitted to their weights, written "
        "under each map; spread-out attention shows its structure, and the maps still compare with each other.",
    )


def show_notices(cs: ControlSet = SHARED, box=st) -> None:
    """Show what was changed from the URL or a control as one visible warning."""
    notices = st.session_state.get(cs.notice_key) or []
    if notices:
        box.warning(
            "Some settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notices), icon=":material/warning:"
        )


def write_url(cfg: WhatIf, cs: ControlSet = SHARED, qp=None) -> None:
    """Mirror the WhatIf into the URL, leaving other parameters (other sets, page extras) alone. ``qp``: a dict of
    the parameters to write into instead (the page sends the whole URL once, ui.skeleton.page.Page._outputs)."""
    wanted = {cs.url_prefix + k: v for k, v in to_query_params(cfg).items()}
    qp = st.query_params if qp is None else qp
    for name in cs.url_names() - wanted.keys():
        if name in qp:
            del qp[name]
    changed = {k: v for k, v in wanted.items() if qp.get(k) != v}
    if changed:
        qp.update(changed)


def share_link(params: dict | None = None) -> str:
    """The URL of this page with every setting in it (absolute when the browser told us its address), without the
    teacher token of a class (only the teacher link of ui.classroom.pulse.class_links_text carries it). ``params``:
    the URL's parameters as this run has just written them (default: read them)."""
    base = st.context.url or ""
    params = st.query_params.to_dict() if params is None else params
    return f"{base}?{urlencode({k: v for k, v in params.items() if k != 'teacher'})}"


class SharePlaces(NamedTuple):
    """The share box as the page's full run drew it: where its drawing writes the link, and the class's places."""

    links: object  # a container at the top of the box
    member: ClassPlaces


def share_frame(box) -> SharePlaces:
    """The share box's expander and widgets (the page's full run): "Start a class" or the class's switch, under a
    place for the link that :func:`share_text` fills while the box is open. The expander keeps its state: opening
    or closing it reruns the page (a body rerun could not write into a place the last full run left empty: Streamlit
    reserves a fragment's places outside it in the full run); closed, a run sends no link and a page opens without
    Streamlit's code highlighter (1.56 MB of JavaScript, loaded for the first ``st.code`` on a page)."""
    with box.expander("Share this experiment", icon=":material/link:", key=SHARE_OPEN, on_change="rerun"):
        links = st.container()
        return SharePlaces(links, class_controls())


def share_text(places: SharePlaces, params: dict | None = None) -> None:
    """A copyable share link (st.code has a copy button) with its length, or the class's links (ui/classroom/pulse.py),
    while the share box is open (the class is led to the teacher's page however the box is); ``params`` as
    :func:`share_link` takes them."""
    link = share_link(params)
    # as the browser has it now: a body rerun keeps the places of the full run before it
    shown = bool(st.session_state.get(SHARE_OPEN))
    if class_links_text(link, places.links if shown else None, places.member) or not shown:
        return
    places.links.code(link, language=None, wrap_lines=True)
    places.links.caption(
        f"Copy it with the button at the top right of the box ({len(link)} characters). "
        "Whoever opens it gets this page with these settings."
    )
