"""Live attention maps: every head's weights redrawn in the browser while a control moves.

A learner dragging the temperature, or flipping the scaling, sees every head sharpen or melt at every animation
frame; the server hears about the value once, on release. The split:

- Python sends, in the page's full run (:func:`live_maps`), two elements: the maps (their layout, token labels,
  d_k and colour tables; nothing that a release changes, so from the second run on Streamlit's message cache sends
  a reference to them instead of their bytes), and a small feed with the panels' setting. The raw scores
  S = Q Kᵀ of every head (float32) travel in the feed once per input and session: the scores do not depend on the
  temperature, the scaling or the mask, so a change of those sends no scores again. Where Q and K are smaller than
  S (d_k·(Tq + Tk) < Tq·Tk: long inputs, narrow heads; 4 MB in place of 17 MB at 512 tokens x 16 heads of d_k 64)
  the feed carries them instead and the browser multiplies them out before anything reads the scores.
- The browser keeps the scores it was sent (``feed.js``; ``softmax.js``: one pure function per formula;
  ``maps.js``: the drawing) and computes A = softmax(S / (s·τ)) under the mask for the value under the thumb, and
  draws every map on one colour scale, the picked query's bars and each head's figures.
- On release the component reports ``setting``; :func:`live_maps`' callback puts it into the page's own controls
  (the what-if set's temperature, scaling, mask and pad count, the page's head and query pickers), and the page
  reruns: a widget of the same setting shows the value (the sidebar's temperature on Masks and Multi-head), the
  URL and the share link carry it, the sentences are computed for it. On a page that draws no other control for
  those settings (the Playground, Compare) a release that picks nothing reruns only the page's body.
- Where the inputs and outputs are small enough to be drawn cell by cell, the browser draws them too
  (:func:`live_outputs`, ``outputs.js``): X and Z on the Playground, A's Z, B's Z and B − A on Compare, Z following
  the maps' weights at every frame. The maps' feed carries X, V and W_o of every panel's input once per input and
  session, as the scores; the element holds nothing a release changes.
- A sidebar change that reruns only the page's body (ui/session/partial.py) hands the maps the new setting through
  :func:`live_sync`, a feed without scores.
- A browser that lacks the scores the feed names (a reconnect that lost them, a feed dropped by a newer run) asks
  for them (the maps' ``need`` trigger) and the next run sends them again; a new session (a second tab, a reload,
  a server restart) has been sent nothing, so its first run sends them.

Python stays the source of truth for every number a sentence states; the JavaScript is tested in Chromium
against attention_core (tests/test_live_maps.py).
"""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attention_core import WhatIf
from attention_core.whatif import WhatIfRun
from ui.draw.canvas_maps import lean
from ui.draw.charts import projector, projector_scale
from ui.draw.images import lut
from ui.draw.vega import digest
from ui.server.cache import ByteLRU, register
from ui.session.partial import rerun_body
from ui.session.state import LIVE_KEY

HERE = Path(__file__).parent


SOFTMAX_JS = lean((HERE / "softmax.js").read_text(encoding="utf-8"))
MAPS_JS = lean((HERE / "maps.js").read_text(encoding="utf-8"))
OUTPUTS_JS = lean((HERE / "outputs.js").read_text(encoding="utf-8"))
FEED_JS = lean((HERE / "feed.js").read_text(encoding="utf-8"))
SYNC_JS = lean((HERE / "sync.js").read_text(encoding="utf-8"))
CSS = (HERE / "live.css").read_text(encoding="utf-8")

# one ES module: softmax.js's pure functions, the elements' reader, then the drawing of the maps and of the outputs
# that follow them (no build step, nothing fetched), in an element of its own whose bytes never change: sent once per
# session, then as a reference. The maps, their feed and the outputs carry sync.js, which hands each to the module,
# so a new input sends the maps' data, not the module again.
LIVE_JS = "\n".join((SOFTMAX_JS, FEED_JS, MAPS_JS, OUTPUTS_JS))
_MODULE = st.components.v2.component("attention_explorer.live_module", js=LIVE_JS + "export default function () {}\n")
_MAPS = st.components.v2.component("attention_explorer.live_maps", js=SYNC_JS.replace("KIND", "maps"), css=CSS)
_SYNC = st.components.v2.component("attention_explorer.live_sync", js=SYNC_JS.replace("KIND", "feed"))
_OUTPUTS = st.components.v2.component("attention_explorer.live_outputs", js=SYNC_JS.replace("KIND", "outputs"), css=CSS)

