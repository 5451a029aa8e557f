"""Efficient attention: the KV cache, KV memory of real models (MHA vs GQA vs MQA), sliding windows, FlashAttention."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.flash import _walk_tiles, flash_attention_steps
from attention_core.gqa import DTYPE_BYTES, MODELS, MODELS_BY_NAME, allowed_kv_heads, grouped_query_attention
from attention_core.kv_cache import decode_with_cache
from attention_core.windows import influence_by_layer, sliding_window_mask
from ui import efficient as eff
from ui.charts import Axes, dim_labels, show_heatmap, show_mask, with_data
from ui.compute import cached_decode_view, cached_flash_view, cached_run, cached_window_view
from ui.lesson import Question
from ui.page import Page
from ui.page_params import PageParam
from ui.tables import show_table
from ui.text import fmt, md_escape
from ui.widgets import index_picker

MAX_LAYERS = 32
MAX_CONTEXT, MAX_BATCH = 1_048_576, 1024


def page_params(T: int, H: int, kv_options: list[int]) -> dict[str, PageParam]:
    """The page's own controls by URL name, with the limits of the current setting (T tokens, H query heads)."""
    per_T = f"for seq_len {T}"
    params = [
        PageParam(
            "eff_kv",
            "kv",
            kv_options[len(kv_options) // 2],
            choices=tuple(kv_options),
            integer=True,
            why=f"for {H} query heads (KV heads must divide them)",
            label="KV heads (G)",
            help=f"Key/value heads shared by the {H} query heads; they must divide {H}. G = {H} is multi-head "
            "attention, G = 1 is multi-query attention.",
        ),
        PageParam(
            "eff_step",
            "step",
            T // 2 + 1,
            lo=1,
            hi=T,
            integer=True,
            why=per_T,
            label="decoding step t",
            help="Which token is being generated.",
        ),
        PageParam("eff_window", "window", 3, lo=1, hi=T, integer=True, why=per_T, label="window w (keys per query)"),
        PageParam("eff_layers", "layers", 3, lo=1, hi=MAX_LAYERS, integer=True, label="layers L"),
        PageParam("eff_tile", "tile", 2, lo=1, hi=T, integer=True, why=per_T, label="tile size B (keys per tile)"),
        PageParam("eff_fq", "fq", T, lo=1, hi=T, integer=True, why=per_T, label="query row to follow"),
        PageParam("eff_model", "llm", "Llama-2-70B", choices=tuple(MODELS_BY_NAME), label="model", widget="selectbox"),
        PageParam(
            "eff_ctx",
            "ctx",
            4096,
            lo=1,
            hi=MAX_CONTEXT,
            integer=True,
            label="context (tokens)",
            widget="number",
            step=1024,
        ),
        PageParam(
            "eff_batch", "batch", 1, lo=1, hi=MAX_BATCH, integer=True, label="batch (sequences)", widget="number"
        ),
        PageParam(
            "eff_dtype",
            "dtype",
            "float16",
            choices=tuple(DTYPE_BYTES),
            label="dtype",
            widget="selectbox",
            help="The number type: how many bytes one number takes ("
            + ", ".join(f"{name}: {size}" for name, size in DTYPE_BYTES.items())
            + ").",
        ),
    ]
    return {p.url: p for p in params}


def window_cost(wv, T: int, window: int) -> str:
    """The scores one window layer computes, counted from its mask (``wv.scores``), beside the causal mask's."""
    if window >= T:
        return (
            f"With w ≥ T = {T} the window is the whole causal mask: each layer computes all T(T+1)/2 = "
            f"{wv.causal_scores} scores."
        )
    if window == 1:
        return f"Each layer computes {wv.scores} scores (one a query, itself) instead of T(T+1)/2 = {wv.causal_scores}."
    first = "the first query sees 1 key" if window == 2 else f"the first {window - 1} see 1 to {window - 1} keys"
    return (
        f"Each layer computes {wv.scores} scores, the mask's allowed cells: the last {T - window + 1} queries see "
        f"w = {window} keys each and {first} (T·w − w(w−1)/2 = {T} × {window} − {window * (window - 1) // 2}), "
        f"instead of T(T+1)/2 = {wv.causal_scores} for the causal mask."
    )


def _layers_needed(T: int, window: int) -> str:
    """The answer to "how many layers of window w until the last token sees all T tokens?"."""
    if T == 1:
        return "There is one token: the last token is the only one, and one layer lets it see itself."
    if window == 1:
        return "With w = 1 a token sees only itself, in every layer: never."
    n = -(-(T - 1) // (window - 1))
    return f"L(w−1)+1 ≥ T gives L ≥ (T−1)/(w−1) = {(T - 1) / (window - 1):.3g}, so {n} layer{'s' if n > 1 else ''}."


page = Page(
    __file__,
    "How models like Llama and Mistral make attention affordable without changing its answer: a cache of "
    "keys and values for decoding (writing one token at a time), fewer K/V heads (GQA, grouped-query attention: "
    "each group of query heads shares one key/value head; MQA, multi-query attention: all share one), windows of "
    "recent tokens, and FlashAttention, which computes the softmax one tile of keys at a time. Each section checks "
    "the shortcut against plain attention and shows the difference as a number.",
)


def _draw() -> list[Question]:
    """KV cache, KV memory of real models, sliding windows and FlashAttention's tiles for the setting."""
    cfg = page.whatif(
        show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "mask", "seed", "positional")
    )
    base = cached_run(cfg.replace(mask="none"))
    T, H, d_k, tokens = base.T, cfg.n_heads, cfg.d_k, base.tokens
    kv_options = allowed_kv_heads(H)

    # the page's own settings: seeded from the URL once, fitted to what the current setting allows
    P = page_params(T, H, kv_options)

    # ---- 1. the KV cache
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
    head = index_picker("query head", [f"head {h + 1}" for h in range(H)], key="eff_head", container=c3)

    view = cached_decode_view(cfg.replace(mask="none", pad_count=0), G)  # the decode is causal: no mask in the key
    rep = H // G
    kv_head = head // rep
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
    show_heatmap(
        view.full_weights[head],
        tokens,
        tokens,
        title=f"head {head + 1}: rows 1..{step} decoded",
        domain=(0, 1),
        blank=blank,
        container=c1,
        size=300,
    )
    vectors = np.stack([now.q[head], now.k[kv_head], now.v[kv_head]])  # (3, d_k)
    show_heatmap(
        vectors,
        ["q (new)", "k (new)", "v (new)"],
        dim_labels(d_k),
        container=c2,
        title=f"new at step {step} (head {head + 1})",
        axes=Axes("row", "dim", "value"),
        scheme="diverging",
        size=260,
        legend=False,
    )
    row_df = pd.DataFrame({"i": np.arange(step), "token": list(tokens[:step]), "weight": now.weights[head].round(4)})
    c2.vega_lite_chart(
        with_data(eff.weights_bar_spec(tokens[:step], f"the new query's weights over {step} keys"), row_df),
        width="stretch",
    )
    saved = T * (T + 1) // 2 - T
    st.markdown(
        f"At step **{step}** the page computed one new q row per query head ({H}) and one k and one v row per KV "
        f"head ({G}) for **{md_escape(tokens[step - 1])}**, and read the **{now.reused}** cached K and V rows of the "
        f"tokens before it. Query head {head + 1} reads KV head {kv_head + 1} "
        + (f"({rep} query heads share it). " if rep > 1 else "(no other query head reads it). ")
        + f"Stacking the {T} decoded rows gives the one-pass causal output up to a largest difference of "
        f"**{view.max_diff:.1e}** (float rounding). Without the cache, decoding {T} tokens would recompute "
        f"{T * (T + 1) // 2} K/V rows instead of {T} ({saved} wasted). The cache holds 2 × G × T × d_k = 2 × {G} × {T} × "
        f"{d_k} numbers at the end ({view.run.cache_bytes:,} bytes)"
        + (
            f"; with a KV head for each of the {H} query heads it would be {view.run.cache_bytes * H // G:,} bytes."
            if G < H
            else "; every query head has a KV head of its own here (plain multi-head attention)."
        )
    )

    # ---- 2. memory of real models
    st.subheader("2. KV-cache memory of real models: MHA vs GQA vs MQA")
    c1, c2, c3, c4 = st.columns(4)
    model = MODELS_BY_NAME[page.control(P["llm"], c1)]
    context = page.control(P["ctx"], c2)
    batch = page.control(P["batch"], c3)
    dtype = page.control(P["dtype"], c4)
    n_bytes = DTYPE_BYTES[dtype]
    cached_ctx = min(context, model.sliding_window) if model.sliding_window else context
    st.latex(
        rf"\text{{bytes}} = 2 \times {model.layers}\,\text{{layers}} \times G \times {model.head_dim}\,(d_k) \times "
        rf"{cached_ctx:,}\,\text{{tokens}} \times {batch}\,\text{{batch}} \times {n_bytes}\,\text{{bytes}}"
    )
    variants = model.variants()
    gb = {name: model.cache_bytes(context, batch, dtype, kv_heads=g) / 1e9 for name, g in variants.items()}
    own = [name for name, g in variants.items() if g == model.kv_heads][0]
    df = pd.DataFrame(
        {
            "attention": list(gb),
            "GB": list(gb.values()),
            "KV heads": list(variants.values()),
            "own": [f"{model.name}'s own shape" if n == own else "what-if" for n in gb],
        }
    )
    st.vega_lite_chart(with_data(eff.memory_bar_spec(f"{model.name}'s own shape"), df), width="stretch")
    mha, mqa = gb["MHA"], gb["MQA"]
    sentence = (
        f"{model.name} ({model.layers} layers, {model.heads} query heads, {model.kv_heads} KV heads of "
        f"{model.head_dim}) keeps **{fmt(gb[own])} GB** of keys and values for {batch} sequence"
        f"{'s' if batch > 1 else ''} of {context:,} tokens in {dtype}. Multi-head attention would need "
        f"**{fmt(mha)} GB** ({fmt(mha / gb[own])}× its own), multi-query attention **{fmt(mqa)} GB**."
    )
    if model.sliding_window and context > model.sliding_window:
        full = model.cache_bytes(context, batch, dtype, rolling=False) / 1e9
        sentence += (
            f" Its sliding window of {model.sliding_window:,} tokens lets it keep a rolling cache of the last "
            f"{model.sliding_window:,} tokens only; caching all {context:,} would take {fmt(full)} GB."
        )
    if context > model.max_context:
        sentence += f" (It was trained on {model.max_context:,} tokens; {context:,} is beyond that.)"
    st.markdown(sentence)
    with st.expander("The model shapes and where they come from"):
        show_table(
            st,
            pd.DataFrame(
                [
                    {
                        "model": m.name,
                        "layers": m.layers,
                        "heads": m.heads,
                        "KV heads": m.kv_heads,
                        "head dim": m.head_dim,
                        "context": m.max_context,
                        "window": f"{m.sliding_window:,}" if m.sliding_window else "none",
                        "source (config.json)": m.source,
                    }
                    for m in MODELS
                ]
            ),
            hide_index=True,
        )

    # ---- 3. sliding windows
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
    influence = wv.influence
    c1, c2, c3 = st.columns(3)
    show_mask(wv.mask, tokens, title=f"window mask, w = {window}", container=c1, size=240)
    show_mask(  # a 0/1 map too: True where a token's information reaches the last token
        influence,
        [f"after {layer}" for layer in range(layers + 1)],
        tokens,
        title=f"what reaches {tokens[-1]}",
        axes=Axes("layers", "token", "reaches"),
        container=c2,
        size=200,  # its row labels ("after 3") are wider than t8: at 240 its last column label was cut at 1280 px
    )
    rf = pd.DataFrame(
        {
            "layers": np.tile(np.arange(layers + 1), 2),
            "tokens": np.concatenate([wv.measured, wv.formula]).astype(int),
            "how": ["measured (mask products)"] * (layers + 1) + ["min(T, L(w−1)+1)"] * (layers + 1),
        }
    )
    c3.vega_lite_chart(
        with_data(
            eff.lines_spec(
                "receptive field of the last token", "layers", "tokens", "how", "layers L", "tokens", dashed=True
            ),
            rf,
        ),
        width="stretch",
    )
    raw = layers * (window - 1) + 1
    agree = int(wv.measured[-1]) == wv.formula[-1]
    st.markdown(
        f"One layer lets **{md_escape(tokens[-1])}** see {min(window, T)} token{'s' if min(window, T) > 1 else ''}. "
        f"After **{layers}** "
        f"layer{'s' if layers > 1 else ''} the measured receptive field (one-hot influence pushed through the mask "
        f"{layers} time{'s' if layers > 1 else ''}) is **{int(wv.measured[-1])}** tokens; the formula gives L(w−1)+1 = "
        f"{layers}({window}−1)+1 = {raw}"
        + (f", capped at the {T} tokens there are: {wv.formula[-1]}" if raw > T else "")
        + (". They agree." if agree else ". They disagree: this would be a bug.")
        + f" {window_cost(wv, T, window)} "
        f"Mistral 7B uses w = 4096 over 32 layers: 32 × 4095 + 1 = {32 * 4095 + 1:,} tokens can reach the last one."
    )

    # ---- 4. FlashAttention
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
    num = lambda x: "−∞" if x == -np.inf else fmt(float(x), 4)  # noqa: E731
    table = pd.DataFrame(
        {
            "tile": [s.index + 1 for s in steps],
            "keys": [f"{s.start + 1}–{s.stop}" if s.stop - s.start > 1 else f"{s.stop}" for s in steps],
            "tile max": [num(s.tile_max[fq]) for s in steps],
            "m before": [num(s.m_before[fq]) for s in steps],
            "m after": [num(s.m[fq]) for s in steps],
            "rescale": [s.rescale_note(fq) for s in steps],
            "l after": [num(s.l[fq]) for s in steps],
        }
    )
    (m1, m2), (m3, m4) = st.columns(2), st.columns(2)  # two a row: "1,048,576 bytes" is cut at four a row
    m1.metric("tiles", f"{len(steps)} of ≤ {tile} keys")
    m2.metric("max |tiled − full softmax|", f"{fv.max_diff:.1e}")
    m3.metric("full T × T scores", f"{fv.run.full_bytes:,} bytes")
    m4.metric("largest tile", f"{fv.run.tile_bytes:,} bytes")
    c1, c2 = st.columns([3, 2])
    show_table(
        c1,
        table,
        hide_index=True,
        height=min(300, 35 * len(table) + 38),
        column_config={
            "rescale": st.column_config.TextColumn(
                help="When the tile raised the running max from m to m′: the factor e^(m − m′) the old sum and "
                "output were multiplied by. — when nothing was rescaled (the max did not change, or no key came "
                "before)."
            ),
            "tile max": st.column_config.TextColumn(help="the largest allowed score of this tile (−∞: all masked)"),
        },
    )
    chart = pd.DataFrame(
        {
            "tile": np.tile([s.index + 1 for s in steps], 2),
            "value": np.concatenate([[s.m[fq] for s in steps], [s.l[fq] for s in steps]]),
            "statistic": ["running max m"] * len(steps) + ["running sum l"] * len(steps),
        }
    )
    long = chart[np.isfinite(chart["value"])]
    c2.vega_lite_chart(
        with_data(
            eff.lines_spec(f"query {tokens[fq]}: running max m and sum l", "tile", "value", "statistic", "tile", None),
            long,
        ),
        width="stretch",
    )
    rises = [s.index + 1 for s in steps if s.rescaled[fq]]
    last = steps[-1]
    flash_text = (
        f"With B = {tile}, query **{md_escape(tokens[fq])}** (head {head + 1}, mask: {fv.mask_note}) met "
        f"the keys in {len(steps)} tile{'s' if len(steps) > 1 else ''}. "
    )
    if not np.isfinite(last.m[fq]):
        flash_text += "Every key of this row is masked: m stays −∞, l stays 0, and the output is 0 (not NaN). "
    elif rises:
        flash_text += (
            f"Its running max rose at tile{'s' if len(rises) > 1 else ''} {', '.join(map(str, rises[:8]))}"
            f"{' …' if len(rises) > 8 else ''}; the smallest rescale factor was "
            f"{fmt(min(float(s.rescale[fq]) for s in steps if s.rescaled[fq]))}. "
        )
    else:
        flash_text += "Its running max was set by the first tile with an allowed key and never rose again: no rescaling was needed. "
    if np.isfinite(last.m[fq]):
        flash_text += f"It ends at m = {fmt(float(last.m[fq]))} and l = {fmt(float(last.l[fq]))}; z = o / l. "
    rescaled_rows = fv.rescaled_rows  # (T,) a later tile raised these rows' max
    flash_text += (
        f"{int(rescaled_rows.sum())} of the {T} query rows had their sum and output rescaled at least once"
        + (
            f" (for one, follow query row {int(np.argmax(rescaled_rows)) + 1}, "
            f"**{md_escape(tokens[int(np.argmax(rescaled_rows))])}**). "
            if rescaled_rows.any()
            else ". "
        )
    )
    flash_text += (
        f"Over all {T} queries the tiled output differs from the full softmax by at most **{fv.max_diff:.1e}**. "
        f"The full score matrix would take {fv.run.full_bytes:,} bytes; the largest tile that existed took "
        f"{fv.run.tile_bytes:,} bytes ({fmt(100 * fv.run.tile_bytes / fv.run.full_bytes)}%). At T = 16,384 the "
        f"full float32 matrix is {16384 * 16384 * 4 / 2**30:g} GiB per head; tiles of 64 keys need "
        f"{16384 * 64 * 4 / 2**20:g} MiB."
    )
    st.markdown(flash_text)

    return [
        (
            f"At step {step}, how many key rows does the cache supply and how many are computed?",
            f"{now.reused} come from the cache and 1 is computed (per KV head): the keys of earlier tokens never change.",
        ),
        (
            f"{model.name} with {context:,} tokens: how much memory does GQA save over MHA?",
            f"{fmt(mha)} GB vs {fmt(gb[list(variants)[1]])} GB: the cache shrinks by H / G = {model.heads} / "
            f"{variants[list(variants)[1]]}.",
        ),
        (
            f"How many layers of window {window} does the last token need to see all {T} tokens?",
            _layers_needed(T, window),
        ),
    ]


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
