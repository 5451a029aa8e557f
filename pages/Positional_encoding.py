"""Positional encoding: the sinusoidal table, similarity by distance, and the shuffle experiment."""

import numpy as np
import streamlit as st

from attention_core import shuffle_experiment, sinusoidal_positional_encoding
from attention_core.positional import position_similarity, wavelengths
from ui.compute import cached_positions, cached_run, cached_shuffle
from ui.draw import vega
from ui.draw.charts import Axes, own_domain, show_heatmap
from ui.lessons.positional_encoding.charts import curves_spec, distance_spec
from ui.session.partial import rerun_body
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.text import fmt, md_escape

page = Page(
    __file__,
    "Attention compares every token with every other one, but nothing in q·k says *where* a token is: "
    "shuffle the words and each word gets the same output as before. The sinusoidal encoding adds to each "
    "position a pattern of sines and cosines of different wavelengths, so order becomes part of the input.",
)


def sci(x: float) -> str:
    """A difference in scientific notation, or 0 when it is exactly 0."""
    return "0" if x == 0 else f"{x:.1e}"


def _reshuffle() -> None:
    """on_click of Reshuffle: the next shuffle, drawn by the body alone."""
    st.session_state.pe_shuffle += 1
    rerun_body()


def _controls() -> tuple:
    """The full-run part: the sidebar, the curves' dimension picker and Reshuffle, between the body's places."""
    cfg = page.whatif(show=("input_kind", "seq_len", "d_model", "n_heads", "scaled", "temperature", "seed"))
    table = st.container()
    D = cfg.d_model
    st.multiselect(
        "Dimensions to draw as curves",
        list(range(D)),
        default=sorted({d for d in (0, 1, 4, D - 2) if 0 <= d < D}),
        key="pe_dims",
        max_selections=8,
        on_change=rerun_body,
    )
    middle = st.container()
    if "pe_shuffle" not in st.session_state:
        st.session_state.pe_shuffle = 0
    st.button("Reshuffle", key="pe_reshuffle", on_click=_reshuffle)
    return table, middle, st.container()


def _draw(table, middle, shuffle) -> list[Question]:
    """The sinusoidal table, its curves, similarity by distance and the shuffle experiment, into the places."""
    cfg = page.setting()
    table.latex(
        r"PE_{pos,\,2i} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right),\qquad "
        r"PE_{pos,\,2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)"
    )
    run = cached_run(cfg.replace(positional=False, mask="none"))
    T, D = run.T, cfg.d_model
    pe, sim, by_offset = cached_positions(T, D)
    with table:
        _table_section(pe, T, D)
    with middle:
        _curves(T, D)
        st.subheader("Similarity depends on distance")
        _similarity_section(sim, by_offset, T, D)
        st.subheader("The shuffle experiment")
    with shuffle:
        diff_without = _shuffle_section(cfg, run)
        return _questions(diff_without, by_offset, T, D)


def _table_section(pe, T: int, D: int) -> None:
    """The sinusoidal table as a map, and its wavelengths."""
    positions = [str(p) for p in range(T)]
    st.subheader(f"The encoding table: {T} position{'s' if T > 1 else ''} x {D} dimension{'s' if D > 1 else ''}")
    show_heatmap(
        pe,
        positions,
        [str(j) for j in range(D)],
        title="PE",
        axes=Axes("position", "dimension", "PE"),
        scheme="diverging",
        domain=(-1, 1),
        size=300,  # 64 dimensions and their labels fit a phone (358 px)
        max_px=384,
    )
    longest = float(wavelengths(D)[-1])  # the wavelength of the last sine/cosine pair
    st.caption(
        "Colour: −1 (blue) to +1 (red). "
        + (
            "Left columns oscillate fast (short wavelength), right columns slowly: each position gets its own "
            f"fingerprint. Wavelengths run from 2π ≈ 6.28 to {fmt(longest)} positions."
            if D > 2
            else f"With d_model = {D} there is only one frequency: wavelength 2π ≈ 6.28 positions, so positions 6.28 apart "
            "look almost alike."
        )
    )


def _curves(T: int, D: int) -> None:
    """The picked dimensions as curves over the positions."""
    dims = st.session_state["pe_dims"]
    if dims:
        vega.draw(st, curves_spec(T, D, tuple(dims)))
    else:
        st.caption("Pick at least one dimension to draw its curve.")


