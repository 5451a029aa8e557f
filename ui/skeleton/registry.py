"""The pages, in reading order: the sidebar, the home page, every page's "next" link and the README's page list
come from this one list (``python -m ui.skeleton.registry`` writes the README's; tests/test_page_skeleton.py checks it).

A page is a file ``pages/<Name>.py`` (its address is ``/<Name>``) and one entry here. The order of the lines is the
reading order: a learner new to transformers starts with the first page and follows the "next" links. The files
on disk and the lines here are compared when this module is imported: a page without a line, or a line without a
page, stops the app with a message that names it (a page missing from the list would silently vanish from the
sidebar, and its "next" link would point nowhere).

Icons are Streamlit's Material Symbols (``:material/name:``), drawn from the app's own font: emoji showed as empty
boxes on machines without an emoji font.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
HOME = "streamlit_app.py"


class PageInfo(NamedTuple):
    """One page of the app, as the sidebar and the "next" links show it."""

    path: str  # the page's file, relative to the repository ("pages/Playground.py")
    label: str  # its name in the sidebar and in links
    icon: str  # a Material Symbol, ":material/tune:"
    teaches: str  # one sentence: what a learner finds there (home page, "next" links, README)
    predicts: bool = False  # in classroom mode it asks a question worth predicting before it shows the answer
    details: str = (
        ""  # the README's description of the page, if longer than ``teaches`` (python -m ui.skeleton.registry)
    )
    long_settings: bool = False  # its maps and tables grow with the longest, widest settings (512 tokens, d_model
    # 1024): the browser tests walk it at them (tests/test_browser.py, tests/test_browser_devices.py)

    @property
    def address(self) -> str:
        """Its address in the app ("" for Home, "Step_by_step"): :func:`address` of its file."""
        return address(self.path)

    @property
    def symbol(self) -> str:
        """The Material Symbol's name of its icon (":material/tune:" -> "tune")."""
        return self.icon.removeprefix(":material/").removesuffix(":")


