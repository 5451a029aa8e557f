"""Every element every page draws, as one JSON file: the guard that keeps a refactor's behaviour identical.

Each page of the registry (ui/skeleton/registry.py) is opened in ``streamlit.testing.v1.AppTest`` at three settings:
the default, the smallest the shared controls allow (one head, d_model 2, two tokens, temperature 0.1) and the
largest (16 heads, d_model 256, 64 tokens, temperature 10, a causal mask with padding), with the page's own
link controls at their ends too (``PAGE_EXTREMES``). A page clamps what it does not offer, with a notice, and the
notice is part of the snapshot. Every element is written out: its type,
its label, its value, its text, a table's rows, a Vega-Lite chart's spec with its datasets read back from Arrow,
an image's caption and address (the address is a digest of its bytes). Widget ids (hashes of the widget's
arguments), download ids and Arrow bytes are left out: the decoded rows and the labels say what a learner sees.
Measured times change from run to run: a sentence that states one (``0.171 ms``) and a table column named
``... (ms)`` are written as ``<timing>``.

Everything is seeded, so two runs of the same code give the same file. Take a snapshot before a change and one
after, and compare them::

    python scripts/page_snapshots.py /tmp/snap_before.json
    ... change the code ...
    python scripts/page_snapshots.py /tmp/snap_after.json
    python scripts/page_snapshots.py --compare /tmp/snap_before.json /tmp/snap_after.json

``--pages Masks,Train`` limits the run to pages whose file name contains one of the words.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETTINGS = {
    "default": {},
    "smallest": {"seq_len": "2", "d_model": "2", "heads": "1", "temperature": "0.1", "seed": "0"},
    "largest": {
        "seq_len": "64",
        "d_model": "256",
        "heads": "16",
        "temperature": "10",
        "mask": "causal+padding",
        "pad": "63",
        "seed": "2147483647",
    },
}
# a page's own controls (ui/skeleton/page_params.PageParam) at their extremes too, by the page's file name; values past a
# control's limits are fitted to them, with the page's notice
PAGE_EXTREMES = {
    "Efficient_attention.py": {
        "smallest": {"kv": "1", "step": "1", "window": "1", "layers": "1", "tile": "1", "fq": "1", "ctx": "1"},
        "largest": {"step": "512", "window": "512", "layers": "99", "tile": "512", "fq": "512", "ctx": "99999999"},
    },
    "Sinks_and_linear_attention.py": {
        "smallest": {"nosink": "1", "n_sink": "0", "window": "1"},
        "largest": {"n_sink": "64", "window": "512", "sinks": "10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10"},
    },
    "Positions.py": {
        "smallest": {"method": "learned", "base": "100", "train_len": "1", "head": "1"},
        "largest": {"method": "alibi", "base": "1000000", "train_len": "512", "head": "16"},
    },
    "Soft_lookup.py": {"smallest": {"query": "0", "tau": "0.1"}, "largest": {"query": "1", "tau": "10", "twin": "1"}},
    "Real_model.py": {"smallest": {"tokens": "16"}, "largest": {"tokens": "512"}},
}
DROPPED = {"id", "form_id", "element_id", "deferred_file_id"}  # hashes of a widget's arguments; a download's id
TIMING = re.compile(r"\d ms\b")  # a measured time (the Implementations page times each implementation)


def _untimed(text: str) -> str:
    """``text`` with each sentence that states a measured time replaced by a marker: times differ run to run."""
    if not TIMING.search(text):
        return text
    return ". ".join("<timing>" if TIMING.search(part) else part for part in text.split(". "))


def _plain(v):
    """A JSON-ready copy of a decoded value: NaN and infinities as text, numpy scalars as Python numbers."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            return str(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, str):
        return _untimed(v)
    if v is None or isinstance(v, (int, bool)):
        return v
    return str(v)


def _frame(arrow: bytes) -> dict:
    """Arrow IPC bytes as {columns, index, data}."""
    from streamlit import dataframe_util

    df = dataframe_util.convert_arrow_bytes_to_pandas_df(arrow)
    for column in df.columns:
        if "(ms)" in str(column):  # measured times
            df[column] = "<timing>"
    split = df.to_dict("split")
    return _plain({"columns": split["columns"], "index": split["index"], "data": split["data"]})


