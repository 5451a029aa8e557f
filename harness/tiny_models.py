"""Tiny BERT-style and GPT-2-style models built from configs (random weights) with a small vocabulary
written here, saved to a folder: the Real model page loads them by path. Nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

from attention_core.config import DEFAULT_SENTENCE

WORDS = sorted(
    {w.strip(".,").lower() for w in DEFAULT_SENTENCE.split()} | {"the", "cat", "sat", "on", "mat", "'", "t", "n"}
)


def make_tiny_bert(folder: Path, hidden: int = 32, layers: int = 2, heads: int = 4) -> Path:
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", "##n", "##'", "##t"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    try:  # transformers 5 takes the vocabulary itself
        tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True)
    except TypeError:  # older releases take a file path
        tok = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet: every byte maps to a printable character."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def make_tiny_gpt2(folder: Path) -> Path:
    import torch
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    alphabet = sorted(set(_bytes_to_unicode().values()))
    merges = [("h", "e"), ("t", "he"), ("Ġ", "the"), ("i", "t"), ("Ġ", "it"), ("a", "n"), ("Ġ", "a")]
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(f"{a} {b}" for a, b in merges) + "\n")
    try:  # transformers 5 takes the vocabulary and merges themselves
        tok = GPT2TokenizerFast(vocab=vocab, merges=[(a, b) for a, b in merges])
    except TypeError:  # older releases take file paths
        tok = GPT2TokenizerFast(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"))
    torch.manual_seed(1)
    eos = vocab["<|endoftext|>"]
    config = GPT2Config(
        vocab_size=len(vocab), n_embd=32, n_layer=2, n_head=4, n_positions=256, bos_token_id=eos, eos_token_id=eos
    )
    GPT2Model(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder
