"""The Real model page's helpers: the model picker (the embedded model first), loading with a message when a
model cannot be had, and the sentences that say what the heads do, computed for the sentence on screen."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.embedded import EMBEDDED_ID
from attention_core.hf import ModelLoadError
from attention_core.model_views import AttentionRun
from attention_core.real_heads import PRONOUN, REFERENT, ROLE_THRESHOLD, HeadRoles, Sharpness, strongest
from ui.compute import MODELS, model_weights_run
from ui.skeleton.page_params import PageParam, set_value
from ui.text import fmt, md_escape, md_text

# the picker's labels are short enough for a phone's select box (a select box shows its value on one line, cut
# where it ends); what each choice is, is said under it (ABOUT)
CHOICES = {
    "all-MiniLM-L6-v2 (embedded)": EMBEDDED_ID,
    "BERT mini (hub, 45 MB)": "google/bert_uncased_L-4_H-256_A-4",
    "bert-base-uncased (hub, 440 MB)": "bert-base-uncased",
    "gpt2 (hub, 550 MB)": "gpt2",
    "another model id or a local folder": "",
}
ABOUT = {
    EMBEDDED_ID: "sentence-transformers/all-MiniLM-L6-v2: 6 layers x 12 heads, installed with the app (no network "
    "needed).",
    "google/bert_uncased_L-4_H-256_A-4": "google/bert_uncased_L-4_H-256_A-4 from the Hugging Face hub: 4 layers x 4 "
    "heads, 45 MB.",
    "bert-base-uncased": "bert-base-uncased from the Hugging Face hub: 12 layers x 12 heads, 440 MB.",
    "gpt2": "gpt2 from the Hugging Face hub: causal (each token sees only those before it), 12 layers x 12 heads, "
    "550 MB.",
    "": "Any model id of the Hugging Face hub (safetensors weights) or a folder on this machine.",
}
MODEL_CHARS = 500  # the longest model id or folder the box and the link take
# the model id or folder typed in the box, in the link while that box is picked ("": none, the link leaves it out)
MODEL = PageParam("rm_model", "model", "", chars=MODEL_CHARS, omit_default=True, fallback="the embedded model")


def _model_name(page) -> str:
    """The model picked (a shared link may name one: ``model=``, the page control MODEL), kept in the link when
    typed."""
    linked = page.link(MODEL)
    if "rm_custom" not in st.session_state:  # the box, seeded from the link (and again after a page switch)
        st.session_state.rm_custom = linked
        if linked:
            st.session_state.rm_choice = list(CHOICES)[-1]
    choice = st.selectbox(
        "Model",
        list(CHOICES),
        key="rm_choice",
        help="The embedded model is installed with the app. The others are downloaded from the Hugging Face hub (an "
        "online library of trained models) when this machine can reach it; in brackets: where it comes from and its size.",
    )
    st.caption(ABOUT[CHOICES[choice]])
    name = (
        CHOICES[choice]
        or st.text_input(
            "Hugging Face model id or local folder",
            key="rm_custom",
            max_chars=MODEL_CHARS,
            placeholder="e.g. distilbert-base-uncased or /path/to/saved/model",
        ).strip()
    )
    set_value(MODEL, name if CHOICES[choice] == "" else "")  # written into the link when the run ends
    return name


def hf_model_ui(page, text: str, max_tokens: int) -> tuple[str, AttentionRun] | None:
    """Pick and load a model and run ``text`` through it: (name, the model's weights without attention_core's
    recomputation: ui.compute.cached_attention_run adds it), or None (with a message) if that fails. ``page``:
    the ui.skeleton.page.Page, which keeps the model in the link."""
    name = _model_name(page)
    failed = st.session_state.setdefault("rm_failed", {})  # per session: a failed name is not retried on every rerun
    if not name:
        st.info("Type a model id or a folder to load.")
        return None
    arun = None
    if name not in failed:
        try:
            if name not in MODELS:
                where = "checked and loaded" if name == EMBEDDED_ID else "loaded (the first time it is downloaded)"
                with st.spinner(f"{name} is being {where}; later every session shares it…"):
                    MODELS.get(name)
            arun = model_weights_run(name, text, max_tokens)
        except ModelLoadError as exc:
            failed[name] = str(exc)
    if name in failed:
        said = md_text(failed[name])  # it names the model, which a link may carry: as text
        st.warning(said + " The toy pages keep working.", icon=":material/warning:")
        if st.button("Try loading again", key="rm_retry"):
            failed.pop(name)
            st.rerun()
        return None
    return name, arun


def _head(lh) -> str:
    return f"layer {lh[0] + 1}, head {lh[1] + 1}"


def _quoted(tokens, i: int) -> str:
    return f"“{md_escape(tokens[i])}”"


def _neighbour_sentence(kind: str, scores: np.ndarray, n_words: int) -> str:
    """Previous- or next-token heads: the strongest, how many pass ROLE_THRESHOLD, against even spreading."""
    layer, head, value = strongest(scores)
    if np.isnan(value):
        return f"**{kind.capitalize()} token**: the sentence has fewer than two words, so there is no {kind} word."
    count = int((scores > ROLE_THRESHOLD).sum())
    heads = ("1 head puts" if count == 1 else f"{count} heads put") if count else "no head puts"
    return (
        f"**{kind.capitalize()} token**: {_head((layer, head))} gives the {kind} word {value:.2f} of each word's "
        f"weight on average ({heads} more than {ROLE_THRESHOLD:g} there; spread evenly over the "
        f"{n_words} words it would be {fmt(1 / max(n_words, 1))})."  # 0.00196 at 512 tokens, not 0.00
    )


def role_sentences(roles: HeadRoles, tokens, special: np.ndarray, toy: Sharpness | None) -> list[str]:
    """What the heads do on this sentence, each sentence computed from ``roles`` (and ``toy``, random attention
    of the same shape)."""
    L, H = roles.previous.shape
    n_words = int((~special).sum())
    out = [_neighbour_sentence("previous", roles.previous, n_words), _neighbour_sentence("next", roles.next, n_words)]
    parks = []
    tokenizer = "the tokenizer (the program that cuts text into tokens)"  # said in full the first time only
    for where, scores, i in (("first", roles.first, 0), ("last", roles.last, len(tokens) - 1)):
        layer, head, value = strongest(scores)
        count = int((scores > ROLE_THRESHOLD).sum())
        label = _quoted(tokens, i)
        if special[i]:
            label += f", a special token {tokenizer} adds at the {'start' if where == 'first' else 'end'}"
            tokenizer = "the tokenizer"
        parks.append(
            f"{count} of {L * H} heads put more than {ROLE_THRESHOLD:g} of the words' weight on the {where} token "
            f"({label}; most: {_head((layer, head))}, {value:.2f})"
        )
    out.append(
        "**Parking**: "
        + "; ".join(parks)
        + ". A head with nothing to find in a sentence leaves its weight on such a token (a 'no-op')."
    )
    mw = roles.sharp.max_weight
    hi, lo = strongest(mw), strongest(-mw)
    one_hot = int((roles.sharp.near_one_hot > 0).sum())
    text = (
        f"**Sharpness**: the heads' mean max weight runs from {-lo[2]:.2f} ({_head(lo)}, spread over "
        f"{roles.sharp.effective_tokens[lo[:2]]:.1f} tokens) to {hi[2]:.2f} ({_head(hi)}, "
        f"{roles.sharp.effective_tokens[hi[:2]]:.1f} tokens); {one_hot} head{'s have' if one_hot != 1 else ' has'} "
        "near-one-hot rows (largest weight above 0.99)."
    )
    if toy is not None:
        sharper = int((mw > toy.max_weight.max()).sum())
        text += (
            f" Random attention of the same shape (the toy pages' what-if with {len(tokens)} tokens, d_model and "
            f"heads as this model, untrained) gives {toy.max_weight.min():.2f} to {toy.max_weight.max():.2f} in "
            f"every head ({toy.effective_tokens.min():.1f} to {toy.effective_tokens.max():.1f} tokens): "
            f"{sharper} of {L * H} trained heads are sharper than the sharpest random one."
        )
    out.append(text)
    return out


def roles_tables(roles: HeadRoles) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables of one row per head: where it looks (its role scores: the mean weight a word gives its previous
    and next word, the first and last token, and the pronoun's referent) and how peaked it is (the toy pages'
    saturation figures). Two tables of at most seven columns rather than one of ten: a phone shows each whole as
    text (ui.draw.tables.PHONE_TEXT_COLUMNS), where ten columns hid behind a sideways scroll."""
    L, H = roles.previous.shape
    layer, head = np.divmod(np.arange(L * H), H)
    where = {
        "layer": layer + 1,
        "head": head + 1,
        "previous word": roles.previous.ravel(),
        "next word": roles.next.ravel(),
        "first token": roles.first.ravel(),
        "last token": roles.last.ravel(),
    }
    if roles.to_referent is not None:
        where[f"{PRONOUN} → {REFERENT}"] = roles.to_referent.ravel()
    peaked = {
        "layer": layer + 1,
        "head": head + 1,
        "mean max weight": roles.sharp.max_weight.ravel(),
        "effective tokens": roles.sharp.effective_tokens.ravel(),
        "near-one-hot rows": roles.sharp.near_one_hot.ravel(),
    }
    return pd.DataFrame(where), pd.DataFrame(peaked)


def default_head(roles: HeadRoles) -> tuple[int, int]:
    """The head the pickers open on: the "it" -> "animal" head when the sentence has both, else the sharpest
    previous-token head."""
    scores = roles.to_referent if roles.to_referent is not None else roles.previous
    layer, head, value = strongest(scores)
    return (layer, head) if not np.isnan(value) else (0, 0)