def _repeated(field) -> bool:
    flag = getattr(field, "is_repeated", None)
    return bool(flag) if flag is not None else field.label == field.LABEL_REPEATED


def _proto(msg) -> dict:
    """A protobuf message as a dict, with Arrow bytes decoded, JSON strings parsed and ids left out."""
    out = {}
    for field, value in msg.ListFields():
        name = field.name
        if name in DROPPED:
            continue
        if field.type == field.TYPE_MESSAGE:
            if _repeated(field):
                if hasattr(value, "keys"):  # a map field
                    out[name] = {
                        str(k): (_proto(v) if hasattr(v, "ListFields") else _plain(v)) for k, v in value.items()
                    }
                else:
                    out[name] = [_proto(v) for v in value]
            else:
                out[name] = _proto(value)
        elif field.type == field.TYPE_BYTES:
            try:
                out[name] = _frame(value) if value else ""
            except Exception:  # not Arrow: keep a digest of the bytes
                import hashlib

                out[name] = "bytes:" + hashlib.sha256(value).hexdigest()[:16]
        elif field.type == field.TYPE_STRING and name in ("spec", "json_args", "json", "figure") and value:
            try:
                out[name] = _plain(json.loads(value))
            except ValueError:
                out[name] = value
        else:
            out[name] = _plain(list(value) if _repeated(field) else value)
    return out


def _walk(node) -> list:
    """The element tree under ``node`` in drawing order: blocks as {block, proto, children}, elements as {type, proto}."""
    from streamlit.testing.v1.element_tree import Block

    out = []
    for key in sorted(node.children):
        child = node.children[key]
        proto = _proto(child.proto) if getattr(child, "proto", None) is not None else None
        if isinstance(child, Block):
            out.append({"block": child.type, "proto": proto, "children": _walk(child)})
        else:
            out.append({"type": child.type, "proto": proto})
    return out


VOLATILE_TYPES = {"toast", "spinner"}


def _drop_volatile(tree: list) -> list:
    kept = []
    for e in tree:
        if e.get("type") in VOLATILE_TYPES:
            continue
        if "children" in e:
            e = {**e, "children": _drop_volatile(e["children"])}
        kept.append(e)
    return kept


def snapshot_page(path: str, query: dict) -> dict:
    from tests.apptest_util import app

    at = app(path, query, timeout=600)
    at.run()
    return {
        "exception": [str(e.value) for e in at.exception],
        "query_params": {k: at.query_params[k] for k in sorted(at.query_params)},
        "tree": _drop_volatile(_walk(at._tree.children[0])) if 0 in at._tree.children else [],
        "sidebar": _drop_volatile(_walk(at._tree.children[1])) if 1 in at._tree.children else [],
    }


def snapshot(words: list[str]) -> dict:
    from ui.skeleton.registry import PAGES

    out = {}
    for page in PAGES:
        if words and not any(w in page.path for w in words):
            continue
        own = PAGE_EXTREMES.get(Path(page.path).name, {})
        for setting, query in SETTINGS.items():
            print(f"{page.path} {setting}", file=sys.stderr, flush=True)
            out[f"{page.path} {setting}"] = snapshot_page(page.path, query | own.get(setting, {}))
    return out


def _count(tree: list) -> int:
    return sum(1 + _count(e.get("children", [])) for e in tree)


def _diff(a, b, where: str, out: list, limit: int = 40) -> None:
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            _diff(a.get(k, "<missing>"), b.get(k, "<missing>"), f"{where}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{i}]", out, limit)
    else:
        out.append(f"{where}: {str(a)[:200]} -> {str(b)[:200]}")


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    elements = sum(_count(v["tree"]) + _count(v["sidebar"]) for v in a.values())
    diffs = []
    for key in sorted(set(a) | set(b)):
        _diff(a.get(key), b.get(key), key, diffs)
    print(f"{len(a)} page x setting runs, {elements} elements; {len(diffs)} differences (first 40 shown)")
    print("\n".join(diffs))
    return 1 if diffs else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="the JSON file to write")
    ap.add_argument("--pages", default="", help="comma-separated words: only pages whose path contains one")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two snapshots")
    args = ap.parse_args()
    if args.compare:
        return compare(Path(args.compare[0]), Path(args.compare[1]))
    if not args.out:
        ap.error("give the file to write, or --compare BEFORE AFTER")
    data = snapshot([w for w in args.pages.split(",") if w])
    Path(args.out).write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
