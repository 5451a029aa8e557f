"""The transformer block around attention: encoder and decoder, add & norm, feed-forward."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.block_run import encoder_flow, encoder_graph_alt, find_token, layer_norm_stats, run_block
from attention_core.transformer import decoder_block, encoder_block
from ui.compute import cached_block
from ui.draw import vega
from ui.draw.charts import (
    Axes,
    bar_chart,
    dim_labels,
    is_vector,
    own_domain,
    projector_scale,
    shared_domain,
    show_heatmap,
    show_mask,
    show_token_dims,
    show_weights,
    weight_axis,
    weight_scale,
)
from ui.draw.diagrams import flow_column_svg
from ui.draw.tables import show_table
from ui.lessons.transformer_block.text import chain_caption, check_questions
from ui.session.partial import full_run, rerun_body
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker
from ui.text import fmt, head_name, md_escape

page = Page(
    __file__,
    "Attention is one sub-layer of a transformer block, and a transformer is a stack of such blocks, its "
    "**layers**. Around attention (MHA: multi-head attention): a residual connection (add the input back), "
    "LayerNorm (LN: re-centre and re-scale each token's vector), and a position-wise feed-forward network (FFN: "
    "ReLU(x W₁ + b₁) W₂ + b₂ on each token separately, where ReLU(x) = max(0, x) and b₁, b₂ are learned vectors "
    "added, the **biases**). An encoder block has one attention; a decoder block has a causal self-attention, then "
    "a cross-attention over the encoder's output.",
)
st.latex(  # two lines, each free to break after its comma on a narrow screen (no aligned block: it cannot break)
    r"\text{post-norm:}\quad h = \mathrm{LN}_1(x + \mathrm{MHA}(x)),\allowbreak\quad "
    r"out = \mathrm{LN}_2(h + \mathrm{FFN}(h)) \\ "
    r"\text{pre-norm:}\quad h = x + \mathrm{MHA}(\mathrm{LN}_1(x)),\allowbreak\quad "
    r"out = h + \mathrm{FFN}(\mathrm{LN}_2(h))"
)


def _block(cfg):
    """The block run for the page's controls (a cached core call)."""
    ss = st.session_state
    return cached_block(cfg, ss["tb_source"] == "the 'it' sentence", ss["tb_prenorm"], ss["tb_tdec"])


def _controls() -> tuple:
    """The full-run part: the sidebar, the block's own controls and the head pickers, between the body's places.
    The input reruns the page (the "it" picker appears with the sentence); pre-norm and the decoder length do not."""
    cfg = page.whatif(show=("d_model", "n_heads", "scaled", "temperature", "seed", "positional"))
    c1, c2, c3 = st.columns(3)
    c1.radio("Input", ["the 'it' sentence", "the shared what-if input"], key="tb_source", on_change=full_run)
    c2.toggle(
        "pre-norm",  # the whole "(LayerNorm before each sub-layer)" was cut off in a third of the page
        key="tb_prenorm",
        help="LayerNorm before each sub-layer (on: pre-norm, as in most modern models) or after it (off: post-norm, "
        "as in the original paper).",
        on_change=rerun_body,
    )
    c3.slider("decoder tokens", 1, 64, 5, key="tb_tdec", on_change=rerun_body)
    encoder = st.container()
    if find_token(_block(cfg).tokens, "it") is not None:
        head_picker("head", cfg.n_heads, key="tb_head", on_change=rerun_body)
    looks = st.container()
    st.subheader("Decoder block")
    head_picker("decoder head", cfg.n_heads, key="tb_dhead", on_change=rerun_body)
    return encoder, looks, st.container()


def _draw(encoder, looks, decoder) -> list[Question]:
    """The encoder and decoder diagrams, their maps and the residual figures, into the places."""
    cfg = page.setting()
    run = _block(cfg)
    norm_first, T_dec = st.session_state["tb_prenorm"], st.session_state["tb_tdec"]
    with encoder:
        _encoder_maps(run, cfg.d_model, norm_first)
        _encoder_summary(run.encoder, cfg.d_model, norm_first)
        st.subheader('Where does "it" look?')
    with looks:
        it, top_it = _where_it_looks(run)
    with decoder:
        _decoder_section(run, cfg.d_model, T_dec)
        head = st.session_state.get("tb_head")  # the encoder head "it" is shown for (picked when the input has "it")
        return check_questions(run, cfg.d_model, T_dec, it, top_it, head)


