"""The pages, in reading order: the sidebar, the home page, every page's "next" link and the README's page list
come from this one list.

A page is a file ``pages/<Name>.py`` (its address is ``/<Name>``) and one line here. The order of the lines is the
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

ROOT = Path(__file__).resolve().parents[1]
HOME = "streamlit_app.py"


class PageInfo(NamedTuple):
    """One page of the app, as the sidebar and the "next" links show it."""

    path: str  # the page's file, relative to the repository ("pages/Playground.py")
    label: str  # its name in the sidebar and in links
    icon: str  # a Material Symbol, ":material/tune:"
    teaches: str  # one sentence: what a learner finds there (home page, "next" links, README)
    predicts: bool = False  # in classroom mode it asks a question worth predicting before it shows the answer


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/Step_by_step.py",
        "Step by step",
        ":material/calculate:",
        "Attention from zero on the class-notes example A A B A: Q, K, V, scores, scaling, softmax and the outputs "
        "Z, one small table at a time, with W_q, W_k, W_v you can edit.",
        predicts=True,
    ),
    PageInfo(
        "pages/Soft_lookup.py",
        "Soft lookup",
        ":material/manage_search:",
        "Attention as a dictionary whose keys match by degree: a mix of every value, and how a falling "
        "temperature turns it into the hard lookup of a Python dict.",
        predicts=True,
    ),
    PageInfo(
        "pages/Softmax_saturation.py",
        "Softmax saturation",
        ":material/thermostat:",
        "Why divide by √d_k: how peaked the rows get as d_k grows, the words sharp, soft and uniform with their "
        "thresholds, and (for those who want it) the gradient through the softmax.",
    ),
    PageInfo(
        "pages/Multi-head.py",
        "Multi-head",
        ":material/grid_view:",
        "Several heads side by side: one map per head, the path heads → concat → W_o → output with shapes, and "
        "how different the heads are.",
    ),
    PageInfo(
        "pages/Masks.py",
        "Masks",
        ":material/visibility_off:",
        "Causal and padding masks, the masked scores and the weights; why padded keys get 0 and what a fully "
        "masked row does.",
        predicts=True,
    ),
    PageInfo(
        "pages/Playground.py",
        "Playground",
        ":material/tune:",
        "Everything together: every head's weights, the outputs and the saturation for the sliders' setting; pick "
        "a query to see its row.",
        predicts=True,
    ),
    PageInfo(
        "pages/Compare.py",
        "Compare",
        ":material/compare:",
        "Two settings side by side (A and B) on one colour scale, their saturation and outputs, and the "
        "difference B − A.",
        predicts=True,
    ),
    PageInfo(
        "pages/Positional_encoding.py",
        "Positional encoding",
        ":material/pin_drop:",
        "The sinusoidal table, similarity by distance, and the shuffle experiment that shows why attention needs "
        "positions.",
    ),
    PageInfo(
        "pages/Cross-attention.py",
        "Cross-attention",
        ":material/swap_horiz:",
        "Queries from one sequence, keys and values from another: a T_q x T_k map, and how it differs from "
        "self-attention.",
    ),
    PageInfo(
        "pages/Transformer_block.py",
        "Transformer block",
        ":material/stacks:",
        "Encoder and decoder blocks around attention: residuals, LayerNorm (post- vs pre-norm), feed-forward.",
    ),
    PageInfo(
        "pages/Real_model.py",
        "Real model",
        ":material/smart_toy:",
        "A pretrained model on your sentence: head view, model view, neuron view, and parity with attention_core.",
    ),
    PageInfo(
        "pages/Train.py",
        "Train",
        ":material/model_training:",
        "Train a tiny transformer live or replay shipped runs: watch heads form, and the induction-head phase change.",
    ),
    PageInfo(
        "pages/Positions.py",
        "Positions",
        ":material/explore:",
        "Sinusoidal, learned, RoPE and ALiBi on the same input: scores that depend on the offset only, and longer "
        "inputs.",
    ),
    PageInfo(
        "pages/Efficient_attention.py",
        "Efficient attention",
        ":material/bolt:",
        "The KV cache token by token, KV memory of real models (MHA, GQA, MQA), sliding windows, FlashAttention's "
        "tiles.",
    ),
    PageInfo(
        "pages/Sinks_and_linear_attention.py",
        "Sinks and linear attention",
        ":material/vertical_align_bottom:",
        "A sink logit that lets a head attend to nothing, StreamingLLM's window, and linear attention as an RNN.",
    ),
    PageInfo(
        "pages/Implementations.py",
        "Implementations",
        ":material/code:",
        "The same attention in NumPy, from-scratch torch, PyTorch's own layers and Keras: differences and times.",
    ),
)
HOME_INFO = PageInfo(HOME, "Home", ":material/home:", "What attention is, the formula, a live example, the pages.")


def predicting() -> list[PageInfo]:
    """The pages that ask a question worth predicting in classroom mode."""
    return [p for p in PAGES if p.predicts]


def disagreements(root: Path = ROOT, pages: tuple[PageInfo, ...] = PAGES) -> list[str]:
    """What differs between the page files in ``root/pages`` and ``pages``: one sentence per difference."""
    on_disk = {f"pages/{p.name}" for p in (root / "pages").glob("*.py")}
    listed = [p.path for p in pages]
    out = [
        f"{path} has no line in ui/registry.PAGES: add PageInfo({path!r}, label, icon, teaches)"
        for path in sorted(on_disk - set(listed))
    ]
    out += [f"ui/registry.PAGES lists {path}, which is not a file in pages/" for path in listed if path not in on_disk]
    out += [f"ui/registry.PAGES lists {path} twice" for path in sorted({p for p in listed if listed.count(p) > 1})]
    return out


def info(path: str) -> PageInfo:
    """The registry line of a page (``path`` relative to the repository, or the home page)."""
    if path == HOME:
        return HOME_INFO
    for page in PAGES:
        if page.path == path:
            return page
    raise LookupError(f"{path} is not in ui/registry.PAGES; pages: {[p.path for p in PAGES]}")


def next_page(path: str) -> PageInfo | None:
    """The page after ``path`` in the reading order (the home page leads to the first)."""
    paths = [p.path for p in PAGES]
    if path not in paths:
        return PAGES[0]
    i = paths.index(path)
    return PAGES[i + 1] if i + 1 < len(PAGES) else None


_PROBLEMS = disagreements()
if _PROBLEMS:  # a developer's mistake: stop with the list rather than draw a sidebar without the page
    raise RuntimeError("The pages on disk and ui/registry.PAGES disagree:\n- " + "\n- ".join(_PROBLEMS))
