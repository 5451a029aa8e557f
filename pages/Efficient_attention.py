"""Efficient attention: the KV cache, KV memory of real models (MHA vs GQA vs MQA), sliding windows, FlashAttention."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.flash import _walk_tiles, flash_attention_steps
from attention_core.gqa import DTYPE_BYTES, MODELS, MODELS_BY_NAME, allowed_kv_heads, grouped_query_attention
from attention_core.kv_cache import decode_with_cache
from attention_core.windows import influence_by_layer, sliding_window_mask
from ui.compute import cached_decode_view, cached_flash_view, cached_run, cached_window_view
from ui.draw import vega
from ui.draw.charts import Axes, dim_labels, own_domain, show_heatmap, show_mask
from ui.draw.tables import show_table
from ui.lessons.efficient_attention import charts as eff
from ui.lessons.efficient_attention.text import (
    DTYPE_HELP,
    FLASH_COLUMN_HELP,
    cache_sentence,
    check_questions,
    flash_sentence,
    kv_heads_help,
    memory_sentence,
    window_sentence,
)
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam
from ui.skeleton.widgets import head_picker
from ui.text import head_name

MAX_LAYERS = 32
MAX_CTX, MAX_BATCH = 1_048_576, 1024


def page_params(T: int, H: int) -> dict[str, PageParam]:
    """The page's own controls by URL name, with the limits of the current setting (T tokens, H query heads)."""
    kv = tuple(allowed_kv_heads(H))
    middle = kv[len(kv) // 2]  # the default, the middle choice: grouped-query attention when H allows it
    kv_why = f"for {H} query heads (KV heads must divide them)"
    upto_T = {"lo": 1, "hi": T, "integer": True, "why": f"for seq_len {T}"}  # a token count or position, 1..T
    params = [
        PageParam(
            "eff_kv", "kv", middle, choices=kv, integer=True, why=kv_why, label="KV heads (G)", help=kv_heads_help(H)
        ),
        PageParam(
            "eff_step", "step", T // 2 + 1, **upto_T, label="decoding step t", help="Which token is being generated."
        ),
        PageParam("eff_window", "window", 3, **upto_T, label="window w (keys per query)"),
        PageParam("eff_layers", "layers", 3, lo=1, hi=MAX_LAYERS, integer=True, label="layers L"),
        PageParam("eff_tile", "tile", 2, **upto_T, label="tile size B (keys per tile)"),
        PageParam("eff_fq", "fq", T, **upto_T, label="query row to follow"),
        PageParam("eff_model", "llm", "Llama-2-70B", choices=tuple(MODELS_BY_NAME), label="model", widget="selectbox"),
        PageParam(
            "eff_ctx", "ctx", 4096, lo=1, hi=MAX_CTX, integer=True, label="context (tokens)", widget="number", step=1024
        ),
        PageParam(
            "eff_batch", "batch", 1, lo=1, hi=MAX_BATCH, integer=True, label="batch (sequences)", widget="number"
        ),
        PageParam("eff_dtype", "dtype", "float16", choices=tuple(DTYPE_BYTES), widget="selectbox", help=DTYPE_HELP),
    ]
    return {p.url: p for p in params}


page = Page(
    __file__,
    "How models like Llama and Mistral make attention affordable without changing its answer: a cache of "
    "keys and values for decoding (writing one token at a time), fewer K/V heads (GQA, grouped-query attention: "
    "each group of query heads shares one key/value head; MQA, multi-query attention: all share one), windows of "
    "recent tokens, and FlashAttention, which computes the softmax one tile of keys at a time. Each section checks "
    "the shortcut against plain attention and shows the difference as a number.",
)


def kv_cache_section(cfg, tokens: list[str], P: dict[str, PageParam]) -> tuple[int, int, int]:
    """1. Decoding one token at a time with a cache of keys and values. Returns (query head, step, rows reused)."""
    T, H, d_k = len(tokens), cfg.n_heads, cfg.d_k
    st.subheader("1. The KV cache: decoding one token at a time")
    st.markdown(
        "A decoder writes token t after tokens 1..t−1. Under the causal mask the keys and values of earlier "
        "tokens never change, so they are kept in a cache: each step computes only the new token's q, k and v, "
        "appends k and v, and lets q attend over the cache."
    )
    st.latex(
        r"z_t = \mathrm{softmax}\!\Big(\frac{q_t\,[K_{<t};\,k_t]^\top}{\sqrt{d_k}\,\tau}\Big)\,[V_{<t};\,v_t],"
        r"\qquad \text{cache} = (K_{<t}, V_{<t})"
    )
    c1, c2, c3 = st.columns(3)
    G = page.control(P["kv"], c1)
    step = min(page.control(P["step"], c2), T)
    head = head_picker("query head", H, key="eff_head", container=c3)

    view = cached_decode_view(cfg.replace(mask="none", pad_count=0), G)  # the decode is causal: no mask in the key
    kv_head = head // (H // G)
    now = view.run.steps[step - 1]
    cache_now = 2 * G * step * d_k * view.run.k.itemsize
    (m1, m2), (m3, m4) = st.columns(2), st.columns(2)  # two a row: "1,048,576 bytes" is cut at four a row
    m1.metric("computed: new q, k, v", "1 row each", help=f"q for {H} heads, k and v for {G} KV heads")
    m2.metric("reused: cached K, V rows", f"{now.reused} each")
    m3.metric("cache after this step", f"{cache_now:,} bytes")
    m4.metric("max |cached − one causal pass|", f"{view.max_diff:.1e}")

    c1, c2 = st.columns([3, 2])
    rows = np.arange(T)[:, None]
    blank = (rows < np.arange(T)[None, :]) | (rows >= step)  # the future, and the rows not decoded yet
    title = f"{head_name(head)}: rows 1..{step} decoded"
    show_heatmap(
        view.full_weights[head], tokens, tokens, title=title, domain=(0, 1), blank=blank, container=c1, size=300
    )
    vectors = np.stack([now.q[head], now.k[kv_head], now.v[kv_head]])  # (3, d_k)
    show_heatmap(
        vectors,
        ["q (new)", "k (new)", "v (new)"],
        dim_labels(d_k),
        container=c2,
        title=f"new at step {step} ({head_name(head)})",
        axes=Axes("row", "dim", "value"),
        scheme="diverging",
        domain=own_domain(vectors, diverging=True),
        size=260,
        legend=False,
    )
    row_df = pd.DataFrame({"i": np.arange(step), "token": list(tokens[:step]), "weight": now.weights[head].round(4)})
    spec = eff.weights_bar_spec(tokens[:step], f"the new query's weights over {step} keys")
    vega.draw(c2, spec, row_df, width="stretch")
    st.markdown(cache_sentence(view, now, tokens[step - 1], step, head, (T, H, G, d_k)))
    return head, step, now.reused


def memory_section(P: dict[str, PageParam]) -> tuple:
    """2. A real model's KV cache in GB at its own shape, as MHA and as MQA. Returns (model, context, GB and KV
    heads by attention kind)."""
    st.subheader("2. KV-cache memory of real models: MHA vs GQA vs MQA")
    c1, c2, c3, c4 = st.columns(4)
    model = MODELS_BY_NAME[page.control(P["llm"], c1)]
    context = page.control(P["ctx"], c2)
    batch = page.control(P["batch"], c3)
    dtype = page.control(P["dtype"], c4)
    cached_ctx = min(context, model.sliding_window) if model.sliding_window else context
    st.latex(
        rf"\text{{bytes}} = 2 \times {model.layers}\,\text{{layers}} \times G \times {model.head_dim}\,(d_k) \times "
        rf"{cached_ctx:,}\,\text{{tokens}} \times {batch}\,\text{{batch}} \times {DTYPE_BYTES[dtype]}\,\text{{bytes}}"
    )
    variants = model.variants()
    gb = {name: model.cache_bytes(context, batch, dtype, kv_heads=g) / 1e9 for name, g in variants.items()}
    own = [name for name, g in variants.items() if g == model.kv_heads][0]
    df = eff.memory_frame(gb, variants, own, model.name)
    vega.draw(None, eff.memory_bar_spec(f"{model.name}'s own shape"), df, width="stretch")
    st.markdown(memory_sentence(model, gb, own, context, batch, dtype))
    with st.expander("The model shapes and where they come from"):
        show_table(st, eff.models_table(MODELS), hide_index=True)
        show_table(st, eff.sources_table(MODELS), hide_index=True)
    return model, context, gb, variants


def window_section(tokens: list[str], P: dict[str, PageParam]) -> int:
    """3. A sliding-window mask and how far information travels through L layers of it. Returns the window."""
    T = len(tokens)
    st.subheader("3. Sliding windows and the receptive field")
    st.markdown(
        "A sliding-window mask lets each token see only its last w tokens (itself included). Information still "
        "travels further: every layer passes it one window on, so stacked layers see far back. The tokens that can "
        "reach a token through L layers are its **receptive field**."
    )
    st.latex(
        r"\text{mask}_{ij} = [\,0 \le i - j < w\,],\qquad \text{receptive field after } L \text{ layers} = L(w-1)+1"
    )
    c1, c2 = st.columns(2)
    window = min(page.control(P["window"], c1), T)
    layers = page.control(P["layers"], c2)
    wv = cached_window_view(T, window, layers)
    c1, c2, c3 = st.columns(3)
    show_mask(wv.mask, tokens, title=f"window mask, w = {window}", container=c1, size=240)
    show_mask(  # a 0/1 map too: True where a token's information reaches the last token
        wv.influence,
        [f"after {layer}" for layer in range(layers + 1)],
        tokens,
        title=f"what reaches {tokens[-1]}",
        axes=Axes("layers", "token", "reaches"),
        container=c2,
        size=200,  # its row labels ("after 3") are wider than t8: at 240 its last column label was cut at 1280 px
    )
    spec = eff.lines_spec(
        "receptive field of the last token", "layers", "tokens", "how", "layers L", "tokens", dashed=True
    )
    vega.draw(c3, spec, eff.receptive_field_frame(wv, layers), width="stretch")
    st.markdown(window_sentence(wv, tokens[-1], T, window, layers))
    return window


def flash_section(cfg, tokens: list[str], head: int, P: dict[str, PageParam]) -> None:
    """4. FlashAttention's running max and sum, tile by tile, for one query row of ``head``."""
    T = len(tokens)
    st.subheader("4. FlashAttention: the softmax one tile at a time")
    st.markdown(
        "FlashAttention never builds the T × T score matrix. It walks the keys in tiles, keeping for every query "
        "a running max m, a running sum l and an unnormalised output o; when a tile raises the max, what came "
        "before is rescaled by e^(m_old − m_new). The result is exact."
    )
    st.latex(
        r"m' = \max(m, \max_j s_j),\quad l' = e^{m - m'}\, l + \sum_j e^{s_j - m'},\quad "
        r"o' = e^{m - m'}\, o + \sum_j e^{s_j - m'} v_j,\qquad z = o / l"
    )
    c1, c2 = st.columns(2)
    tile = min(page.control(P["tile"], c1), T)
    fq = min(page.control(P["fq"], c2), T) - 1
    fv = cached_flash_view(cfg, head, tile)
    steps = fv.run.steps
    table = eff.flash_table(steps, fq)
    (m1, m2), (m3, m4) = st.columns(2), st.columns(2)  # two a row: "1,048,576 bytes" is cut at four a row
    m1.metric("tiles", f"{len(steps)} of ≤ {tile} keys")
    m2.metric("max |tiled − full softmax|", f"{fv.max_diff:.1e}")
    m3.metric("full T × T scores", f"{fv.run.full_bytes:,} bytes")
    m4.metric("largest tile", f"{fv.run.tile_bytes:,} bytes")
    c1, c2 = st.columns([3, 2])
    helps = {column: st.column_config.TextColumn(help=text) for column, text in FLASH_COLUMN_HELP.items()}
    show_table(c1, table, hide_index=True, height=min(300, 35 * len(table) + 38), column_config=helps)
    spec = eff.lines_spec(f"query {tokens[fq]}: running max m and sum l", "tile", "value", "statistic", "tile", None)
    vega.draw(c2, spec, eff.running_stats_frame(steps, fq), width="stretch")
    st.markdown(flash_sentence(fv, tokens, fq, head, tile))


def _draw() -> list[Question]:
    """The page's four sections in reading order, for the what-if setting; returns its check questions."""
    cfg = page.whatif(
        show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed", "positional")
    )
    base = cached_run(cfg.replace(mask="none"))
    # the page's own settings: seeded from the URL once, fitted to what the current setting allows
    P = page_params(base.T, cfg.n_heads)
    head, step, reused = kv_cache_section(cfg, base.tokens, P)
    model, context, gb, variants = memory_section(P)
    window = window_section(base.tokens, P)
    flash_section(cfg, base.tokens, head, P)
    return check_questions(reused, step, model, context, gb, variants, window, base.T)


page.run(
    _draw,
    code=(
        decode_with_cache,
        grouped_query_attention,
        sliding_window_mask,
        influence_by_layer,
        _walk_tiles,
        flash_attention_steps,
    ),
)
