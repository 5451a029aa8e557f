"""The sentences of the Transformer block page, computed from its block run (attention_core/block_run.py) for the
setting on screen: each function is named for what it says, so that pages/Transformer_block.py reads as its lesson
(the encoder's maps, where "it" looks, the decoder).

Every number comes through :func:`ui.text.fmt`; tokens are escaped (:func:`ui.text.md_escape`).
"""

from __future__ import annotations

from attention_core.block_run import BlockRun
from ui.text import fmt, head_name, md_escape


def chain_caption(lim: float, hidden_max: float) -> str:
    """What the colours of the encoder's maps mean: one diverging scale for the residual stream, the hidden layer's
    own sequential one."""
    hidden = (
        f"its own scale runs from 0 (dark) to its largest value, {fmt(hidden_max)} (yellow)"
        if hidden_max > 0
        else "here it is 0 everywhere"
    )
    return (
        f"Every map of the residual stream (input to output) shares one colour scale, −{fmt(lim)} (blue) to "
        f"{fmt(lim)} (red), white at 0: a paler map holds smaller numbers. The hidden layer ReLU(xW₁+b₁) is never "
        f"negative; {hidden}."
    )


def check_questions(
    run: BlockRun, D: int, T_dec: int, it: int | None, top_it: int | None, head: int | None
) -> list[tuple[str, str]]:
    """The cross-attention map's shape, where "it" looks in encoder ``head`` (if the input has it), the hidden
    layer's size."""
    enc, tokens, T = run.encoder, run.tokens, run.T
    questions = [
        (
            "What shape is the decoder's cross-attention map here, and why?",
            f"{T_dec} x {T}: one row per decoder token (the queries) and one column per encoder output token "
            f"(the keys and values).",
        )
    ]
    if it is not None:
        questions.append(
            (
                f'In encoder {head_name(head)}, which token does "it" attend to most, and with what weight?',
                f"**{md_escape(tokens[top_it])}**, with weight {fmt(float(enc.weights[head, it, top_it]))} "
                "(random weights: a trained model would differ).",
            )
        )
    questions.append(
        (
            "How many numbers does the feed-forward hidden layer hold for this input?",
            f"{T} tokens x {4 * D} = {T * 4 * D:,} (d_ff, the feed-forward hidden layer's width, = 4 x d_model = {4 * D}).",
        )
    )
    return questions
