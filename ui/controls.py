"""The shared what-if controls in the sidebar, kept per session and mirrored in the URL.

How the values travel (checked in Chromium on Streamlit 1.67, see docs/DESIGN.md):
1. The first run of a session seeds ``st.session_state[STATE_KEY]`` (a :class:`WhatIf`) from
   ``st.query_params``; bad values are clamped and the notices shown on the page.
2. Every page re-seeds each widget's key from that WhatIf before drawing the widget, so a value
   survives page switches (Streamlit drops the state of widgets a page does not draw).
3. A widget's ``on_change`` copies its value back into the WhatIf (validated).
4. After drawing, the WhatIf is written to ``st.query_params``: the address bar is a share link.
"""

from __future__ import annotations

import math

import streamlit as st

from attention_core import INPUT_KINDS, MASK_KINDS, WhatIf, allowed_heads
from attention_core.config import MAX_D_MODEL, MAX_SEED, MAX_TEXT, PARAM_NAMES, T_MAX, T_MIN
from attention_core.inputs import MAX_TOKENS

STATE_KEY = "whatif"
NOTICE_KEY = "whatif_notices"
OWN_PARAMS = set(PARAM_NAMES.values())
TEMPERATURES = [round(10 ** (e / 10), 3) for e in range(-10, 11)]  # 0.1 .. 10 in log steps
MASK_LABELS = {"none": "none", "causal": "causal (no peeking ahead)", "padding": "padding (last keys are pads)",
               "causal+padding": "causal + padding"}
INPUT_LABELS = {"random": "seeded random", "sentence": "typed sentence", "one_hot": "one-hot pattern"}
ALL_CONTROLS = ("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed", "positional")


def _widget_key(name: str) -> str:
    return f"ctl_{name}"


def current() -> WhatIf:
    """The session's WhatIf, seeded from the URL on the session's first run."""
    if STATE_KEY not in st.session_state:
        cfg, notices = WhatIf.from_query_params(st.query_params.to_dict())
        st.session_state[STATE_KEY] = cfg
        st.session_state[NOTICE_KEY] = notices
    return st.session_state[STATE_KEY]


def set_current(cfg: WhatIf, notices: list[str] | None = None) -> None:
    """Replace the session's WhatIf (for presets and the Compare page)."""
    st.session_state[STATE_KEY] = cfg
    st.session_state[NOTICE_KEY] = list(notices or [])


def _on_change(name: str) -> None:
    """Copy one widget's value into the WhatIf, keeping it valid."""
    cfg = current()
    value = st.session_state.get(_widget_key(name))
    notices: list[str] = []
    if name in ("sentence", "pattern"):
        text = str(value or "")
        if not text.split():
            notices.append(f"The {name} is empty; it must have at least one token. Kept the previous one.")
            st.session_state[NOTICE_KEY] = notices
            return
        if len(text) > MAX_TEXT:
            notices.append(f"The {name} was longer than {MAX_TEXT} characters and was cut.")
            text = text[:MAX_TEXT]
        value = text
    changes = {name: value}
    if name == "d_model" and value % cfg.n_heads:
        options = allowed_heads(value)
        heads = min(options, key=lambda h: (abs(h - cfg.n_heads), h))
        notices.append(f"{cfg.n_heads} heads do not divide d_model={value}; switched to {heads} heads.")
        changes["n_heads"] = heads
    try:
        st.session_state[STATE_KEY] = cfg.replace(**changes)
    except ValueError as exc:  # a value the widget should not allow; keep the last good setting
        notices.append(f"Not applied: {exc}")
    st.session_state[NOTICE_KEY] = notices


def _seed(name: str, value) -> str:
    key = _widget_key(name)
    st.session_state[key] = value
    return key


