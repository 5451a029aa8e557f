"""The sentences of the Efficient attention page, computed from its views (attention_core/efficient_views.py) for
the setting on screen: each function is named for what it says, so the page reads as its four sections. The long
help texts of its controls and of its FlashAttention table are here too.
"""

from __future__ import annotations

import numpy as np

from attention_core.gqa import DTYPE_BYTES
from ui.text import fmt, head_name, md_escape

# ---- help texts of the page's controls and of the FlashAttention table's columns

DTYPE_HELP = (
    f"The number type: how many bytes one number takes ({', '.join(f'{n}: {b}' for n, b in DTYPE_BYTES.items())})."
)
FLASH_COLUMN_HELP = {  # column of eff.flash_table -> its tooltip
    "rescale": "When the tile raised the running max from m to m′: the factor e^(m − m′) the old sum and output were "
    "multiplied by. — when nothing was rescaled (the max did not change, or no key came before).",
    "tile max": "the largest allowed score of this tile (−∞: all masked)",
}


def kv_heads_help(H: int) -> str:
    """The KV-heads control's tooltip for ``H`` query heads."""
    return (
        f"Key/value heads shared by the {H} query heads; they must divide {H}. G = {H} is multi-head attention, "
        "G = 1 is multi-query attention."
    )


# ---- the sentences of the four sections


def cache_sentence(view, now, token: str, step: int, head: int, shape: tuple[int, int, int, int]) -> str:
    """The KV cache at ``step``: what was computed and read, the check against one causal pass, and the cache's
    size (beside one KV head per query head when G < H). ``shape`` is (T, H, G, d_k)."""
    T, H, G, d_k = shape
    rep, kv_head = H // G, head // (H // G)
    saved = T * (T + 1) // 2 - T
    return (
        f"At step **{step}** the page computed one new q row per query head ({H}) and one k and one v row per KV "
        f"head ({G}) for **{md_escape(token)}**, and read the **{now.reused}** cached K and V rows of the "
        f"tokens before it. Query {head_name(head)} reads KV {head_name(kv_head)} "
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


def memory_sentence(model, gb: dict[str, float], own: str, context: int, batch: int, dtype: str) -> str:
    """A real model's KV cache in GB at its own shape, against MHA and MQA; its rolling window and trained length."""
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
    return sentence


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


def layers_needed(T: int, window: int) -> str:
    """The answer to "how many layers of window w until the last token sees all T tokens?"."""
    if T == 1:
        return "There is one token: the last token is the only one, and one layer lets it see itself."
    if window == 1:
        return "With w = 1 a token sees only itself, in every layer: never."
    n = -(-(T - 1) // (window - 1))
    return f"L(w−1)+1 ≥ T gives L ≥ (T−1)/(w−1) = {(T - 1) / (window - 1):.3g}, so {n} layer{'s' if n > 1 else ''}."


def window_sentence(wv, last: str, T: int, window: int, layers: int) -> str:
    """The last token's receptive field after ``layers`` window layers, measured and by the formula, and what a
    layer costs (:func:`window_cost`)."""
    raw = layers * (window - 1) + 1
    agree = int(wv.measured[-1]) == wv.formula[-1]
    return (
        f"One layer lets **{md_escape(last)}** see {min(window, T)} token{'s' if min(window, T) > 1 else ''}. "
        f"After **{layers}** "
        f"layer{'s' if layers > 1 else ''} the measured receptive field (one-hot influence pushed through the mask "
        f"{layers} time{'s' if layers > 1 else ''}) is **{int(wv.measured[-1])}** tokens; the formula gives L(w−1)+1 = "
        f"{layers}({window}−1)+1 = {raw}"
        + (f", capped at the {T} tokens there are: {wv.formula[-1]}" if raw > T else "")
        + (". They agree." if agree else ". They disagree: this would be a bug.")
        + f" {window_cost(wv, T, window)} "
        f"Mistral 7B uses w = 4096 over 32 layers: 32 × 4095 + 1 = {32 * 4095 + 1:,} tokens can reach the last one."
    )


def flash_sentence(fv, tokens: list[str], fq: int, head: int, tile: int) -> str:
    """Query ``fq``'s walk through the tiles (where its running max rose, or that its row is all masked), how
    many rows were rescaled, the check against the full softmax and the memory the tiles save."""
    steps, T = fv.run.steps, len(tokens)
    rises = [s.index + 1 for s in steps if s.rescaled[fq]]
    last = steps[-1]
    text = (
        f"With B = {tile}, query **{md_escape(tokens[fq])}** ({head_name(head)}, mask: {fv.mask_note}) met "
        f"the keys in {len(steps)} tile{'s' if len(steps) > 1 else ''}. "
    )
    if not np.isfinite(last.m[fq]):
        text += "Every key of this row is masked: m stays −∞, l stays 0, and the output is 0 (not NaN). "
    elif rises:
        text += (
            f"Its running max rose at tile{'s' if len(rises) > 1 else ''} {', '.join(map(str, rises[:8]))}"
            f"{' …' if len(rises) > 8 else ''}; the smallest rescale factor was "
            f"{fmt(min(float(s.rescale[fq]) for s in steps if s.rescaled[fq]))}. "
        )
    else:
        text += "Its running max was set by the first tile with an allowed key and never rose again: no rescaling was needed. "
    if np.isfinite(last.m[fq]):
        text += f"It ends at m = {fmt(float(last.m[fq]))} and l = {fmt(float(last.l[fq]))}; z = o / l. "
    rescaled_rows = fv.rescaled_rows  # (T,) a later tile raised these rows' max
    text += f"{int(rescaled_rows.sum())} of the {T} query rows had their sum and output rescaled at least once" + (
        f" (for one, follow query row {int(np.argmax(rescaled_rows)) + 1}, "
        f"**{md_escape(tokens[int(np.argmax(rescaled_rows))])}**). "
        if rescaled_rows.any()
        else ". "
    )
    return text + (
        f"Over all {T} queries the tiled output differs from the full softmax by at most **{fv.max_diff:.1e}**. "
        f"The full score matrix would take {fv.run.full_bytes:,} bytes; the largest tile that existed took "
        f"{fv.run.tile_bytes:,} bytes ({fmt(100 * fv.run.tile_bytes / fv.run.full_bytes)}%). At T = 16,384 the "
        f"full float32 matrix is {16384 * 16384 * 4 / 2**30:g} GiB per head; tiles of 64 keys need "
        f"{16384 * 64 * 4 / 2**20:g} MiB."
    )


def check_questions(reused: int, step: int, model, context: int, gb: dict, variants: dict, window: int, T: int):
    """The page's check questions: the cache at ``step``, the memory GQA saves, the layers a window needs."""
    gqa = list(variants)[1]
    return [
        (
            f"At step {step}, how many key rows does the cache supply and how many are computed?",
            f"{reused} come from the cache and 1 is computed (per KV head): the keys of earlier tokens never change.",
        ),
        (
            f"{model.name} with {context:,} tokens: how much memory does GQA save over MHA?",
            f"{fmt(gb['MHA'])} GB vs {fmt(gb[gqa])} GB: the cache shrinks by H / G = {model.heads} / {variants[gqa]}.",
        ),
        (
            f"How many layers of window {window} does the last token need to see all {T} tokens?",
            layers_needed(T, window),
        ),
    ]
