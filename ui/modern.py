"""The Positions and the Sinks-and-linear-attention pages: cached computations, URL-bound page controls, chart specs.

Computations take the shared :class:`WhatIf` (a frozen dataclass of primitives) and a few primitives, so the
caches (ui.cache.cached, bounded by bytes) key cheaply. Page controls are declared as :class:`PageParam`
(widget key, URL name, default, allowed values): seeded once per session from the URL (bad values give a
notice and the nearest allowed one), drawn with ``persist_state="session"`` and written back to the URL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from attention_core import WhatIf, attention_scores, scaled_dot_product_attention, softmax
from attention_core.alibi import alibi_slopes
from attention_core.linear_attention import linear_attention, linear_attention_factorised, linear_attention_recurrent
from attention_core.positions import (
    METHODS,
    OffsetProfile,
    angles_beyond_training,
    learned_position_table,
    lookup_positions,
    offset_profile,
    pair_scores,
    position_attention,
)
from attention_core.sinks import sink_attention, streaming_mask
from ui.cache import cached
from ui.compute import cached_run

ROOT = Path(__file__).resolve().parents[1]
NOTES_KEY = "modern_notes"  # notices from this page's URL parameters, shown until one of its controls changes
METHOD_LABELS = {
    "sinusoidal": "sinusoidal (added)",
    "learned": "learned table (added)",
    "rope": "RoPE (rotated)",
    "alibi": "ALiBi (biased)",
}


# ---- page controls bound to the URL


@dataclass(frozen=True)
class PageParam:
    """One page control: where it lives in the session and in the URL, and what it allows."""

    key: str  # widget key in st.session_state
    url: str  # URL parameter name
    default: object  # value when the URL has none (or an unusable one)
    lo: float | None = None  # smallest allowed number (numbers)
    hi: float | None = None  # largest allowed number (numbers)
    choices: tuple = ()  # allowed values (a choice; numbers snap to the nearest)
    integer: bool = False  # whole numbers only
    boolean: bool = False  # on/off, written as 1/0


def parse_param(p: PageParam, raw: str) -> tuple[object, str | None]:
    """``(value, notice)`` for the URL text ``raw``; the notice says what was changed (None if nothing)."""
    shown = repr(str(raw)[:40])
    if p.boolean:
        low = str(raw).strip().lower()
        if low in ("1", "true", "on", "yes", "0", "false", "off", "no"):
            return low in ("1", "true", "on", "yes"), None
        return p.default, f"{p.url}={shown} is not 1 or 0; using {int(p.default)}."
    if p.choices and isinstance(p.choices[0], str):
        if raw in p.choices:
            return raw, None
        return p.default, f"{p.url}={shown} is not one of {', '.join(p.choices)}; using {p.default}."
    try:
        x = float(str(raw).strip())
    except ValueError:
        x = float("nan")
    if not math.isfinite(x) or (p.integer and x != int(x)):
        return (
            p.default,
            f"{p.url}={shown} is not {'a whole number' if p.integer else 'a finite number'}; using {p.default}.",
        )
    if p.choices:
        near = min(p.choices, key=lambda c: (abs(math.log(c / x)) if x > 0 else abs(c - x), c))
        return (
            near,
            None
            if near == x
            else f"{p.url}={x:g} is not offered ({', '.join(f'{c:g}' for c in p.choices)}); using {near:g}.",
        )
    c = min(max(x, p.lo), p.hi)
    c = int(c) if p.integer else c
    return c, None if c == x else f"{p.url}={x:g} is outside {p.lo:g} to {p.hi:g}; using {c:g}."


def note(text: str) -> None:
    st.session_state.setdefault(NOTES_KEY, []).append(text)


def clear_notes() -> None:
    st.session_state[NOTES_KEY] = []


def seed_params(params: list[PageParam]) -> None:
    """Give every control its value from the URL on its first run in this session (with notices)."""
    for p in params:
        if p.key in st.session_state:
            continue
        raw = st.query_params.get(p.url)
        value, notice = (p.default, None) if raw is None else parse_param(p, str(raw))
        st.session_state[p.key] = value
        if notice:
            note(notice)


def clamp(p: PageParam, hi: int, why: str) -> int:
    """Keep an integer control at most ``hi`` for the current setting (with a notice when it moves)."""
    value = st.session_state[p.key]
    if value > hi:
        note(f"{p.url}={value} is more than {hi} ({why}); using {hi}.")
        st.session_state[p.key] = value = hi
    return value


def widget_kw(p: PageParam) -> dict:
    """Keyword arguments that bind a widget to the control ``p``."""
    return dict(key=p.key, persist_state="session", on_change=clear_notes)


def write_params(params: list[PageParam]) -> None:
    """Mirror the controls into the URL (leaving every other parameter alone)."""
    for p in params:
        v = st.session_state[p.key]
        text = str(int(v)) if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)
        if st.query_params.get(p.url) != text:
            st.query_params[p.url] = text


def show_notes() -> None:
    notes = st.session_state.get(NOTES_KEY) or []
    if notes:
        st.warning("Some page settings were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes), icon="⚠️")


def where_next(text: str, links: list[tuple[str, str, str]]) -> None:
    """The page's last words: where to go next, then links (path, label, icon) to those pages in this checkout."""
    st.markdown(f"**Where next**: {text}")
    for path, label, icon in links:
        if (ROOT / path).exists():
            st.page_link(path, label=label, icon=icon)