def sidebar_controls(show: tuple[str, ...] = ALL_CONTROLS, heading: str = "What-if controls") -> WhatIf:
    """Draw the chosen shared controls in the sidebar and return the current WhatIf.

    Controls not in ``show`` keep their values (and stay in the URL). Notices from the URL or from a
    clamped change are shown at the top of the page.
    """
    cfg = current()
    sb = st.sidebar
    sb.header(heading)
    if "input_kind" in show:
        sb.radio("Input", INPUT_KINDS, format_func=INPUT_LABELS.get, key=_seed("input_kind", cfg.input_kind),
                 on_change=_on_change, args=("input_kind",), horizontal=True,
                 help="Seeded random vectors, a sentence you type (one vector per word), or one-hot symbols.")
        if cfg.input_kind == "sentence":
            sb.text_area("Sentence", key=_seed("sentence", cfg.sentence), on_change=_on_change, args=("sentence",),
                         max_chars=MAX_TEXT, help=f"Split on spaces; up to {MAX_TOKENS} tokens are used.")
        elif cfg.input_kind == "one_hot":
            sb.text_input("One-hot pattern", key=_seed("pattern", cfg.pattern), on_change=_on_change,
                          args=("pattern",), max_chars=200, help="Symbols separated by spaces, repeated to seq_len.")
    if "seq_len" in show:
        sentence = cfg.input_kind == "sentence" and "input_kind" in show
        sb.slider("seq_len (tokens)", 1, MAX_TOKENS, key=_seed("seq_len", cfg.seq_len), on_change=_on_change,
                  args=("seq_len",), disabled=sentence,
                  help="The sentence sets the number of tokens." if sentence else "Number of tokens T.")
    if "d_model" in show:
        sb.slider("d_model", 1, MAX_D_MODEL, key=_seed("d_model", cfg.d_model), on_change=_on_change,
                  args=("d_model",), help="Embedding width.")
    if "n_heads" in show:
        options = allowed_heads(cfg.d_model)
        sb.select_slider("heads", options=options, key=_seed("n_heads", cfg.n_heads), on_change=_on_change,
                         args=("n_heads",), help=f"Only head counts that divide d_model={cfg.d_model} are offered.")
        sb.caption(f"d_k = d_model / heads = {cfg.d_model} / {cfg.n_heads} = {cfg.d_k}")
    if "scaled" in show:
        sb.toggle("scale by 1/√d_k", key=_seed("scaled", cfg.scaled), on_change=_on_change, args=("scaled",))
    if "temperature" in show:
        options = sorted(set(TEMPERATURES) | {cfg.temperature})
        sb.select_slider("temperature", options=options, key=_seed("temperature", cfg.temperature),
                         on_change=_on_change, args=("temperature",), format_func=lambda t: f"{t:g}",
                         help=f"Divides the logits before the softmax; {T_MIN:g} to {T_MAX:g} in log steps.")
    if "mask" in show:
        sb.selectbox("mask", MASK_KINDS, format_func=MASK_LABELS.get, key=_seed("mask", cfg.mask),
                     on_change=_on_change, args=("mask",))
    if ("mask" in show and "padding" in cfg.mask) or "pad_count" in show:
        sb.slider("pad count", 0, MAX_TOKENS, key=_seed("pad_count", cfg.pad_count), on_change=_on_change,
                  args=("pad_count",), help="How many keys at the end are padding.")
    if "positional" in show:
        sb.checkbox("add positional encoding", key=_seed("positional", cfg.positional), on_change=_on_change,
                    args=("positional",))
    if "seed" in show:
        sb.number_input("seed", 0, MAX_SEED, step=1, key=_seed("seed", cfg.seed), on_change=_on_change,
                        args=("seed",))
    show_notices()
    write_url(current())
    return current()


def show_notices() -> None:
    """Show what was changed from the URL or a control as one visible warning."""
    notices = st.session_state.get(NOTICE_KEY) or []
    if notices:
        st.warning("Some settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notices), icon="⚠️")


def write_url(cfg: WhatIf) -> None:
    """Mirror the WhatIf into the URL, leaving other pages' own parameters alone."""
    wanted = cfg.to_query_params()
    qp = st.query_params
    for name in OWN_PARAMS - wanted.keys():
        if name in qp:
            del qp[name]
    changed = {k: v for k, v in wanted.items() if qp.get(k) != v}
    if changed:
        qp.update(changed)


def fmt(x: float, digits: int = 3) -> str:
    """A number as short text for the sentences on a page (3 significant digits)."""
    return f"{x:.{digits}g}"
