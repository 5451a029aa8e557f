"""The Real model page's "where one word looks": the learner picks any word of the sentence (by default its first
pronoun), and the page names, for every head, the word it looks at most, the heads that agree, the Winograd pair
as an experiment, and what attention weights do and do not show. Every sentence is computed from the weights of
the sentence on screen.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.real_heads import PRONOUNS, WINOGRAD, WordFocus, agreement, first_pronoun, word_focus
from ui.draw.tables import show_table
from ui.skeleton.widgets import index_picker
from ui.text import fmt, md_escape

SHOWN_HEADS = 6  # a group of agreeing heads is listed by name up to this many


def _q(token: str) -> str:
    return f"“{md_escape(token)}”"


def _heads(heads: list[tuple[int, int]]) -> str:
    names = [f"L{layer + 1}H{head + 1}" for layer, head in heads[:SHOWN_HEADS]]
    more = f" and {len(heads) - SHOWN_HEADS} more" if len(heads) > SHOWN_HEADS else ""
    return ", ".join(names) + more


def pick_word(tokens, special: np.ndarray, key: str = "rm_word") -> tuple[int, str]:
    """A picker over the sentence's words (special tokens left out), opening on the first pronoun; returns (token
    index, a sentence saying which word is shown and why)."""
    words = [i for i in range(len(tokens)) if not special[i]]
    pronoun = first_pronoun(tokens, special)
    default = words.index(pronoun) if pronoun is not None else 0
    labels = [str(tokens[i]) for i in words]
    if st.session_state.get(key) not in range(len(words)) or st.session_state.get(f"{key}_of") != tuple(tokens):
        st.session_state[key] = default  # a new sentence opens on its own first pronoun
    st.session_state[f"{key}_of"] = tuple(tokens)
    chosen = words[index_picker("word", labels, key=key, default=default)]
    if pronoun is None:
        why = (
            f"The sentence has no pronoun ({', '.join(PRONOUNS[:5])}, ...), so the page opens on its first word, "
            f"{_q(tokens[chosen])}; pick any word above."
            if chosen == words[0]
            else f"You picked {_q(tokens[chosen])}."
        )
    else:
        why = (
            f"The page opens on the sentence's first pronoun, {_q(tokens[pronoun])}; pick any word above."
            if chosen == pronoun
            else f"You picked {_q(tokens[chosen])} (the first pronoun is {_q(tokens[pronoun])})."
        )
    return chosen, why


def focus_sentences(focus: WordFocus, tokens) -> list[str]:
    """Which word each head looks at most from the picked word, and the heads that agree."""
    L, H = focus.top.shape
    word = _q(tokens[focus.word])
    groups = agreement(focus)
    if not groups:
        return [f"**From {word}**: the sentence has no other word to look at."]
    (top, heads), rest = groups[0], groups[1:]
    others = "; ".join(f"{_q(tokens[t])} by {len(h)}" for t, h in rest[:3])
    out = [
        f"**From {word}** (itself and the special tokens excepted), the {L * H} heads' favourite words are "
        f"{len(groups)} different words: {_q(tokens[top])} is chosen by {len(heads)} of {L * H} heads"
        + (f"; then {others}" if others else "")
        + ".",
        f"**Heads that agree on {_q(tokens[top])}**: {_heads(heads)} (L = layer, H = head); the strongest of them, "
        f"{_heads([max(heads, key=lambda lh: focus.weight[lh])])}, gives it {fmt(max(focus.weight[lh] for lh in heads))}"
        " of the word's weight.",
    ]
    return out


def focus_table(focus: WordFocus, tokens) -> pd.DataFrame:
    """Every head's favourite word from the picked word and the weight it gets."""
    L, H = focus.top.shape
    layer, head = np.divmod(np.arange(L * H), H)
    top = focus.top.ravel()
    return pd.DataFrame(
        {
            "layer": layer + 1,
            "head": head + 1,
            "looks most at": [str(tokens[t]) if t >= 0 else "" for t in top],
            "weight": [fmt(w) if np.isfinite(w) else "" for w in focus.weight.ravel()],
        }
    )