# ---- Positions page


@dataclass(frozen=True)
class MethodSummary:
    """How one position method's score between the same two tokens varies with their absolute positions."""

    method: str  # one of METHODS
    spread: float | None  # largest spread of the scores that share an offset; None when the method cannot run
    positions: int  # positions compared (fewer than T for a learned table shorter than T)
    note: str  # why the method is restricted or cannot run ("" when it runs on every position)


@dataclass(frozen=True)
class PositionsView:
    """Everything the Positions page draws for one setting."""

    tokens: tuple[str, ...]  # (T,) token labels
    pair: tuple[str, str]  # the query token and the key token moved across positions
    scores: np.ndarray | None  # (P, P) their score at query position m and key position n (selected method)
    profile: OffsetProfile | None  # scores grouped by offset n - m
    weights: np.ndarray | None  # (H, T, T) float32 weights of the selected method on the input
    problem: str  # why the selected method cannot show weights here ("" when it can)
    summaries: tuple[MethodSummary, ...]  # one per method, in METHODS order
    slopes: np.ndarray  # (H,) ALiBi slopes
    unseen_sinusoidal: int  # sinusoidal frequencies meeting angles beyond the trained length that training never saw
    unseen_rope: int  # the same for RoPE's d_k / 2 frequencies
    learned_error: str  # what looking up positions 0 .. T-1 in the learned table says ("" when it has the rows)
    causal: bool  # the mask is causal: offsets n - m <= 0 only, ALiBi in its paper form


def _pair_profile(method, cfg, x, w, head, P, base, table, slope, causal):
    d_k = cfg.d_k
    cols = slice(head * d_k, (head + 1) * d_k)
    i_k = min(1, x.shape[0] - 1)
    s = pair_scores(
        method,
        x[0],
        x[i_k],
        w[0][:, cols],
        w[1][:, cols],
        P,
        base=base,
        table=table,
        slope=slope,
        symmetric=not causal,
        scaled=cfg.scaled,
    )
    return s, offset_profile(s, causal)


