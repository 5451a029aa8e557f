"""Real transformers: load a Hugging Face model, read its attention, and recompute it with attention_core.

``transformers`` is imported only inside these functions (the toy pages never need it). Loading is
local-first: a folder with config.json is loaded from disk; a model id goes to the Hugging Face hub.
Weights are loaded from safetensors only (no pickle), and remote code is never trusted.

Shapes: L layers, H heads, T tokens, d_k head width.
"""

from __future__ import annotations

import math
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

from .attention import scaled_dot_product_attention, split_heads
from .embedded import EMBEDDED_ID, EmbeddedModelError, embedded_folder
from .masks import causal_mask

SUPPORTED = "BERT-style encoders (bert, roberta, electra, ...), DistilBERT and GPT-2"


class ModelLoadError(Exception):
    """A model could not be loaded; the message says why, for the page."""


def hub_reachable(timeout: float = 3.0) -> bool:
    """Can we open a connection to the Hugging Face hub? (Its client retries for ~50 s when offline.)"""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        socket.create_connection((endpoint.hostname, endpoint.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _from_pretrained(name: str, **kw):
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name, **kw)
    model = AutoModel.from_pretrained(name, attn_implementation="eager", use_safetensors=True, **kw)
    return model, tokenizer


def load_pretrained(name_or_path: str):
    """(model, tokenizer) in eval mode with attention weights returned ("eager" attention).

    Order: the embedded model (``attention_core.embedded.EMBEDDED_ID``: the pinned package's folder, checked
    file by file first); a local folder; else the local Hugging Face cache; else the hub, if it can be reached."""
    try:
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - transformers is in requirements.txt
        raise ModelLoadError(f"transformers is not installed ({exc}); pip install -r requirements.txt") from None
    name = name_or_path.strip()
    if not name:
        raise ModelLoadError("Type a Hugging Face model id (like gpt2) or the path of a local model folder.")
    if name == EMBEDDED_ID:
        try:
            name = str(embedded_folder())
        except EmbeddedModelError as exc:
            raise ModelLoadError(str(exc)) from None
    local = Path(name).expanduser()
    if local.is_dir() and not (local / "config.json").is_file():
        raise ModelLoadError(f"The folder {name} has no config.json; save a model there with save_pretrained().")
    try:
        if local.is_dir():
            model, tokenizer = _from_pretrained(str(local), local_files_only=True)
        else:
            try:
                model, tokenizer = _from_pretrained(name, local_files_only=True)  # already downloaded once
            except OSError:
                if not hub_reachable():
                    raise ModelLoadError(
                        f"Could not load {name!r}: it is not a local folder, not in the local Hugging Face cache, and "
                        "the Hugging Face hub cannot be reached from this server (no network)."
                    ) from None
                model, tokenizer = _from_pretrained(name)
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(
            f"Could not load {name!r}: no local folder by that name, and the Hugging Face hub did not provide it "
            f"(no network, an unknown id, or no safetensors weights). Details: {first[:300]}"
        ) from None
    except (ValueError, KeyError, ImportError, RuntimeError) as exc:
        raise ModelLoadError(f"Could not load {name!r}: {str(exc).splitlines()[0][:300]}") from None
    model.eval()
    return model, tokenizer


def _attention_modules(model):
    """[(module, kind)] for every layer's self-attention, or None for an architecture we do not parse."""
    enc = getattr(model, "encoder", None)
    if (
        enc is not None
        and hasattr(enc, "layer")
        and hasattr(enc.layer[0], "attention")
        and hasattr(enc.layer[0].attention, "self")
    ):
        return [(layer.attention.self, "bert") for layer in enc.layer]
    if getattr(model.config, "model_type", "") == "gpt2":
        return [(block.attn, "gpt2") for block in model.h]
    if getattr(model.config, "model_type", "") == "distilbert":
        return [(layer.attention, "distilbert") for layer in model.transformer.layer]
    return None


@dataclass(frozen=True)
class ModelRun:
    """One sentence through a model."""

    tokens: list[str]  # (T,) display text of each token
    special: np.ndarray  # (T,) bool, True for [CLS], [SEP], <|endoftext|>, ...
    attentions: np.ndarray  # (L, H, T, T) the model's own output_attentions
    layer_inputs: list[np.ndarray] | None  # L x (T, d_model): what each attention layer received
    kinds: list[str] | None  # per layer: "bert", "gpt2" or "distilbert"
    causal: bool
    n_heads: int


def run_model(model, tokenizer, text: str, max_tokens: int = 128) -> ModelRun:
    """Tokenise ``text`` (cut to ``max_tokens``), run the model and capture each attention's input."""
    import torch

    enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=max_tokens)
    modules = _attention_modules(model)
    captured: dict[int, torch.Tensor] = {}
    hooks = []
    if modules is not None:
        for i, (mod, _) in enumerate(modules):

            def hook(module, args, kwargs, i=i):
                x = args[0] if args else kwargs.get("hidden_states", kwargs.get("query"))
                captured[i] = x.detach()

            hooks.append(mod.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        with torch.inference_mode():
            out = model(**enc, output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
    ids = enc["input_ids"][0].tolist()
    raw = tokenizer.convert_ids_to_tokens(ids)
    tokens = [(tokenizer.convert_tokens_to_string([t]).strip() or t) for t in raw]
    special_ids = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}  # an unknown word is still a word
    attn = np.stack([a[0].float().numpy() for a in out.attentions])  # (L, H, T, T)
    kinds = None if modules is None else [k for _, k in modules]
    inputs = None
    if modules is not None and len(captured) == len(modules):
        inputs = [captured[i][0].double().numpy() for i in range(len(modules))]
    causal = getattr(model.config, "model_type", "") == "gpt2" or bool(getattr(model.config, "is_decoder", False))
    return ModelRun(tokens, np.array([i in special_ids for i in ids]), attn, inputs, kinds, causal, attn.shape[1])


def projections(model, layer: int):
    """(W_q, b_q, W_k, b_k, W_v, b_v) of one layer in the ``x @ W + b`` convention, float64."""
    modules = _attention_modules(model)
    if modules is None:
        raise ValueError(f"parity is implemented for {SUPPORTED}; this model is {model.config.model_type!r}")
    mod, kind = modules[layer]

    def lin(linear):
        b = linear.bias.detach().double().numpy() if linear.bias is not None else 0.0
        return linear.weight.detach().double().numpy().T, b

    if kind == "bert":
        return (*lin(mod.query), *lin(mod.key), *lin(mod.value))
    if kind == "distilbert":
        return (*lin(mod.q_lin), *lin(mod.k_lin), *lin(mod.v_lin))
    w = mod.c_attn.weight.detach().double().numpy()  # GPT-2 Conv1D: (d, 3d), already x @ W
    b = mod.c_attn.bias.detach().double().numpy()
    d = w.shape[0]
    return w[:, :d], b[:d], w[:, d : 2 * d], b[d : 2 * d], w[:, 2 * d :], b[2 * d :]


@dataclass(frozen=True)
class LayerRecompute:
    """One layer's attention recomputed by attention_core from the layer's own input and weights."""

    q: np.ndarray  # (H, T, d_k) queries x W_q + b_q, split into heads
    k: np.ndarray  # (H, T, d_k) keys
    weights: np.ndarray  # (H, T, T) softmax(q k^T / sqrt(d_k)), causal for GPT-2
    max_diff: float  # max |weights - the model's output_attentions| over the layer's heads
    scale: float  # 1 / sqrt(d_k)


def recompute_layer(model, run: ModelRun, layer: int) -> LayerRecompute:
    """Recompute one layer's attention with attention_core from the layer's own input and weights.

    Reference::

        x = the hidden states the layer's attention received     # (T, d_model)
        q, k, v = split_heads(x @ W + b) for each projection     # (H, T, d_k)
        _, weights = scaled_dot_product_attention(q, k, v, mask=causal or None)   # (H, T, T)

    Raises ValueError for an architecture whose layers are not parsed (see SUPPORTED) or a bad layer.
    """
    if run.layer_inputs is None:
        raise ValueError(f"parity is implemented for {SUPPORTED}")
    if not isinstance(layer, (int, np.integer)) or not 0 <= layer < len(run.layer_inputs):
        raise ValueError(f"layer={layer!r} is not allowed; it must be an integer from 0 to {len(run.layer_inputs) - 1}")
    x = run.layer_inputs[layer]  # (T, d_model)
    w_q, b_q, w_k, b_k, w_v, b_v = projections(model, layer)
    H = run.n_heads
    q, k, v = (split_heads(x @ w + b, H) for w, b in ((w_q, b_q), (w_k, b_k), (w_v, b_v)))  # (H, T, d_k)
    mask = causal_mask(x.shape[0]) if run.causal else None  # (T, T)
    _, weights = scaled_dot_product_attention(q, k, v, mask=mask)  # (H, T, T)
    return LayerRecompute(
        q, k, weights, float(np.abs(weights - run.attentions[layer]).max()), 1 / math.sqrt(q.shape[-1])
    )


def hide_special(weights: np.ndarray, special: np.ndarray) -> np.ndarray:
    """Drop special tokens' rows and columns and renormalise each row to sum 1 (a display choice)."""
    keep = ~np.asarray(special, dtype=bool)
    w = weights[..., keep, :][..., :, keep]
    total = w.sum(axis=-1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)