def _encoder_maps(run, D: int, norm_first: bool) -> None:
    """The encoder's diagram and its maps in the order the data meets them, the residual stream on one scale."""
    enc, tokens, T = run.encoder, run.tokens, run.T
    st.subheader("Encoder block")
    # the diagram runs top to bottom in a column, its caption beside it (under it on a phone)
    diagram, words = st.columns([2, 3])
    with diagram.container(key="block_diagram"):  # drawn at its own size (ui/skeleton/a11y.css)
        picture = flow_column_svg(*encoder_flow(norm_first), scale=projector_scale())  # larger on a projector
        st.image(picture.svg, width=picture.width, alt=encoder_graph_alt(norm_first))
    words.caption(
        f"Every weight in this block is seeded random, not trained: the maps show what random projections do. "
        f"Each map is tokens (rows) x dimensions (columns), "
        f"{T} x {D} except the feed-forward hidden layer ({T} x {4 * D})."
    )
    MAX_CELLS = 2048

    def in_order(norm, rest):
        """A sub-layer's maps as the data meets them: pre-norm normalises a copy first, post-norm the sum last."""
        return [norm, *rest] if norm_first else [*rest, norm]

    tensors = [("input x", enc.x)]
    tensors += in_order(
        ("LayerNorm₁", enc.attn.norm), [("attention output", enc.attn.sub), ("x + attention", enc.attn.add)]
    )
    tensors += in_order(
        ("LayerNorm₂", enc.ffn.norm),
        [
            ("feed-forward hidden ReLU(xW₁+b₁)", enc.ffn_hidden),
            ("feed-forward output", enc.ffn.sub),
            ("residual sum₂", enc.ffn.add),
        ],
    )
    tensors[-1] = (tensors[-1][0] + " = output", tensors[-1][1])  # the block's output: its last map
    # the chain is where a reader compares colours: one scale for every map of the residual stream; the ReLU
    # hidden layer (4·d_model wide, never negative) is another quantity, on its own sequential scale from 0
    chain = shared_domain(*(arr for _, arr in tensors if arr is not enc.ffn_hidden), symmetric=True)
    for i, (label, arr) in enumerate(tensors):
        if i % 2 == 0:
            cols = st.columns(2)  # two maps a row: 64 dimensions and the token labels fit a column at 1280 px
        shape = (
            f" ({arr.shape[0]} x {arr.shape[1]})" if is_vector(arr.shape, MAX_CELLS) else ""
        )  # images state their shape
        if arr is enc.ffn_hidden:
            show_heatmap(
                arr,
                tokens,
                dim_labels(arr.shape[1]),
                title=label + shape,
                axes=Axes("token", "dim", "hidden"),
                domain=own_domain(arr),
                container=cols[i % 2],
                size=256,
                max_cells=MAX_CELLS,
            )
            continue
        show_token_dims(
            arr,
            tokens,
            title=label + shape,
            value_name="value",
            domain=chain,
            container=cols[i % 2],
            size=256,
            max_cells=MAX_CELLS,
        )
    st.caption(chain_caption(chain[1], float(enc.ffn_hidden.max())))


def _encoder_summary(enc, D: int, norm_first: bool) -> None:
    """What the feed-forward layer and the LayerNorms did to the rows."""
    in_norm, out_norm = enc.mean_row_norms
    if norm_first:
        summary = (
            f"Pre-norm leaves the residual stream un-normalised: the mean row norm goes from {fmt(in_norm)} "
            f"(input) to {fmt(out_norm)} (output); each sub-layer only reads a normalised copy."
        )
    elif D == 1:
        summary = (
            "With d_model = 1 a row has one number, its own mean: LayerNorm subtracts it and leaves only the "
            "shift β, so every token's output is the same."
        )
    else:
        mean_abs, std = layer_norm_stats(enc.out)
        summary = (
            f"After the last LayerNorm every row is re-centred to mean 0 and scaled to standard deviation 1, "
            f"then multiplied by a learned scale γ and shifted by a learned offset β (random here, near 1 and 0): the rows' means are at most "
            f"{fmt(mean_abs, 2)} away from 0 and their standard deviations average {fmt(std)}."
        )
    st.markdown(f"The feed-forward layer is {D} → {4 * D} → {D} wide and acts on each token separately. " + summary)


def _where_it_looks(run) -> tuple[int | None, int | None]:
    """The picked encoder head's weights from "it": ``(position of "it", its strongest key)``, None without "it"."""
    enc, tokens = run.encoder, run.tokens
    it = find_token(tokens, "it")
    top_it = None
    if it is None:
        st.caption('The input has no token "it"; choose "the \'it\' sentence" above.')
    else:
        head = st.session_state["tb_head"]
        row = enc.weights[head, it]
        top_it = int(np.argmax(row))
        axis = weight_axis(row)
        vega.draw(
            None,
            bar_chart(
                row,
                tokens,
                title=f'attention from "it" ({head_name(head)}, encoder block)',
                domain=axis.domain,
                note=axis.note("axis") if axis.stretched else "",
            ),
        )
        animal = find_token(tokens, "animal")
        st.markdown(
            f'"it" puts most weight on **{md_escape(tokens[top_it])}** ({fmt(float(row[top_it]))})'
            + (f', and {fmt(float(row[animal]))} on "animal"' if animal is not None and animal != top_it else "")
            + '. These are random, untrained weights: a trained model is needed for "it" to find "animal"; '
            "here the pattern only reflects random projections (the Real model page shows trained heads)."
        )
    return it, top_it


def _decoder_section(run, D: int, T_dec: int) -> None:
    """The decoder's causal mask, its self- and cross-attention for the picked head, and its sub-layers."""
    dec, tokens, T = run.decoder, run.tokens, run.T
    head_d = st.session_state["tb_dhead"]
    c1, c2, c3 = st.columns([1.2, 1.4, 2.2])  # at [1, ...] the mask lost its last column at 1280 px
    show_mask(dec.self_mask, run.decoder_tokens, title=f"causal mask ({T_dec} x {T_dec})", container=c1, size=160)
    pair = weight_scale(
        dec.self_weights[head_d], dec.cross_weights[head_d], allowed=[dec.self_mask, None], group="decoder"
    )
    show_weights(  # no legend: it was clipped by the column at 1280 px; the key axis states the colour range
        dec.self_weights[head_d],
        run.decoder_tokens,
        title=f"masked self-attention ({T_dec} x {T_dec})",
        allowed=dec.self_mask,
        scale=pair,
        container=c2,
        size=160,
        legend=False,
    )
    show_weights(
        dec.cross_weights[head_d],
        run.decoder_tokens,
        tokens,
        title=f"cross-attention ({T_dec} x {T})",
        scale=pair,
        container=c3,
        size=260,
    )
    cross = dec.cross_weights[head_d]
    first_top = int(np.argmax(cross[0]))
    st.markdown(
        f"The decoder's {T_dec} token{'s' if T_dec > 1 else ''} first attend{'' if T_dec > 1 else 's'} to "
        + (
            "themselves, never ahead (purple = blocked in the mask, blank in the weights)"
            if T_dec > 1
            else "itself (one token: nothing lies ahead)"
        )
        + f", then ask the encoder's {T} outputs: the cross-attention map is {T_dec} x {T}, one row per decoder "
        f"token, one column per encoder token. In {head_name(head_d)}, y1 looks most at "
        f"**{md_escape(tokens[first_top])}** (#{first_top + 1}, weight {fmt(float(cross[0, first_top]))}). "
        f"The feed-forward layer "
        f"follows; output shape {dec.out.shape[0]} x {dec.out.shape[1]}. Weights are random and untrained."
    )
    show_table(
        st,
        pd.DataFrame(
            {
                "sub-layer": ["masked self-attention", "cross-attention", "feed-forward"],
                "queries from": ["decoder", "decoder", "—"],
                "keys / values from": ["decoder (earlier tokens)", "encoder output", "—"],
                "shape out": [f"{T_dec} x {D}"] * 3,
            }
        ),
        hide_index=True,
        width="stretch",
    )


page.run(_draw, _controls, code=(run_block, encoder_block, decoder_block))