def address(path: str) -> str:
    """A page file's address in the app, as Streamlit names the files of ``pages/`` ("" for Home)."""
    return "" if path == HOME else Path(path).stem


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/Step_by_step.py",
        "Step by step",
        ":material/calculate:",
        "Attention from zero on the class-notes example A A B A: Q, K, V, scores, scaling, softmax and the outputs "
        "Z, one small table at a time, with W_q, W_k, W_v you can edit.",
        predicts=True,
        details=(
            "the class-notes example A1 A2 B3 A4: E, Q = E W_q, K, V, S = Q Kᵀ, d_k and √d_k, S/√d_k, the"
            " row-wise softmax, Z = α V (α the weights), with W_q, W_k, W_v editable; the ×10 key booster"
            " explained in one click (W_k = 10·I against I: B3's weight 0.997 against 0.403); tables "
            "labelled by token; scores on a fixed colour scale"
        ),
    ),
    PageInfo(
        "pages/Soft_lookup.py",
        "Soft lookup",
        ":material/manage_search:",
        "Attention as a dictionary whose keys match by degree: a mix of every value, and how a falling "
        "temperature turns it into the hard lookup of a Python dict.",
        predicts=True,
        details=(
            "attention as a dictionary lookup whose keys match by degree: a Python dict returns the value"
            " of the key equal to the query (or KeyError), attention a mix of every value weighted by the"
            " match; a query between two keys, a key stored twice, and the temperature at which the soft "
            "lookup becomes the hard one"
        ),
    ),
    PageInfo(
        "pages/Softmax_saturation.py",
        "Softmax saturation",
        ":material/thermostat:",
        "Why divide by √d_k: how peaked the rows get as d_k grows, the words sharp, soft and uniform with their "
        "thresholds, and (for those who want it) the gradient through the softmax.",
        details=(
            "why 1/√d_k, without calculus first: how the spread of q·k grows like √d_k, and how peaked "
            "the rows get as d_k grows (mean largest weight, effective tokens = e^entropy, share of near-"
            "one-hot rows; each word defined where it first appears), scaled against unscaled over d_k = "
            "1…1024 with your setting highlighted; the words nearly uniform, soft, peaked and sharp with "
            "their thresholds as weights for your T; one row's logits and softmax up close; scaling as a "
            "temperature of √d_k. A part to open, for readers who know derivatives: the gradient through "
            "the softmax (J^T g, checked against torch autograd) over d_k and one row's Jacobian diag(p) "
            "− ppᵀ. A new temperature re-applies the softmax to stored scores (timings in "
            "docs/BENCHMARKS.md)"
        ),
    ),
    PageInfo(
        "pages/Multi-head.py",
        "Multi-head",
        ":material/grid_view:",
        "Several heads side by side: one map per head, the path heads → concat → W_o → output with shapes, and "
        "how different the heads are.",
        details=(
            "one live map per head (up to 16) and an enlarged head with its d_k, saturation and Q/K/V "
            "shapes; heads → concat → W_o → output with shapes; a head × head Jensen-Shannon matrix; one "
            "purposeful head against two random heads"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Masks.py",
        "Masks",
        ":material/visibility_off:",
        "Causal and padding masks, the masked scores and the weights; why padded keys get 0 and what a fully "
        "masked row does.",
        predicts=True,
        details=(
            "causal, padding and both: the mask, the masked scores (blocked cells blank) and the weights,"
            " live while the pad count and the temperature move; why blocked keys get exactly 0; a fully "
            "masked row gives zero weights where a textbook softmax gives NaN"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Playground.py",
        "Playground",
        ":material/tune:",
        "Everything together: every head's weights, the outputs and the saturation for the sliders' setting; pick "
        "a query to see its row.",
        predicts=True,
        details=(
            "every head's weights, redrawn by the browser while the temperature, the scaling or the mask "
            "moves (their controls sit above the maps, the input's in the sidebar); pick a head and a query to see its row; whether "
            "the rows are sharp or soft, from the measured max weight; X and Z on one colour scale, Z "
            "following the drag up to 64 x 64 (and Q, K, V); per-head saturation (entropy, max weight, effective tokens, near-one-hot rows) "
            'against the scaled/unscaled twin; CSV downloads with their size and "reproduce in Python" '
            "scripts"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Compare.py",
        "Compare",
        ":material/compare:",
        "Two settings side by side (A and B) on one colour scale, their saturation and outputs, and the "
        "difference B − A.",
        predicts=True,
        details=(
            "two settings side by side (A and B in the URL) on one colour scale, live: each one's temperature, "
            "scaling and mask above the maps, its input in the sidebar; the sentence names"
            " what really differs, the preset's story, weights, outputs, saturation and B − A on the "
            "scale of a weight; A's Z, B's Z and their B − A on one scale, Z following the drag up to 64 x 64"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Positional_encoding.py",
        "Positional encoding",
        ":material/pin_drop:",
        "The sinusoidal table, similarity by distance, and the shuffle experiment that shows why attention needs "
        "positions.",
        details=(
            "the sinusoidal table, chosen dimensions as curves, PE·PEᵀ and similarity by distance; the "
            "shuffle experiment: without positions the outputs only move with their tokens (difference "
            "0), with positions they change"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Cross-attention.py",
        "Cross-attention",
        ":material/swap_horiz:",
        "Queries from one sequence, keys and values from another: a T_q x T_k map, and how it differs from "
        "self-attention.",
        details=(
            "queries from one sequence, keys/values from another: a T_q × T_k map, a query's row (random,"
            " untrained weights: named as such), and self- against cross-attention"
        ),
    ),
    PageInfo(
        "pages/Transformer_block.py",
        "Transformer block",
        ":material/stacks:",
        "Encoder and decoder blocks around attention: residuals, LayerNorm (post- vs pre-norm), feed-forward.",
        details=(
            "an encoder block (attention, add & LayerNorm, feed-forward; post-norm or pre-norm) with "
            "every intermediate tensor, a decoder block with causal self-attention and T_q × T_k cross-"
            "attention"
        ),
    ),
    PageInfo(
        "pages/Real_model.py",
        "Real model",
        ":material/smart_toy:",
        "A pretrained model on your sentence: head view, model view, neuron view, and parity with attention_core.",
        details=(
            "the embedded all-MiniLM-L6-v2 (offline; BERT mini, bert-base, GPT-2 or any model id or local"
            " folder from the hub when it can be reached) on your sentence, up to 512 tokens: what its "
            "heads do, computed for the sentence (previous- and next-token heads, heads parking on "
            "[CLS]/[SEP], each head's sharpness against random attention of the same shape); any word you pick"
            " (the first pronoun by default): every head's favourite word from it and the heads that agree; the"
            " Winograd pair (trophy, suitcase: too big, too small) as an experiment, and what attention weights"
            " do and do not show; the model view of every head on one canvas with hover (query, key, weight),"
            " the enlarged head the pickers name with token labels, the head view, the neuron view (q · k,"
            " scale, logit, weight); parity: attention_core "
            "recomputes every layer's weights from the model's own inputs and weights (4e-7 on the "
            "class's sentence); the same weights BertViz embeds (tested)"
        ),
    ),
    PageInfo(
        "pages/Train.py",
        "Train",
        ":material/model_training:",
        "Train a tiny transformer live or replay shipped runs: watch heads form, and the induction-head phase change.",
        details=(
            "a tiny transformer built from attention_core's modules learns copy, reverse, sort, previous "
            'token, "find the B" or induction, live (play, pause, step, reset; every setting and the step'
            " in the link) or replayed from shipped runs: losses, every head's map on a probe, head "
            "scores with the phase change marked, queries and keys in one picture, parity with "
            "attention_core; the two-layer / one-layer induction experiment side by side"
        ),
    ),
    PageInfo(
        "pages/Positions.py",
        "Positions",
        ":material/explore:",
        "Sinusoidal, learned, RoPE and ALiBi on the same input: scores that depend on the offset only, and longer "
        "inputs.",
        details=(
            "sinusoidal, learned (a seeded random table, said so), RoPE and ALiBi on the same input: the "
            "score of two tokens at every pair of positions with its spread per offset (RoPE about 4e-16,"
            " ALiBi 0: the offset alone decides; sinusoidal and learned: large), the weights per method, "
            "and what each does beyond the trained length"
        ),
    ),
    PageInfo(
        "pages/Efficient_attention.py",
        "Efficient attention",
        ":material/bolt:",
        "The KV cache token by token, KV memory of real models (MHA, GQA, MQA), sliding windows, FlashAttention's "
        "tiles.",
        details=(
            "the KV cache decoding one token at a time (what is computed, what is reused) and its "
            "equality with one causal pass; KV memory of GPT-2, Llama-2-7B/70B and Mistral-7B with MHA, "
            "GQA and MQA (Llama-2-70B at 4k tokens in fp16: 1.34 GB instead of 10.7 GB); sliding windows "
            "(the scores a layer computes, counted from the mask: the first w − 1 queries see fewer keys)"
            " and the receptive field L(w − 1) + 1 measured over layers; FlashAttention's tiles: running "
            "max, sum and the rescaling where it happened (e^(m − m′) when the running max rose, a dash "
            "otherwise), equal to the full softmax without the T × T matrix"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Sinks_and_linear_attention.py",
        "Sinks and linear attention",
        ":material/vertical_align_bottom:",
        "A sink logit that lets a head attend to nothing, StreamingLLM's window, and linear attention as an RNN.",
        details=(
            "a sink logit per head (gpt-oss): the weight left on real tokens (< 1) per head; "
            "StreamingLLM's keep-the-first-tokens window and its cache size; linear attention (φ = elu + "
            "1) as an RNN: parallel and recurrent forms equal (about 2e-16), a d × d state instead of T ×"
            " T"
        ),
        long_settings=True,
    ),
    PageInfo(
        "pages/Implementations.py",
        "Implementations",
        ":material/code:",
        "The same attention in NumPy, from-scratch torch, PyTorch's own layers and Keras: differences and times.",
        details=(
            "the same attention in NumPy, from-scratch torch (function and modules), "
            "`F.scaled_dot_product_attention`, `nn.MultiheadAttention` and Keras: differences and times, "
            "and the code that ran"
        ),
    ),
)
HOME_INFO = PageInfo(
    HOME,
    "Home",
    ":material/home:",
    "What attention is, the formula, a live example, the pages.",
    details=(
        "what self-attention is, the formula, Query / Key / Value in a line each, the class-notes example"
        " live (a labelled map), the classroom experiments with their questions"
    ),
)


def predicting() -> list[PageInfo]:
    """The pages that ask a question worth predicting in classroom mode."""
    return [p for p in PAGES if p.predicts]


def disagreements(root: Path = ROOT, pages: tuple[PageInfo, ...] = PAGES) -> list[str]:
    """What differs between the page files in ``root/pages`` and ``pages``: one sentence per difference."""
    on_disk = {f"pages/{p.name}" for p in (root / "pages").glob("*.py")}
    listed = [p.path for p in pages]
    out = [
        f"{path} has no line in ui/skeleton/registry.PAGES: add PageInfo({path!r}, label, icon, teaches)"
        for path in sorted(on_disk - set(listed))
    ]
    out += [
        f"ui/skeleton/registry.PAGES lists {path}, which is not a file in pages/"
        for path in listed
        if path not in on_disk
    ]
    out += [
        f"ui/skeleton/registry.PAGES lists {path} twice" for path in sorted({p for p in listed if listed.count(p) > 1})
    ]
    return out


def info(path: str) -> PageInfo:
    """The registry line of a page (``path`` relative to the repository, or the home page)."""
    if path == HOME:
        return HOME_INFO
    for page in PAGES:
        if page.path == path:
            return page
    raise LookupError(f"{path} is not in ui/skeleton/registry.PAGES; pages: {[p.path for p in PAGES]}")


def next_page(path: str) -> PageInfo | None:
    """The page after ``path`` in the reading order (the home page leads to the first)."""
    paths = [p.path for p in PAGES]
    if path not in paths:
        return PAGES[0]
    i = paths.index(path)
    return PAGES[i + 1] if i + 1 < len(PAGES) else None


README_START = (
    "<!-- the page list: python -m ui.skeleton.registry writes it from ui/skeleton/registry.py; edit the registry -->"
)
README_END = "<!-- end of the page list -->"


PREDICTS_MARK = "(asks a question to predict)"  # after a predicting page's name in the README's list


def readme_pages() -> str:
    """The README's page list: Home, then every page in reading order, each with what it teaches; a page that
    asks a question worth predicting in classroom mode carries PREDICTS_MARK."""
    return "\n".join(
        f"- **{p.label}**{' ' + PREDICTS_MARK if p.predicts else ''}: {p.details or p.teaches}"
        for p in (HOME_INFO, *PAGES)
    )


def with_readme_pages(readme: str) -> str:
    """``readme`` with the text between README_START and README_END replaced by :func:`readme_pages`."""
    from ui.text import with_marked

    return with_marked(readme, README_START, README_END, readme_pages())


_PROBLEMS = disagreements()
if _PROBLEMS:  # a developer's mistake: stop with the list rather than draw a sidebar without the page
    raise RuntimeError("The pages on disk and ui/skeleton/registry.PAGES disagree:\n- " + "\n- ".join(_PROBLEMS))


if __name__ == "__main__":  # python -m ui.skeleton.registry: write the README's page list from the registry
    _readme = ROOT / "README.md"
    _readme.write_text(with_readme_pages(_readme.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"README.md: the page list is ui/skeleton/registry.PAGES' ({len(PAGES)} pages and Home)")
