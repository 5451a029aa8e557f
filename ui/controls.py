"""The what-if controls, kept per session and mirrored in the URL.

How the values travel (checked in Chromium on Streamlit 1.67, see docs/DESIGN.md):
1. The first run of a session seeds ``st.session_state[state_key]`` (a :class:`WhatIf`) from
   ``st.query_params``; bad values are clamped and the notices shown on the page.
2. Every page re-seeds each widget's key from that WhatIf before drawing the widget, so a value
   survives page switches (Streamlit drops the state of widgets a page does not draw).
3. A widget's ``on_change`` copies its value back into the WhatIf (validated).
4. After drawing, the WhatIf is written to ``st.query_params``: the address bar is a share link.

The shared sidebar set uses state key "whatif", widget keys "ctl_*" and unprefixed URL names; the
Compare page draws two more sets ("a_", "b_") with the same function.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from attention_core import INPUT_KINDS, MASK_KINDS, WhatIf, allowed_heads
from attention_core.config import MAX_D_MODEL, MAX_SEED, MAX_TEXT, PARAM_NAMES, T_MAX, T_MIN, nearest_heads
from attention_core.inputs import MAX_TOKENS

STATE_KEY = "whatif"
NOTICE_KEY = "whatif_notices"
TEMPERATURES = [round(10 ** (e / 10), 3) for e in range(-10, 11)]  # 0.1 .. 10 in log steps
MASK_LABELS = {"none": "none", "causal": "causal (no peeking ahead)", "padding": "padding (last keys are pads)",
               "causal+padding": "causal + padding"}
INPUT_LABELS = {"random": "seeded random", "sentence": "typed sentence", "one_hot": "one-hot pattern"}
ALL_CONTROLS = ("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed", "positional")


@dataclass(frozen=True)
class ControlSet:
    """Where one set of what-if controls keeps its state: session key, widget key prefix, URL prefix."""

    state_key: str = STATE_KEY
    widget_prefix: str = "ctl_"
    url_prefix: str = ""

    @property
    def notice_key(self) -> str:
        return f"{self.state_key}_notices"

    def widget_key(self, name: str) -> str:
        return f"{self.widget_prefix}{name}"

    def url_names(self) -> set[str]:
        return {self.url_prefix + n for n in PARAM_NAMES.values()}


SHARED = ControlSet()


def _params_for(cs: ControlSet) -> dict:
    """This set's URL parameters with the prefix removed."""
    qp = st.query_params.to_dict()
    n = len(cs.url_prefix)
    return {k[n:]: v for k, v in qp.items() if k.startswith(cs.url_prefix)} if n else qp


def current(cs: ControlSet = SHARED, default: WhatIf | None = None) -> WhatIf:
    """The session's WhatIf for this set, seeded from the URL (over ``default``) on first use."""
    if cs.state_key not in st.session_state:
        cfg, notices = WhatIf.from_query_params(_params_for(cs), base=default)
        st.session_state[cs.state_key] = cfg
        st.session_state[cs.notice_key] = [f"{cs.url_prefix}{n}" if cs.url_prefix else n for n in notices]
    return st.session_state[cs.state_key]


def set_current(cfg: WhatIf, notices: list[str] | None = None, cs: ControlSet = SHARED) -> None:
    """Replace the session's WhatIf (presets, the Compare page)."""
    st.session_state[cs.state_key] = cfg
    st.session_state[cs.notice_key] = list(notices or [])


def _on_change(name: str, cs: ControlSet) -> None:
    """Copy one widget's value into the WhatIf, keeping it valid."""
    cfg = current(cs)
    value = st.session_state.get(cs.widget_key(name))
    notices: list[str] = []
    if name in ("sentence", "pattern"):
        text = str(value or "")
        if not text.split():
            st.session_state[cs.notice_key] = [f"The {name} is empty; it must have at least one token. Kept the previous one."]
            return
        if len(text) > MAX_TEXT:
            notices.append(f"The {name} was longer than {MAX_TEXT} characters and was cut.")
            text = text[:MAX_TEXT]
        value = text
    changes = {name: value}
    if name == "d_model" and value % cfg.n_heads:
        heads = nearest_heads(value, cfg.n_heads)
        notices.append(f"{cfg.n_heads} heads do not divide d_model={value}; switched to {heads} heads.")
        changes["n_heads"] = heads
    try:
        st.session_state[cs.state_key] = cfg.replace(**changes)
    except ValueError as exc:  # a value the widget should not allow; keep the last good setting
        notices.append(f"Not applied: {exc}")
    st.session_state[cs.notice_key] = notices