@cached(max_mb=32)
def positions_view(cfg: WhatIf, method: str, base: float, train_len: int, head: int) -> PositionsView:
    """The four methods on cfg's input (without the sidebar's positional encoding) for one head."""
    run = cached_run(cfg.replace(positional=False))
    x, w, T, H = run.x.astype(np.float64), run.w, run.T, cfg.n_heads
    causal = "causal" in cfg.mask
    table = learned_position_table(train_len, cfg.d_model, seed=cfg.seed)
    slopes = alibi_slopes(H)
    summaries, chosen = [], (None, None)
    for m in METHODS:
        P, text = T, ""
        if m == "learned" and T > train_len:
            P, text = train_len, f"only positions 0 to {train_len - 1} have a row"
        if m == "rope" and cfg.d_k % 2:
            summaries.append(MethodSummary(m, None, 0, f"d_k = {cfg.d_k} is odd: RoPE rotates pairs"))
            continue
        s, prof = _pair_profile(m, cfg, x, w, head, P, base, table, float(slopes[head]), causal)
        summaries.append(MethodSummary(m, prof.spread, P, text))
        if m == method:
            chosen = (s, prof)
    weights, problem = None, ""
    try:
        _, wts = position_attention(
            method,
            x,
            *w[:3],
            n_heads=H,
            mask=run.mask,
            scaled=cfg.scaled,
            temperature=cfg.temperature,
            base=base,
            table=table,
        )
        weights = wts.astype(np.float32)
    except ValueError as exc:
        problem = str(exc)
    pair = (run.tokens[0], run.tokens[min(1, T - 1)])
    try:
        lookup_positions(table, np.arange(T))
        learned_error = ""
    except ValueError as exc:
        learned_error = str(exc)
    return PositionsView(
        tuple(run.tokens),
        pair,
        chosen[0],
        chosen[1],
        weights,
        problem,
        tuple(summaries),
        slopes,
        angles_beyond_training(train_len, T, cfg.d_model, base),
        angles_beyond_training(train_len, T, cfg.d_k, base) if cfg.d_k % 2 == 0 else 0,
        learned_error,
        causal,
    )


def offset_chart(profile: OffsetProfile, train_len: int, title: str) -> tuple[dict, dict]:
    """(spec, data) of the scores by offset: a band from the lowest to the highest score among the pairs with
    that offset, their mean as a line, and dashed rules where the trained length ends (|offset| = L - 1)."""
    data = {
        "offset": profile.offsets.tolist(),
        "low": profile.low.tolist(),
        "high": profile.high.tolist(),
        "mean": profile.mean.tolist(),
    }
    x = {"field": "offset", "type": "quantitative", "title": "offset j − i (key position − query position)"}
    limits = [o for o in (-(train_len - 1), train_len - 1) if profile.offsets[0] <= o <= profile.offsets[-1] and o]
    layers = [
        {
            "mark": {"type": "area", "opacity": 0.35, "color": "#e45756"},
            "encoding": {
                "x": x,
                "y": {"field": "low", "type": "quantitative", "title": "score (logit)", "scale": {"zero": False}},
                "y2": {"field": "high"},
            },
        },
        {
            "mark": {"type": "line", "color": "#4c78a8", "point": len(profile.offsets) <= 64},
            "encoding": {
                "x": x,
                "y": {"field": "mean", "type": "quantitative"},
                "tooltip": [
                    {"field": "offset", "type": "quantitative"},
                    {"field": "low", "type": "quantitative", "format": ".6g"},
                    {"field": "high", "type": "quantitative", "format": ".6g"},
                ],
            },
        },
    ]
    layers += [
        {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "#333"}, "encoding": {"x": {"datum": o}}}
        for o in limits
    ]  # a datum, not a second data source: the rules share the offset scale
    return {"title": title, "height": 260, "width": "container", "layer": layers}, data


# ---- Sinks and linear attention page


def default_sinks(H: int) -> tuple[float, ...]:
    """Sink logits spread from -2 to 4 over the heads (a trained model learns one per head), in steps of 0.5."""
    if H == 1:
        return (1.0,)
    return tuple(float(round((-2 + 6 * h / (H - 1)) * 2) / 2) for h in range(H))


def parse_sinks(raw: str | None, H: int) -> tuple[tuple[float, ...], list[str]]:
    """Sink logits for H heads from the URL text "0.5,1,-2" (each clamped to -10..10), with notices."""
    values, notes = list(default_sinks(H)), []
    if raw is None:
        return tuple(values), notes
    parts = [s.strip() for s in str(raw).split(",")]
    for h, s in enumerate(parts[:H]):
        try:
            x = float(s)
        except ValueError:
            x = float("nan")
        if not math.isfinite(x):
            notes.append(f"sinks: {s[:20]!r} for head {h + 1} is not a finite number; using {values[h]:g}.")
            continue
        c = round(min(max(x, -10.0), 10.0) * 2) / 2
        if c != x:
            notes.append(f"sinks: {x:g} for head {h + 1} is not a multiple of 0.5 from -10 to 10; using {c:g}.")
        values[h] = c
    if len(parts) > H:
        notes.append(f"sinks has {len(parts)} values but there are {H} heads; the extra ones are ignored.")
    return tuple(values), notes