MAGIC = b"AEL1"
CONTROLS = ("temperature", "scaled", "mask")  # what the maps' own controls can move
_SCORES = register(ByteLRU("ui.live.scores", 64 * 2**20))  # S = Q Kᵀ of a setting, float32, its key (and Q, K)
_SENT = "_live_sent"  # session state: {maps key: the keys of the score arrays its last feed named (the browser holds)}


@dataclass(frozen=True)
class Scores:
    """The raw scores of one input and the key the browser keeps them under (a digest of the numbers); where they
    are made from smaller factors, those too: the feed sends Q and K in place of S (:func:`factors_smaller`). The
    other arrays a feed carries (X, V, W_o: :func:`_outputs_arrays`) are kept in ``S`` and have no factors."""

    S: np.ndarray  # (H, T, T) float32
    key: str
    Q: np.ndarray | None = None  # (H, Tq, d_k) float32, C-contiguous, when it and K are smaller than S
    K: np.ndarray | None = None  # (H, Tk, d_k) float32

    def shape(self) -> dict:
        """Its entry in a feed header's ``shapes``: {H, Tq, Tk} of the array kept, and d_k when Q and K travel."""
        H, Tq, Tk = self.S.shape
        return {"H": H, "Tq": Tq, "Tk": Tk} | ({"dk": int(self.Q.shape[-1])} if self.Q is not None else {})

    def parts(self) -> tuple[np.ndarray, ...]:
        """What a feed sends of it, in order: Q then K, or S."""
        return (self.S,) if self.Q is None else (self.Q, self.K)


def factors_smaller(Tq: int, Tk: int, dk: int) -> bool:
    """Whether Q (Tq, d_k) and K (Tk, d_k) are fewer numbers than S = Q Kᵀ (Tq, Tk); a tie sends S (at 128 tokens and
    d_k 64 they are the same bytes, and S needs no arithmetic in the browser)."""
    return dk * (Tq + Tk) < Tq * Tk


def _scores(run: WhatIfRun) -> Scores:
    cfg = run.config
    key = cfg.replace(temperature=1.0, scaled=True, mask="none", pad_count=0)

    def compute() -> Scores:
        S = np.ascontiguousarray(run.q @ np.swapaxes(run.k, -1, -2), np.float32)  # (H, T, T)
        (Tq, dk), Tk = run.q.shape[1:], run.k.shape[1]
        if not factors_smaller(Tq, Tk, dk):
            return Scores(S, digest(S).hex())
        Q, K = (np.ascontiguousarray(a, np.float32) for a in (run.q, run.k))
        return Scores(S, digest(S).hex(), Q, K)

    return _SCORES.get_or_compute(key, compute)


def _outputs_arrays(run: WhatIfRun) -> tuple[Scores, Scores, Scores]:
    """X ``(1, T, d)``, V ``(H, T, d_k)`` and W_o ``(1, d, d)`` of ``run``'s input, float32, each with its key: what the
    browser needs to draw X and Z = concat_h(A_h V_h) W_o for any temperature, scaling or mask (outputs.js)."""
    cfg = run.config
    key = ("outputs", cfg.replace(temperature=1.0, scaled=True, mask="none", pad_count=0))

    def compute() -> tuple[Scores, Scores, Scores]:
        parts = (run.x[None], run.v, run.w[3][None])
        return tuple(Scores(a, digest(a).hex()) for a in (np.ascontiguousarray(p, np.float32) for p in parts))

    return _SCORES.get_or_compute(key, compute)


def scores(run: WhatIfRun) -> np.ndarray:
    """The raw scores S = Q Kᵀ of every head, ``(H, T, T)`` float32, kept per input (the temperature, the scaling
    and the mask do not change them)."""
    return _scores(run).S


def setting_of(cfg: WhatIf, head: int, query: int, stretch: bool) -> dict:
    """The part of a setting the maps redraw for (what the component's controls and pickers move)."""
    return {
        "temperature": float(cfg.temperature),
        "scaled": bool(cfg.scaled),
        "mask": cfg.mask,
        "pad": int(cfg.pad_count),
        "head": int(head),
        "query": int(query),
        "stretch": bool(stretch),
    }