def _similarity_section(sim, by_offset, T: int, D: int) -> None:
    """PE · PEᵀ and the dot product by distance, with what they say."""
    positions = [str(p) for p in range(T)]
    c1, c2 = st.columns([3, 2])
    show_heatmap(
        sim,
        positions,
        positions,
        title="PE · PEᵀ (position x position)",
        axes=Axes("position", "position", "dot"),
        scheme="diverging",
        domain=own_domain(sim, diverging=True),  # signed: 0 is white, the largest |dot| (PE·PE) full colour
        container=c1,
        size=320,
        max_px=320,
    )
    vega.draw(c2, distance_spec(T, D))
    self_sim = (
        f"{fmt(by_offset[0])} = d_model / 2, every sine² + cosine² pair adding 1"
        if D % 2 == 0
        else f"{fmt(by_offset[0])} on average: (d_model − 1) / 2 = {fmt((D - 1) / 2)} from the sine/cosine pairs "
        "plus the "
        "last column's sine²"
    )
    if T == 1:
        distance = "With one position there is no distance to compare; raise seq_len."
    elif T == 2:
        distance = f"Positions 0 and 1 give {fmt(by_offset[1])}, " + (
            "less than a position with itself." if by_offset[1] < by_offset[0] else "as much as a position with itself."
        )
    elif by_offset[1] > by_offset[-1]:
        distance = (
            f"Nearby positions match more than distant ones: distance 1 gives {fmt(by_offset[1])}, "
            f"distance {T - 1} gives {fmt(by_offset[-1])}."
        )
    else:
        distance = (
            f"At this d_model the match does not fall with distance: distance 1 gives {fmt(by_offset[1])}, "
            "distance "
            f"{T - 1} gives {fmt(by_offset[-1])} (too few frequencies; raise d_model)."
        )
    c2.caption(f"A position's dot product with itself is {self_sim}. {distance}")


def _shuffle_section(cfg, run) -> float:
    """The shuffle experiment: outputs before and after shuffling, with and without positions; returns the largest
    difference without them."""
    T = run.T
    perm, diff_without, diff_with = cached_shuffle(cfg.replace(mask="none"), st.session_state.pe_shuffle)
    moved = int((perm != np.arange(T)).sum())
    shown = " ".join(md_escape(run.tokens[i]) for i in perm[:12]) + (" …" if T > 12 else "")
    st.markdown(f"Shuffled order (shuffle #{st.session_state.pe_shuffle}, {moved} of {T} tokens moved): {shown}")
    c1, c2 = st.columns(2)
    c1.metric("max |difference| without positional encoding", sci(diff_without))
    c2.metric("max |difference| with positional encoding", "0" if diff_with == 0 else f"{diff_with:.3g}")
    if T == 1:
        st.caption("With one token there is nothing to shuffle; raise seq_len.")
    elif moved == 0:
        st.caption("This shuffle left every token in place, so nothing can change; press Reshuffle.")
    else:
        st.markdown(
            f"Each token's output after shuffling, put back in the original order, is compared with its output before "
            f"(same seeded random, untrained weights). **Without** positional encoding the largest difference is "
            f"{sci(diff_without)}, which is 0 up to float64 rounding (float64: the 64-bit numbers the app computes "
            f"with, about {np.finfo(np.float64).precision} significant digits): attention saw a bag of words and gave every word "
            f"the same answer whatever its place. **With** the encoding the outputs change by up to {fmt(diff_with)}: "
            "the same word at a new position is now a different input. That is why transformers add positions before "
            "the first attention."
        )
    return diff_without


def _questions(diff_without: float, by_offset, T: int, D: int) -> list[tuple[str, str]]:
    """Why the difference without positions is 0, near against far positions, how many wavelengths."""
    questions = [
        (
            "Why is the difference without positional encoding 0 (up to rounding)?",
            f"Here it is {sci(diff_without)}. Without positions attention is permutation-equivariant: shuffling "
            "the tokens shuffles their outputs the same way, so every token gets the same output as before.",
        )
    ]
    if T > 2:
        questions.append(
            (
                f"Which is larger here: the dot product of positions 1 apart, or {T - 1} apart?",
                f"Distance 1: {fmt(by_offset[1])}; distance {T - 1}: {fmt(by_offset[-1])}; so "
                + (
                    "distance 1 is larger."
                    if by_offset[1] > by_offset[-1]
                    else f"distance {T - 1} is not smaller at this d_model."
                ),
            )
        )
    questions.append(
        (
            "How many different wavelengths does this table use?",
            f"{(D + 1) // 2}: one per sine/cosine pair of columns (d_model = {D}).",
        )
    )
    return questions


page.run(_draw, _controls, code=(sinusoidal_positional_encoding, wavelengths, position_similarity, shuffle_experiment))