@dataclass(frozen=True)
class SinksView:
    """Sink attention on every head of the what-if's input, with the plain attention it must reduce to."""

    tokens: tuple[str, ...]  # (T,) token labels
    weights: np.ndarray  # (H, T, T) float32 weights on the real tokens
    sink_weight: np.ndarray  # (H, T) float32 weight each query row gives the sink
    real_sum: np.ndarray  # (H, T) float64 weights on real tokens summed per row
    diff_reference: float  # max |weights - softmax([scores, sink]) without the sink column|
    diff_plain: float  # max |sink attention with sink -inf - plain attention| (weights)


@cached(max_mb=32)
def sinks_view(cfg: WhatIf, sinks: tuple[float, ...], no_sink: bool) -> SinksView:
    """sink_attention(cfg's q, k, v, sinks) and the two invariants measured on it."""
    run = cached_run(cfg.replace(positional=False))
    H, T = run.q.shape[0], run.T
    s = np.full(H, -np.inf) if no_sink else np.asarray(sinks, dtype=np.float64)  # (H,)
    q, k, v = (a.astype(np.float64) for a in (run.q, run.k, run.v))
    _, w, sink_w = sink_attention(q, k, v, s, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    # reference: one softmax over [scores, sink], then drop the sink column
    scores = attention_scores(q, k, scaled=cfg.scaled)  # (H, T, T)
    both = np.concatenate([scores, np.broadcast_to(np.where(np.isfinite(s), s, 0.0)[:, None, None], (H, T, 1))], -1)
    allowed = np.ones((H, T, T), bool) if run.mask is None else np.broadcast_to(run.mask, (H, T, T))
    where = np.concatenate([allowed, np.broadcast_to(np.isfinite(s)[:, None, None], (H, T, 1))], -1)
    ref = softmax(both, temperature=cfg.temperature, where=where)[..., :-1]  # (H, T, T)
    _, w_none, _ = sink_attention(q, k, v, -np.inf, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    _, plain = scaled_dot_product_attention(q, k, v, mask=run.mask, scaled=cfg.scaled, temperature=cfg.temperature)
    return SinksView(
        tuple(run.tokens),
        w.astype(np.float32),
        sink_w.astype(np.float32),
        w.sum(-1),
        float(np.abs(w - ref).max()),
        float(np.abs(w_none - plain).max()),
    )


@dataclass(frozen=True)
class StreamingView:
    """StreamingLLM's mask for T tokens and what the last query keeps."""

    mask: np.ndarray  # (T, T) bool, True = may attend
    kept_last: tuple[int, ...]  # key positions (0-based) the last query keeps
    allowed_share: float  # allowed pairs / T^2
    causal_share: float  # pairs a full causal mask allows / T^2


@cached(max_mb=4)
def streaming_view(T: int, n_sink: int, window: int) -> StreamingView:
    m = streaming_mask(T, n_sink, window)
    return StreamingView(m, tuple(int(j) for j in np.nonzero(m[-1])[0]), float(m.mean()), (T + 1) / (2 * T))


@dataclass(frozen=True)
class LinearView:
    """Linear attention on one head of the what-if's input, beside softmax attention."""

    softmax_weights: np.ndarray  # (T, T) float32 softmax attention of the head (the sidebar's mask)
    linear_weights: np.ndarray  # (T, T) float32 normalised phi(q) phi(k)^T (causal when the mask is)
    causal: bool  # the sidebar's mask is causal
    diff_recurrent: float  # max |causal parallel form - recurrent form|
    diff_factorised: float  # max |non-causal parallel form - phi(q) (phi(k)^T v) form|
    state_numbers: int  # d_k * d_v + d_k: the recurrent state S and normaliser z
    d_k: int  # query/key width of the head
    d_v: int  # value width of the head


@cached(max_mb=16)
def linear_view(cfg: WhatIf, head: int) -> LinearView:
    run = cached_run(cfg.replace(positional=False))
    q, k, v = (a[head].astype(np.float64) for a in (run.q, run.k, run.v))  # (T, d_k) each
    causal = "causal" in cfg.mask
    par_c, w_c = linear_attention(q, k, v, causal=True)
    rec, _, _ = linear_attention_recurrent(q, k, v)
    par_n, w_n = linear_attention(q, k, v)
    fac, _, _ = linear_attention_factorised(q, k, v)
    d_k, d_v = q.shape[1], v.shape[1]
    return LinearView(
        run.weights[head].astype(np.float32),
        (w_c if causal else w_n).astype(np.float32),
        causal,
        float(np.abs(par_c - rec).max()),
        float(np.abs(par_n - fac).max()),
        d_k * d_v + d_k,
        d_k,
        d_v,
    )


def memory_chart(T: int, state_numbers: int, d_k: int) -> tuple[dict, dict]:
    """(spec, data): numbers kept per head against T, softmax attention's T x T weights vs linear attention's
    fixed state, log-log, with the current T marked."""
    ts = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, T})
    rows = [{"T": t, "numbers": t * t, "kind": "softmax: T × T weights"} for t in ts]
    rows += [{"T": t, "numbers": state_numbers, "kind": f"linear: state d_k × d_v + d_k (d_k = {d_k})"} for t in ts]
    colors = ["#4c78a8", "#e45756"]  # linear, softmax (the legend sorts the names)
    data = {key: [r[key] for r in rows] for key in ("T", "numbers", "kind")}
    x = {"field": "T", "type": "quantitative", "scale": {"type": "log", "base": 2}, "title": "sequence length T"}
    y = {
        "field": "numbers",
        "type": "quantitative",
        "scale": {"type": "log"},
        "title": "numbers kept per head",
        "axis": {"tickCount": 6},
    }
    return {
        "title": "Memory per head: weights matrix vs recurrent state",
        "height": 260,
        "width": "container",
        "layer": [
            {
                "mark": {"type": "line", "point": True},
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": {
                        "field": "kind",
                        "type": "nominal",
                        "scale": {"range": colors},
                        "legend": {"orient": "right", "title": None, "labelLimit": 260},
                    },
                    "tooltip": [
                        {"field": "kind", "type": "nominal"},
                        {"field": "T", "type": "quantitative"},
                        {"field": "numbers", "type": "quantitative", "format": ","},
                    ],
                },
            },
            {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "#333"}, "encoding": {"x": {"datum": T}}},
        ],
    }, data


