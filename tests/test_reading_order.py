"""The reading order explains every word before it leans on it (issue 23).

A learner new to transformers starts on Home and follows the "next" links (ui/skeleton/registry.PAGES). This test opens
every page in that order at its default setting, collects what the page shows in the order it shows it (markdown,
captions, formulas, headings and their help, metric labels and their help, widget labels and their help, expander
and tab labels, chart titles, image captions, table columns and text cells, the block diagram's labels; the
sidebar's controls after the page's main area), and checks, for each term below, that a definition in plain words
appears no later than the term's first use.

- "No later" is counted in elements: a definition in the same sentence, caption, help text or widget (label and
  help together) as the first use counts.
- A term first met in a formula may be explained anywhere on that page (the "where ..." under a formula).
- A heading (a page's title, a subheader, a card's bold name) is read with the first element under it.
- Previews are not uses: the sidebar's page list, the "next" and "see also" links, and Home's list of pages repeat
  each page's one-line summary (``PageInfo.teaches``), which announces what that page will explain.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import pytest
from streamlit.testing.v1 import element_tree as et

from tests.apptest_util import app, run_ok
from ui.skeleton.registry import HOME, PAGES


class Seen(NamedTuple):
    """One piece of text as the reader meets it."""

    page: str  # the page's label
    kind: str  # markdown, latex, metric, widget, chart, ...
    text: str


# (term, a pattern that finds a use, a pattern that finds its definition); case-sensitive unless (?i)
TERMS: list[tuple[str, str, str]] = [
    ("token", r"(?i)\btokens?\b", r"every \*\*token\*\* of a sequence \(a word or a piece of a word\)"),
    ("query", r"(?i)\bquer(y|ies)\b", r"\(its \*\*query\*\*\)"),
    ("key", r"(?i)\bkeys?\b", r"\(its \*\*key\*\*\)"),
    ("value", r"(?i)\bvalues?\b", r"\(their \*\*values\*\*\)"),
    ("softmax", r"(?i)softmax", r"the \*\*softmax\*\* turns"),
    ("embedding", r"(?i)\bembeddings?\b", r"one row per token \(its \*\*embedding\*\*"),
    ("d_model", r"d_\{?model", r"\*\*embedding\*\*, \$d_\{model\}\$ numbers"),
    ("projections W_q, W_k, W_v", r"(?i)\bprojections?\b", r"the \*\*projections\*\*"),
    ("d_k", r"d_k|d_\{k\}", r"\$d_k\$ is the length of a query or key vector"),
    ("scaling by √d_k", r"√d_k|sqrt\(d_k\)|\\sqrt\{d_k\}", r"dividing by \$\\sqrt\{d_k\}\$ keeps them"),
    ("head", r"(?i)\bheads?\b", r"its \*\*heads\*\*, each with its own"),
    ("identity matrix I", r"10\s*(\\,|·)?\s*I\b|W_k = I\b", r"\bI the identity matrix"),
    ("one-hot", r"(?i)one-hot", r"one-hot \(a single 1"),
    ("temperature", r"(?i)temperature", r"the \*\*temperature\*\*, before the softmax"),
    ("τ", r"τ", r"τ is the temperature"),
    ("logits", r"(?i)\blogits?\b", r"\*\*logits\*\*: The numbers the softmax receives"),
    ("mask", r"(?i)\bmask", r"with a causal mask every word attends only to itself and the words before it"),
    ("decoder", r"(?i)\bdecod", r"A decoder \(a model that writes text one word at a time\)"),
    ("seed", r"(?i)\bseed", r"The random seed: the same seed draws the same"),
    ("saturation", r"(?i)saturat", r"it \*\*saturates\*\*"),
    ("std", r"\bstd\b", r"spread \(standard deviation, std\)"),
    ("N(0, 1)", r"N\(0, ?(1|½)\)", r"N\(0, 1\) entries \(random numbers drawn from a normal distribution"),
    ("max weight", r"(?i)max(imum)? weight", r"\*\*max weight\*\*: A row's largest weight"),
    ("entropy", r"(?i)\bentropy\b", r"\*\*entropy\*\*: How spread a row is"),
    ("nats", r"\bnats?\b", r"in nats \(the unit of the natural logarithm ln\)"),
    ("effective tokens", r"(?i)effective tokens", r"\*\*effective tokens\*\*: e\^entropy"),
    ("near-one-hot", r"(?i)near[- ]one[- ]hot", r"\*\*near-one-hot rows\*\*: The share of rows"),
    ("nearly uniform", r"(?i)nearly uniform", r"\*\*nearly uniform\*\* below r ="),
    ("soft", r"\bsoft\b(?! lookup)(?!, hard)", r"\*\*soft\*\* below r ="),
    ("peaked", r"\bpeaked\b", r"\*\*peaked\*\* \(one key clearly takes more than its share\)"),
    ("sharp", r"\bsharp\b", r"\*\*sharp\*\* from r ="),
    ("W_o", r"W_o\b|W_\{?o\}", r"concatenated and mixed by W_o"),
    ("Jensen-Shannon divergence", r"Jensen-Shannon", r"Jensen-Shannon divergence \(JS\) of two heads"),
    (
        "positional encoding",
        r"(?i)positional encoding",
        r"(?i:adds) to each token's embedding a vector that depends on its position",
    ),
    (
        "padding",
        r"(?i)\bpad(s|ded|ding)?\b",
        r"which are padding: filler tokens \(pads\) that make sequences equally long",
    ),
    ("batch", r"(?i)\bbatch", r"a batch \(sequences processed together\)"),
    ("NaN", r"\bNaN\b", r"NaN \(not a number\)"),
    ("attention_core", r"attention_core", r"attention_core \(this app's own attention code\)"),
    ("the largest score subtracted", r"score − max", r"Subtracting the row's largest score"),
    ("Jacobian", r"(?i)jacobian", r"\*\*‖softmax Jacobian‖\*\*: How much a row's weights move"),
    ("twin", r"\btwin\b", r"The same setting with the scaling flipped \(on ↔ off\)"),
    ("Frobenius norm", r"Frobenius", r"Frobenius norm: the square root of the sum of the squared entries"),
    ("sinusoidal", r"(?i)sinusoidal", r"sinusoidal encoding adds to each position a pattern of sines and cosines"),
    ("float64", r"float64", r"float64: the 64-bit numbers the app computes with"),
    ("float32", r"float32", r"float32, 32-bit numbers"),
    ("permutation-equivariant", r"permutation-equivariant", r"permutation-equivariant: shuffling the tokens"),
    ("cross-attention", r"(?i)cross-attention", r"In cross-attention the \*\*queries\*\* come from one sequence"),
    ("encoder", r"(?i)\bencoder", r"the \*\*encoder\*\*: the part of the model that reads"),
    ("layer", r"(?i)\blayers?\b", r"a stack of such blocks, its \*\*layers\*\*"),
    ("residual", r"(?i)residual", r"residual connection \(add the input back\)"),
    ("LayerNorm", r"LayerNorm|\bLN\b", r"LayerNorm \(LN: re-centre and re-scale each token's vector\)"),
    ("MHA", r"\bMHA\b", r"MHA: multi-head attention"),
    ("feed-forward network", r"(?i)feed-forward|\bFFN\b", r"feed-forward network \(FFN: "),
    ("ReLU", r"ReLU", r"ReLU\(x\) = max\(0, x\)"),
    ("bias", r"(?i)\bbias(es)?\b|b_[qk]\b", r"learned vectors added, the \*\*biases\*\*"),
    ("[CLS] / [SEP]", r"CLS|SEP", r"a special token the tokenizer( \([^)]*\))? adds at the start"),
    ("tokenizer", r"(?i)tokeni[sz]er", r"the tokenizer \(the program that cuts text into tokens\)"),
    (
        "previous-token head",
        r"(?i)previous[- ]token",
        r"\*\*Previous token\*\*: layer \d+, head \d+ gives the previous",
    ),
    ("induction head", r"(?i)induction", r"\*induction head\* \(a head that finds the earlier copy"),
    ("loss", r"(?i)\bloss\b", r"The \*\*loss\*\*, the number training makes smaller"),
    ("cross-entropy", r"(?i)cross-entropy", r"cross-entropy of the next token: minus the log of the probability"),
    ("training step", r"\bsteps?\b \d", r"\(a \*\*step\*\*: one update of the weights"),
    ("held-out", r"(?i)held-out", r"held-out loss \(on sequences never trained on\)"),
    ("prefix matching", r"(?i)prefix[- ]matching", r"its \*\*prefix-matching score\*\*"),
    ("optimiser, learning rate", r"AdamW|\blr\b", r"AdamW \(the optimiser: the rule that updates the weights\)"),
    ("vocab", r"(?i)\bvocab", r"vocab \d+ \(kinds of token\)"),
    ("context", r"(?i)\bcontext\b", r"context \d+ \(tokens per sequence\)"),
    ("probe", r"(?i)\bprobe\b", r"(?i)the probe \(a fixed test sequence"),
    ("PCA", r"\bPCA\b|principal", r"PCA \(principal component analysis: "),
    ("RoPE", r"RoPE", r"\*\*rotate\*\* queries and keys by their position \(RoPE"),
    ("ALiBi", r"ALiBi", r"\*\*bias\*\* each score by the distance \(ALiBi\)"),
    ("KV cache", r"\bKV\b|(?i:key/value cache)", r"a cache of keys and values"),
    ("GQA", r"\bGQA\b", r"GQA, grouped-query attention"),
    ("MQA", r"\bMQA\b", r"MQA, multi-query attention"),
    ("FlashAttention", r"FlashAttention", r"FlashAttention, which computes the softmax one tile of keys at a time"),
    ("dtype", r"\bdtype\b", r"The number type: how many bytes one number takes"),
    ("receptive field", r"(?i)receptive field", r"its \*\*receptive field\*\*"),
    ("attention sink", r"(?i)\bsinks?\b", r"\*\*Attention sinks\*\* give it somewhere else to put it"),
    ("StreamingLLM", r"StreamingLLM", r"StreamingLLM \(a way to run a model over an endless stream"),
    ("linear attention", r"(?i)linear attention", r"\*\*Linear attention\*\* drops the softmax"),
    ("RNN", r"\bRNN\b|recurren", r"an RNN \(a recurrent network: it reads one token at a time"),
    ("elu", r"\belu\b", r"elu\(x\) is x for x > 0 and e\^x − 1 below"),
    ("d_v", r"d_v\b", r"d_v being the length of a value vector"),
    ("fused kernel", r"(?i)\bfused\b", r"one fused step \(a single routine"),
    ("T, the number of tokens", r"\^\{T \\times|\bT = \d", r"a row for each of the T tokens|T counts the tokens"),
    ("variance", r"\bVar\b|(?i:\bvariance\b)|vary by", r"Var, the variance, is the spread squared"),
    ("d_ff", r"\bd_ff\b|d_\{ff\}", r"d_ff, the feed-forward hidden layer's width"),
    ("output_attentions", r"output_attentions", r"output_attentions` \(the weights the model itself reports\)"),
    ("learning rate", r"(?i)learning rate", r"learning rate lr [\d.e-]+ \(how far one step moves the weights\)"),
    ("phase change", r"(?i)phase change", r"\*\*phase change\*\* \(after a long plateau the model's"),
    ("previous-token score", r"(?i)previous-token score", r"previous-token score is its mean weight on the token just"),
    ("circuit", r"(?i)\bcircuit", r"circuit \(heads of two layers working as one\)"),
    ("interleaved pairing", r"(?i)interleaved", r"rotates each pair of dimensions \(2t, 2t\+1\)"),
    ("wpe", r"\bwpe\b", r"GPT-2's position table, wpe"),
    ("nn.Embedding", r"nn\.Embedding", r"nn\.Embedding`, PyTorch's table of one learned row per index"),
]


def _seen(page: str, node, out: list[Seen]) -> None:
    """Append what ``node`` shows, depth first, in the order Streamlit draws it."""
    if isinstance(node, et.Block):
        if isinstance(node, et.Expander):
            out.append(Seen(page, "expander", node.label))
        elif isinstance(node, et.Tab):
            out.append(Seen(page, "tab", node.label))
        for k in sorted(node.children):
            _seen(page, node.children[k], out)
        return
    proto = getattr(node, "proto", None)
    kind = getattr(node, "type", "")
    if isinstance(node, et.Latex):
        out.append(Seen(page, "latex", node.value))
    elif isinstance(node, et.Markdown):  # markdown and captions (a divider is a rule)
        if kind != "divider":
            out.append(Seen(page, kind, node.value))
    elif isinstance(node, et.HeadingBase):  # title, header, subheader, with their help
        out.append(Seen(page, kind, f"{node.value} {proto.help}".strip()))
    elif isinstance(node, et.AlertBase):
        out.append(Seen(page, kind, node.value))
    elif isinstance(node, et.Metric):
        out.append(Seen(page, "metric", f"{proto.label} {proto.help}".strip()))
    elif isinstance(node, et.Image):  # a diagram drawn as SVG (ui/draw/diagrams.py) is read by its words, its alt
        out += [Seen(page, "diagram", img.alt) for img in proto.imgs if img.url.startswith("data:image/svg+xml")]
        out += [Seen(page, "image", img.caption) for img in proto.imgs if img.caption]
    elif isinstance(node, (et.Dataframe, et.Table)):
        frame = node.value
        columns = json.loads(proto.columns) if getattr(proto, "columns", "") else {}
        helps = [c.get("help", "") for c in columns.values() if isinstance(c, dict)]
        cells = [str(v) for col in frame.columns if frame[col].dtype == object for v in frame[col]]
        out.append(Seen(page, "table", " | ".join([*map(str, frame.columns), *helps, *cells])))
    elif kind in ("vega_lite_chart", "arrow_vega_lite_chart"):
        title = json.loads(proto.spec).get("title")
        text = title.get("text", "") if isinstance(title, dict) else title or ""
        out.append(Seen(page, "chart", text if isinstance(text, str) else " ".join(text)))
    elif kind in ("page_link", "html", "code", "bidi_component", "empty", "divider"):
        pass  # previews of pages, styles, source code, the model view's canvas
    elif proto is not None and hasattr(proto, "label"):  # a widget: its label and its help, read together
        out.append(Seen(page, "widget", f"{proto.label} {getattr(proto, 'help', '')}".strip()))


def page_text(path: str) -> list[Seen]:
    """What one page shows at its default setting, in reading order: the main area, then the sidebar."""
    at = run_ok(app(path, timeout=300))
    label = "Home" if path == HOME else next(p.label for p in PAGES if p.path == path)
    out: list[Seen] = []
    _seen(label, at._tree.children[0], out)  # the main area
    _seen(label, at._tree.children[1], out)  # the sidebar (its page list is links, skipped)
    previews = {p.teaches for p in PAGES}
    out = [s for s in out if s.text.strip() and s.text.strip() not in previews]
    merged: list[Seen] = []
    heading = ""
    for s in out:  # a heading (a title, a subheader, a card's bold name) is read with what comes under it
        if s.kind in ("title", "header", "subheader") or re.fullmatch(r"\*\*[^*]+\*\*", s.text.strip()):
            heading = f"{heading} {s.text}".strip()
            continue
        merged.append(s._replace(text=f"{heading} {s.text}") if heading else s)
        heading = ""
    return merged


def late_terms(seen: list[Seen], terms=TERMS) -> list[str]:
    """One sentence per term that is used before it is defined, never defined, or no longer used."""
    problems = []
    for term, use, definition in terms:
        uses = [i for i, s in enumerate(seen) if re.search(use, s.text)]
        defs = [i for i, s in enumerate(seen) if re.search(definition, s.text)]
        if not uses:
            problems.append(f"{term!r} is no longer used: take it off the list")
            continue
        first = seen[uses[0]]
        deadline = uses[0]
        if first.kind == "latex":  # a formula's symbols may be explained under it, on its page
            deadline = max(i for i, s in enumerate(seen) if s.page == first.page)
        if not defs:
            problems.append(f"{term!r} is never defined; first used on {first.page} ({first.kind}): {first.text!r}")
        elif defs[0] > deadline:
            where = seen[defs[0]]
            problems.append(
                f"{term!r} is used on {first.page} ({first.kind}: {first.text[:160]!r}) before it is defined on "
                f"{where.page} ({where.kind}: {where.text[:160]!r}). Move {first.page} after {where.page} in "
                "ui/skeleton/registry.PAGES, or define the word where it is first used (ui.glossary.defined; the pattern "
                "that counts as its definition is in TERMS, tests/test_reading_order.py)"
            )
    return problems


@pytest.fixture(scope="module")
def reading() -> list[Seen]:
    """Home and every page in reading order, each at its default setting."""
    seen: list[Seen] = []
    for path in (HOME, *(p.path for p in PAGES)):
        seen += page_text(path)
    return seen


@pytest.mark.parametrize("term", [t[0] for t in TERMS])
def test_every_term_is_defined_no_later_than_its_first_use(reading, term):
    entry = [t for t in TERMS if t[0] == term]
    problems = late_terms(reading, entry)
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_definition_that_comes_late_or_goes_missing():
    terms = [("softmax", r"softmax", r"\*\*softmax\*\* turns")]
    defined = [Seen("Home", "markdown", "the **softmax** turns scores into weights"), Seen("P", "caption", "softmax")]
    assert late_terms(defined, terms) == []
    late = [defined[1], defined[0]]
    assert "before it is defined" in late_terms(late, terms)[0]
    assert "never defined" in late_terms(defined[1:], terms)[0]
    formula = [Seen("P", "latex", r"\mathrm{softmax}(x)"), Seen("P", "markdown", "the **softmax** turns x")]
    assert late_terms(formula, terms) == []  # explained under its formula, on its page
    other_page = [formula[0], formula[1]._replace(page="Q")]
    assert "before it is defined" in late_terms(other_page, terms)[0]