def whatif_controls(box, cs: ControlSet = SHARED, show: tuple[str, ...] = ALL_CONTROLS,
                    default: WhatIf | None = None, label_suffix: str = "") -> WhatIf:
    """Draw the chosen controls of one set into ``box`` (the sidebar or a column) and return its WhatIf.

    Controls not in ``show`` keep their values (and stay in the URL).
    """
    cfg = current(cs, default)

    def seed(name, value):
        st.session_state[cs.widget_key(name)] = value
        return dict(key=cs.widget_key(name), on_change=_on_change, args=(name, cs))

    sfx = label_suffix
    if "input_kind" in show:
        box.radio(f"Input{sfx}", INPUT_KINDS, format_func=INPUT_LABELS.get, horizontal=True,
                  help="Seeded random vectors, a sentence you type (one vector per word), or one-hot symbols.",
                  **seed("input_kind", cfg.input_kind))
        if cfg.input_kind == "sentence":
            box.text_area(f"Sentence{sfx}", max_chars=MAX_TEXT, help=f"Split on spaces; up to {MAX_TOKENS} tokens are used.",
                          **seed("sentence", cfg.sentence))
        elif cfg.input_kind == "one_hot":
            box.text_input(f"One-hot pattern{sfx}", max_chars=200, help="Symbols separated by spaces, repeated to seq_len.",
                           **seed("pattern", cfg.pattern))
    if "seq_len" in show:
        sentence = cfg.input_kind == "sentence" and "input_kind" in show
        box.slider(f"seq_len (tokens){sfx}", 1, MAX_TOKENS, disabled=sentence,
                   help="The sentence sets the number of tokens." if sentence else "Number of tokens T.",
                   **seed("seq_len", cfg.seq_len))
        if sentence:
            box.caption(f"The sentence has {min(len(cfg.sentence.split()), MAX_TOKENS)} tokens; seq_len applies to the "
                        "other inputs.")
    if "d_model" in show:
        box.slider(f"d_model{sfx}", 1, MAX_D_MODEL, help="Embedding width.", **seed("d_model", cfg.d_model))
    if "n_heads" in show:
        box.select_slider(f"heads{sfx}", options=allowed_heads(cfg.d_model),
                          help=f"Only head counts that divide d_model={cfg.d_model} are offered.",
                          **seed("n_heads", cfg.n_heads))
        box.caption(f"d_k = d_model / heads = {cfg.d_model} / {cfg.n_heads} = {cfg.d_k}")
    if "scaled" in show:
        box.toggle(f"scale by 1/√d_k{sfx}", **seed("scaled", cfg.scaled))
    if "temperature" in show:
        box.select_slider(f"temperature{sfx}", options=sorted(set(TEMPERATURES) | {cfg.temperature}),
                          format_func=lambda t: f"{t:g}",
                          help=f"Divides the logits before the softmax; {T_MIN:g} to {T_MAX:g} in log steps.",
                          **seed("temperature", cfg.temperature))
    if "mask" in show:
        box.selectbox(f"mask{sfx}", MASK_KINDS, format_func=MASK_LABELS.get, **seed("mask", cfg.mask))
    if ("mask" in show and "padding" in cfg.mask) or "pad_count" in show:
        box.slider(f"pad count{sfx}", 0, MAX_TOKENS, help="How many keys at the end are padding.",
                   **seed("pad_count", cfg.pad_count))
    if "positional" in show:
        box.checkbox(f"add positional encoding{sfx}", **seed("positional", cfg.positional))
    if "seed" in show:
        box.number_input(f"seed{sfx}", 0, MAX_SEED, step=1, **seed("seed", cfg.seed))
    return current(cs)


def sidebar_controls(show: tuple[str, ...] = ALL_CONTROLS, heading: str = "What-if controls",
                     share: bool = True) -> WhatIf:
    """The shared controls in the sidebar, the notices, the URL and (unless ``share`` is False, for a
    page that adds its own URL parameters later and draws the box itself) the share link."""
    st.sidebar.header(heading)
    cfg = whatif_controls(st.sidebar, SHARED, show)
    show_notices()
    write_url(cfg)
    if share:
        share_box(st.sidebar)
    return cfg


def show_notices(cs: ControlSet = SHARED) -> None:
    """Show what was changed from the URL or a control as one visible warning."""
    notices = st.session_state.get(cs.notice_key) or []
    if notices:
        st.warning("Some settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notices), icon="⚠️")


def write_url(cfg: WhatIf, cs: ControlSet = SHARED) -> None:
    """Mirror the WhatIf into the URL, leaving other parameters (other sets, page extras) alone."""
    wanted = {cs.url_prefix + k: v for k, v in cfg.to_query_params().items()}
    qp = st.query_params
    for name in cs.url_names() - wanted.keys():
        if name in qp:
            del qp[name]
    changed = {k: v for k, v in wanted.items() if qp.get(k) != v}
    if changed:
        qp.update(changed)


def share_link() -> str:
    """The URL of this page with every setting in it (absolute when the browser told us its address)."""
    base = st.context.url or ""
    return f"{base}?{urlencode(st.query_params.to_dict())}"


def share_box(box) -> None:
    """A copyable share link (st.code has a copy button)."""
    with box.expander("🔗 Share this experiment"):
        link = share_link()
        st.code(link, language=None, wrap_lines=True)
        st.caption(f"Copy it with the button at the top right of the box ({len(link)} characters). "
                   "Whoever opens it gets this page with these settings.")


def fmt(x: float, digits: int = 3) -> str:
    """A number as short text for the sentences on a page (3 significant digits)."""
    return f"{x:.{digits}g}"