def winograd_sentence(runs) -> str:
    """The Winograd pair as an experiment: does any head's favourite word for "it" flip with the adjective?
    ``runs``: the model's weights for the two WINOGRAD sentences (same tokens up to the adjective)."""
    (a, b), picks = runs, []
    for run in runs:
        it = first_pronoun(run.tokens, run.special)
        if it is None:  # a tokenizer that glues a mark to its words ("Ġit"): no word "it" to follow
            return f"**The Winograd pair**: this model's tokenizer does not make “it” a word of “{WINOGRAD[0]}”."
        picks.append(np.asarray(run.tokens, dtype=object)[word_focus(run.attentions, run.special, it).top])
    adjective = next((i for i, (x, y) in enumerate(zip(a.tokens, b.tokens)) if x != y), None)
    if adjective is None:  # a small vocabulary writes both adjectives as one unknown token
        return (
            "**The Winograd pair**: this model's tokenizer writes “big” and “small” as one token: no pair to compare."
        )
    big, small = a.tokens[adjective], b.tokens[adjective]
    changed = picks[0] != picks[1]  # (L, H)
    follows = changed & (picks[0] == big) & (picks[1] == small)  # the head just looks at the new adjective
    nouns = changed & (picks[0] == "trophy") & (picks[1] == "suitcase")  # as a reader resolves "it"
    L, H = changed.shape
    said = (
        f"in {int(nouns.sum())} of them it moves from “trophy” to “suitcase”, as a reader resolves “it” "
        f"({_heads(list(zip(*map(list, np.nonzero(nouns)))))})"
        if nouns.any()
        else "in none of them does it move from “trophy” (big) to “suitcase” (small), as a reader resolves “it”"
    )
    return (
        f"**The Winograd pair**: “{WINOGRAD[0]}” (it = the trophy) against “{WINOGRAD[1]}” (it = the suitcase). "
        f"Only the adjective changes, and with it the answer. From “it”, {int(changed.sum())} of {L * H} heads "
        f"change the word they look at most; {int(follows.sum())} of them simply look at the new adjective "
        f"(“{big}” → “{small}”); {said}."
    )


def limits_sentence(focus: WordFocus, tokens, n_layers: int) -> str:
    """What attention weights do and do not show, with the numbers of the picked word."""
    groups = agreement(focus)
    L, H = focus.top.shape
    if not groups:
        return "**What the weights show**: with one word there is nothing to weigh."
    top, heads = groups[0]
    return (
        "**What the weights show, and what they do not**: a weight says how much of another word's value vector "
        f"a head copies into {_q(tokens[focus.word])} in its layer, nothing more. Here the {L * H} heads pick "
        f"{len(groups)} different words and the most chosen, {_q(tokens[top])}, wins {len(heads)} of {L * H}: "
        f"no one head is the model's decision. What the model makes of {_q(tokens[focus.word])} comes from every "
        f"head's output mixed by W_o and the feed-forward layers, through {n_layers} layers; a head that looks at a "
        f"word may copy little that matters, and the weights alone do not say what {_q(tokens[focus.word])} means "
        "to the model (for a pronoun: which noun it stands for)."
    )


def word_section(arun, winograd_runs) -> None:
    """Draw the section: the word picker, its sentences, every head's choice (in an expander), the Winograd pair
    and the statement of what the weights show."""
    tokens, special = list(arun.tokens), np.asarray(arun.special, dtype=bool)
    if special.all():
        st.caption("The sentence has no word to pick.")
        return
    word, why = pick_word(tokens, special)
    st.caption(why)
    focus = word_focus(arun.attentions, special, word)
    for sentence in focus_sentences(focus, tokens):
        st.markdown(sentence)
    with st.expander(f"Every head's favourite word from {_q(tokens[word])}"):
        show_table(st, focus_table(focus, tokens), hide_index=True, width="stretch")
    st.markdown(winograd_sentence(winograd_runs))
    st.markdown(limits_sentence(focus, tokens, arun.shape[0]))