def per_head_bars(values, title: str, y_title: str, domain=None, text_format: str = ".3f") -> tuple[dict, dict]:
    """(spec, data): one bar per head with the value written above it (``text_format``, a d3 format)."""
    data = {"head": [f"head {h + 1}" for h in range(len(values))], "v": [float(v) for v in values]}
    x = {"field": "head", "type": "nominal", "sort": None, "title": None, "axis": {"labelAngle": -45}}
    y = {
        "field": "v",
        "type": "quantitative",
        "title": y_title,
        **({"scale": {"domain": list(domain)}} if domain else {}),
    }
    return {
        "title": title,
        "height": 220,
        "width": "container",
        "layer": [
            {
                "mark": {"type": "bar", "color": "#4c78a8"},
                "encoding": {
                    "x": x,
                    "y": y,
                    "tooltip": [
                        {"field": "head", "type": "nominal"},
                        {"field": "v", "type": "quantitative", "format": ".4g"},
                    ],
                },
            },
            {
                "mark": {"type": "text", "dy": -7, "color": "#333", "fontSize": 10},
                "encoding": {"x": x, "y": y, "text": {"field": "v", "type": "quantitative", "format": text_format}},
            },
        ],
    }, data


def vega(spec_and_data: tuple[dict, dict], container=None) -> None:
    """Draw a (spec, columns) pair as plain Vega-Lite (Altair validates every chart it builds: tens of ms a chart).

    The rows travel as a *named* dataset in the spec: with a DataFrame or inline values Streamlit 1.67 first
    draws the chart empty and Vega warns "Infinite extent" for every field."""
    spec, columns = spec_and_data
    names = list(columns)
    rows = [dict(zip(names, values)) for values in zip(*columns.values())]
    (container or st).vega_lite_chart(
        spec={**spec, "datasets": {"rows": rows}, "data": {"name": "rows"}}, width="stretch"
    )
