"""What the Real model page shows of a pretrained model on a sentence, as one run object; and the neuron
view's arithmetic (how one weight is made from a query and a key).

Shapes: L layers, H heads, T tokens, d_k head width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_positive_int
from .attention import score_factor
from .hf import SUPPORTED, ModelRun, recompute_layer, run_model
from .masks import causal_mask
from .softmax import softmax

MODEL_MAX_TOKENS = 128  # a typed sentence is cut to this many model tokens unless the page asks for more
TOKEN_LIMITS = (16, 32, 64, 128, 256, 512)  # what the page offers; 512 is the embedded model's longest input


@dataclass(frozen=True)
class AttentionRun:
    """Attention to look at: a model's heads on a sentence."""

    name: str  # the model id or folder
    tokens: tuple[str, ...]  # (T,) display text of each token
    special: np.ndarray  # (T,) bool, True for [CLS], [SEP], <|endoftext|>, ...
    attentions: np.ndarray  # (L, H, T, T) the weights shown (the model's own output_attentions)
    causal: bool  # queries see only earlier keys
    q: np.ndarray | None  # (L, H, T, d_k) queries the weights come from; None if the architecture is not parsed
    k: np.ndarray | None  # (L, H, T, d_k) keys
    scale: float  # q . k is multiplied by this before the temperature: 1/sqrt(d_k), or 1 with scaling off
    temperature: float  # divides the scaled logits (1 for a model)
    mask: np.ndarray | None  # (T, T) True = may attend, or None when every key is visible
    parity: np.ndarray | None  # (L,) max |attention_core - model| per layer, None when not recomputed
    no_parity: str  # why there is no parity, for the page ("" when there is)
    truncated: bool  # the sentence was cut to max_tokens tokens
    sentence_tokens: int  # how many tokens the whole sentence has (special tokens included), before any cut

    @property
    def shape(self) -> tuple[int, int, int]:
        """(L, H, T)."""
        L, H, T, _ = self.attentions.shape
        return L, H, T


@dataclass(frozen=True)
class ModelForward:
    """A sentence through a model, before attention_core recomputes anything: all the model view needs."""

    run: ModelRun  # tokens, the model's own weights and what each attention layer received
    sentence_tokens: int  # how many tokens the whole sentence has (special tokens included), before any cut
    max_tokens: int  # the cut


def model_forward(model, tokenizer, text: str, max_tokens: int = MODEL_MAX_TOKENS) -> ModelForward:
    """Run ``text`` (cut to ``max_tokens`` model tokens) through a Hugging Face model and keep its weights."""
    max_tokens = check_positive_int("max_tokens", max_tokens)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must contain at least one character that is not a space; got {text!r}")
    run = run_model(model, tokenizer, text, max_tokens=max_tokens)
    sentence_tokens = len(tokenizer(text, verbose=False)["input_ids"])  # verbose: no warning past 512
    return ModelForward(run, sentence_tokens, max_tokens)


def attention_run(model, forward: ModelForward, recompute: bool = True) -> AttentionRun:
    """The :class:`AttentionRun` of a forward pass; with ``recompute`` attention_core recomputes every layer's q, k
    and weights from the layer's input (the parity), else q, k and parity are None (a view of the weights alone)."""
    run = forward.run
    L, H, T, _ = run.attentions.shape
    q = k = parity = None
    if recompute and run.layer_inputs is not None:
        layers = [recompute_layer(model, run, i) for i in range(L)]
        q = np.stack([r.q for r in layers]).astype(np.float32)  # (L, H, T, d_k)
        k = np.stack([r.k for r in layers]).astype(np.float32)  # (L, H, T, d_k)
        parity = np.array([r.max_diff for r in layers])  # (L,)
    if parity is not None:
        why = ""
    elif run.layer_inputs is None:
        why = f"Parity and the neuron view are computed for {SUPPORTED}."
    else:
        why = "attention_core has not recomputed this run (recompute=False)."
    return AttentionRun(
        model.config.name_or_path or "model",
        tuple(run.tokens),
        run.special,
        run.attentions,
        run.causal,
        q,
        k,
        score_factor(q.shape[-1]) if q is not None else 1.0,
        1.0,
        causal_mask(T) if run.causal else None,
        parity,
        why,
        forward.sentence_tokens > forward.max_tokens,
        forward.sentence_tokens,
    )


def model_attention_run(model, tokenizer, text: str, max_tokens: int = MODEL_MAX_TOKENS) -> AttentionRun:
    """Run ``text`` through a Hugging Face model and recompute every layer's q, k and weights with attention_core.

    Args:
        model, tokenizer: from :func:`attention_core.hf.load_pretrained`.
        text: the sentence; cut to ``max_tokens`` model tokens.

    Returns:
        :class:`AttentionRun` with q, k (float32) and the per-layer parity for the architectures in
        ``attention_core.hf.SUPPORTED`` (None for others).
    """
    return attention_run(model, model_forward(model, tokenizer, text, max_tokens))


@dataclass(frozen=True)
class NeuronView:
    """How the weight of query ``qi`` on key ``kj`` is made (one head of one layer)."""

    q: np.ndarray  # (d_k,) the query vector
    k: np.ndarray  # (d_k,) the key vector
    products: np.ndarray  # (d_k,) q * k, dimension by dimension
    dot: float  # q . k, the sum of the products
    logit: float  # q . k * scale / temperature
    row: np.ndarray  # (T,) the query's weights over every key (softmax of its logits)
    weight: float  # row[kj]
    visible: int  # keys the query may attend to


def neuron_view(arun: AttentionRun, layer: int, head: int, qi: int, kj: int) -> NeuronView:
    """Recompute one weight from q and k the way attention_core does: softmax(k q * scale / temperature).

    Raises ValueError when ``arun`` has no q and k, or an index is out of range.
    """
    if arun.q is None or arun.k is None:
        raise ValueError(f"this run has no q and k (they are read for {SUPPORTED})")
    L, H, T = arun.shape
    for name, value, n in (("layer", layer, L), ("head", head, H), ("qi", qi, T), ("kj", kj, T)):
        if not isinstance(value, (int, np.integer)) or not 0 <= value < n:
            raise ValueError(f"{name}={value!r} is not allowed; it must be an integer from 0 to {n - 1}")
    q_all = arun.q[layer, head].astype(np.float64)  # (T, d_k)
    k_all = arun.k[layer, head].astype(np.float64)  # (T, d_k)
    allowed = arun.mask[qi] if arun.mask is not None else np.ones(T, dtype=bool)  # (T,)
    q, k = q_all[qi], k_all[kj]  # (d_k,)
    row = softmax(k_all @ q * arun.scale, temperature=arun.temperature, where=allowed)  # (T,)
    products = q * k  # (d_k,)
    dot = float(products.sum())
    return NeuronView(q, k, products, dot, dot * arun.scale / arun.temperature, row, float(row[kj]), int(allowed.sum()))