def pack(arrays: list[np.ndarray], header: dict) -> bytes:
    """ "AEL1", the header's length, the header as JSON (padded to 4 bytes), then each array as little-endian
    float32, in order (a feed's header gives their shapes: ``shapes``, one entry per array kept, whose ``dk`` says
    that two arrays, Q then K, stand for it; :func:`_feed`, feed.js's ``unpack``)."""
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    pad = b" " * ((4 - len(text) % 4) % 4)
    body = b"".join(np.ascontiguousarray(S, dtype="<f4").tobytes() for S in arrays)
    return MAGIC + struct.pack("<I", len(text)) + text + pad + body


def _rev() -> int:
    """The newer of two settings wins in the browser: microseconds of the clock, at least one more than this
    session's last. A clock, not a count: a tab that reconnects to a restarted server starts a new session, whose
    settings must still win over the ones its maps took from the old one."""
    rev = max(time.time_ns() // 1000, st.session_state.get("_live_rev", 0) + 1)
    st.session_state["_live_rev"] = rev
    return rev


def _sent() -> dict:
    """{maps key: keys of the score arrays} this session's browser holds (a new session has been sent nothing)."""
    return st.session_state.setdefault(_SENT, {})


def _maps_key(found: list[Scores], runs: list[WhatIfRun]) -> str:
    """The key of what a set of maps draws: its score arrays' keys and a digest of its panels' token labels."""
    labels = json.dumps([list(run.tokens) for run in runs]).encode("utf-8")
    return "-".join(sc.key for sc in found) + "-" + digest(np.frombuffer(labels, np.uint8)).hex()[:16]


def _feed(key: str, settings: dict[str, dict], scores_key: str, found: list[Scores]) -> bytes:
    """The feed of the maps of ``key``: the panels' settings, the keys of the score arrays they draw, and those
    arrays this session has not sent (Compare: a new seq_len of A sends A's scores, not B's again).

    The header: {key, panels, rev, scores (the maps' key), arrays (the key of every array the maps and outputs
    read)}, and for the arrays it carries, carried (their indices in arrays) and shapes (one each: {H, Tq, Tk}, the
    array kept, (H, Tq, Tk) float32; with dk, scores sent as their factors Q (H, Tq, dk) then K (H, Tk, dk), which
    feed.js multiplies out to S = Q Kᵀ). An array keeps its key (the digest of S) whichever way it travels.

    The browser keeps the arrays the last feed named (feed.js), as this session counts them; maps that still lack
    one after a feed ask for them again (``need``), which forgets the count."""
    held = _sent().get(key, ())
    keys = [sc.key for sc in found]
    carried = [i for i, k in enumerate(keys) if k not in held]
    header = {"key": key, "panels": settings, "rev": _rev(), "scores": scores_key, "arrays": keys}
    if carried:
        header["carried"] = carried
        header["shapes"] = [found[i].shape() for i in carried]
    _sent()[key] = tuple(keys)
    return pack([part for i in carried for part in found[i].parts()], header)


@dataclass(frozen=True)
class Panel:
    """One setting the live maps draw (the Playground has one, Compare A and B, Masks one per mask)."""

    name: str  # how its setting comes back ("" for a page's only panel)
    run: WhatIfRun  # the setting's run: its scores and labels
    setting: dict  # setting_of(...): what the browser redraws for
    on_release: object  # callable(setting dict): makes a released setting the page's own (release_into)
    title: str = ""  # drawn above its maps ("A", "causal")
    controls: tuple[str, ...] = ()  # its own live controls: "temperature", "scaled", "mask"
    heads: str = "all"  # "all" heads, or the "picked" one (setting["head"])
    bars: bool = False  # draw the picked query's weights as bars
    mask: str | None = None  # a mask the panel always shows, whatever its setting (Masks' rows)
    size: int | None = None  # CSS px of its maps (default: live_maps' size)


def live_maps(
    key: str,
    panels: list[Panel],
    *,
    shared: tuple[str, ...] = (),
    diff: tuple[str, str] | None = None,
    size: int = 150,
    partial: bool = False,
    outputs: bool = False,
) -> None:
    """Mount live maps of ``panels`` on one colour scale (in the page's full run). ``shared`` controls (a common
    bar) move every panel at once; ``diff`` = (a, b) also draws b − a of their picked heads. When the learner
    lets go of a control or picks a map cell, each panel's ``on_release`` receives its setting and the page reruns
    whole (the sidebar, the URL and the sentences follow). With ``partial`` (a page that draws no other control
    for the panels' live settings: the Playground, Compare), a release that moved only those settings, not a picker,
    reruns only the page's body (ui/session/partial.py), which sends the sentences and the URL of the new setting and
    leaves the widgets, the maps and the rest of the page as the browser has them.

    Two elements: the maps, whose data holds nothing a release changes (Streamlit's message cache sends the same
    bytes as a reference), and their feed: the settings, and the scores once per input and session. With
    ``outputs`` the feed also carries what :func:`live_outputs` draws every panel's X and Z from (X, V and W_o of
    each panel's input, each array once)."""
    found, index = _found([p.run for p in panels])
    scores_key = _maps_key(found, [p.run for p in panels])
    header = {
        "key": scores_key,
        "sync": key,
        "scores": [{"key": sc.key, **dict(zip(("H", "Tq", "Tk"), sc.S.shape))} for sc in found],
        "panels": [
            {
                "name": p.name,
                "title": p.title,
                "scores": index[_scores(p.run).key],
                "dk": int(p.run.config.d_k),
                "rows": list(p.run.tokens),
                "cols": list(p.run.tokens),
                "heads": None if p.heads == "all" else "picked",
                "controls": list(p.controls),
                "bars": p.bars,
                "mask": p.mask,
                "size": p.size,
            }
            for p in panels
        ],
        "shared": list(shared),
        "diff": list(diff) if diff else None,
        "lut": lut("viridis").tolist(),
        "lut_diverging": lut("diverging").tolist(),
        "size": int(size * projector_scale()),
        "projector": projector(),
    }
    by_name = {p.name: p for p in panels}

    def released():
        state = st.session_state.get(key) or {}
        value = state.get("setting") if hasattr(state, "get") else None
        if not isinstance(value, dict) or not isinstance(value.get("panels"), dict):
            return
        moved = False  # a widget drawn in the full run (a picker) shows another value now
        for name, setting in value["panels"].items():
            if name in by_name and isinstance(setting, dict):
                moved = bool(by_name[name].on_release(setting)) or moved
        if partial and not moved:
            rerun_body()

    def needed():
        """The browser does not hold the scores its feed named: this run sends them again."""
        _sent().pop(key, None)

    text = json.dumps(header, separators=(",", ":"))
    _MODULE(key=f"{key}_module", height=0)  # the same bytes every run: a reference from the session's second on
    _MAPS(
        key=key,
        data=text,
        default={"setting": None},
        on_setting_change=released,
        on_need_change=needed,
        height="content",
    )
    settings = {p.name: p.setting for p in panels}
    carried = found + _outputs_carried([p.run for p in panels], index) if outputs else found
    _SYNC(key=f"{key}_feed", data=_feed(key, settings, scores_key, carried), height=0)


def _found(runs: list[WhatIfRun]) -> tuple[list[Scores], dict[str, int]]:
    """The score arrays of ``runs``, each once (Compare's A and B often share an input), and {key: its index}."""
    found, index = [], {}
    for run in runs:
        sc = _scores(run)
        if sc.key not in index:
            index[sc.key] = len(found)
            found.append(sc)
    return found, index


def _outputs_carried(runs: list[WhatIfRun], held: dict[str, int]) -> list[Scores]:
    """X, V and W_o of every run, each array once (by its key) and none the feed carries already (``held``): A and
    B of one input share X, and W_o unless their d_model or seed differ."""
    seen, out = set(held), []
    for run in runs:
        for a in _outputs_arrays(run):
            if a.key not in seen:
                seen.add(a.key)
                out.append(a)
    return out


@dataclass(frozen=True)
class OutputMap:
    """One map :func:`live_outputs` draws: X (an input), Z of a panel, or the difference Z of ``panel`` − Z of
    ``base``."""

    kind: str  # "x", "z" or "diff"
    panel: str  # the live maps' panel whose input (x) or weights (z, diff: the minuend) it draws
    title: str  # drawn above the map, and the first words of its text alternative and its hover ("A: Z")
    base: str = ""  # diff: the panel subtracted
    value: str = ""  # what a cell holds, in the hover ("z"); default: the kind's ("x", "z", "Δ z")


def live_outputs(
    key: str,
    runs: WhatIfRun | dict[str, WhatIfRun],
    maps: list[OutputMap] | None = None,
    *,
    scope: str = "one scale for both maps",
) -> None:
    """Inputs and outputs drawn by the browser on one colour scale (outputs.js), each Z following the weights of its
    panel of the live maps of ``key`` while a control moves.

    ``runs``: the run of each panel of those maps by name, in the maps' order (a single run: the Playground's one
    panel, ""). ``maps``: what to draw (default: X and Z of that run, "X input" and "Z output"). The colour scale is
    the largest |value| of the maps other than a difference (the Playground: max(|X|, |Z|); Compare: max(|Z_A|,
    |Z_B|)); a difference is drawn on that same scale. ``scope`` ends the legend: what the scale covers.

    The maps' full run must have been drawn with ``outputs=True`` (their feed carries X, V and W_o once per input);
    the element holds nothing a release changes, so a rerun sends it as a reference."""
    if not isinstance(runs, dict):
        runs = {"": runs}
    if maps is None:
        (name,) = runs
        maps = [OutputMap("x", name, "X input"), OutputMap("z", name, "Z output")]
    values = {"x": "x", "z": "z", "diff": "Δ z"}
    names = []  # the legend names what its scale covers: "x and z", or "z"
    for m in maps:
        if m.kind != "diff" and values[m.kind] not in names:
            names.append(values[m.kind])
    order = list(runs.values())

    def described(run: WhatIfRun) -> dict:
        x, v, wo = _outputs_arrays(run)
        return {
            "rows": list(run.tokens),
            "d": int(run.config.d_model),
            "H": int(run.config.n_heads),
            "dk": int(run.config.d_k),
            "arrays": {"x": x.key, "v": v.key, "wo": wo.key},
        }

    header = {
        "sync": key,
        "scores": _maps_key(_found(order)[0], order),  # the maps of these inputs: only their frames are ours
        "runs": {name: described(run) for name, run in runs.items()},
        "maps": [
            {"kind": m.kind, "panel": m.panel, "base": m.base, "title": m.title, "value": m.value or values[m.kind]}
            for m in maps
        ],
        "legend": " and ".join(names),
        "scope": scope,
        "lut_diverging": lut("diverging").tolist(),
        "projector": projector(),
    }
    _OUTPUTS(key=f"{key}_outputs", data=json.dumps(header, separators=(",", ":")), height="content")


def live_sync(key: str, settings: dict[str, dict]) -> None:
    """In a page's body: hand a body-only rerun's settings (by panel name) to the live maps of ``key``, without
    sending their scores again. A full run's feed (:func:`live_maps`) carries them already: nothing is drawn."""
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.fragment_ids_this_run:
        return
    header = {"key": key, "panels": settings, "rev": _rev()}
    _SYNC(key=f"{key}_sync", data=pack([], header), height=0)


def release_into(cs, pickers: dict[str, str] | None = None):
    """An ``on_release`` that makes the released setting the page's own: the what-if set ``cs``'s widgets
    (temperature, scaling, mask, pad count) and the page's pickers (``{"head": widget key, "query": widget key}``).
    Values are checked as a link's would be: a setting the WhatIf refuses, or a picker out of range, is dropped.
    It returns whether a picker now shows another value (so the page must rerun whole to show it)."""
    from ui.skeleton.controls import current

    def apply(value: dict) -> bool:
        cfg = current(cs)
        try:
            new = cfg.replace(
                temperature=float(value.get("temperature", cfg.temperature)),
                scaled=bool(value.get("scaled", cfg.scaled)),
                mask=str(value.get("mask", cfg.mask)),
                pad_count=int(value.get("pad", cfg.pad_count)),
            )
        except (TypeError, ValueError):
            return False
        for name in ("temperature", "scaled", "mask", "pad_count"):
            st.session_state[cs.widget_key(name)] = getattr(new, name)
        st.session_state[cs.notice_key] = []
        limits = {"head": new.n_heads, "query": None}
        moved = False
        for what, widget in (pickers or {}).items():
            v = value.get(what)
            if isinstance(v, int) and v >= 0 and (limits.get(what) is None or v < limits[what]):
                moved = moved or st.session_state.get(widget) != v
                st.session_state[widget] = v
        return moved

    return apply


def live_on() -> bool:
    """Whether the learner wants live maps (kept across pages; the toggle is drawn by :func:`live_toggle`)."""
    from ui.session.state import kept_value

    return bool(kept_value(LIVE_KEY, True))


def live_toggle(box=None) -> bool:
    """The toggle between live maps (drawn in the browser) and the static charts (drawn by the server)."""
    from ui.session.state import kept_toggle

    return kept_toggle(
        box or st,
        "live maps (redraw in the browser while a control moves)",
        LIVE_KEY,
        True,
        help="On: the maps are drawn in your browser and follow the temperature, scaling and mask controls above "
        "them while you drag; the page updates when you let go. Off: the server draws every map as a chart.",
    )
