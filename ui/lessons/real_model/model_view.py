"""The Real model page's model view: all L x H heads drawn on one canvas in the browser, with hover.

BertViz draws every head as SVG lines and slows down towards 512 tokens; 72 Vega charts would be no better.
Here the weights travel once as bytes (uint8, deflated: 0.004 steps of the 0-1 scale, the colour map's own
resolution) and ``model_view.js`` paints them into a canvas, a tile per head, and answers hover with
the layer, head, query, key and weight. No build step, nothing fetched: the module is read from its file.

Shapes: L layers, H heads, T tokens.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import streamlit as st

from ui.draw.images import _LUTS

_JS = (Path(__file__).with_name("model_view.js")).read_text()
_CSS = """
.mv { position: relative; display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.mv-grid { width: 100%; height: auto; image-rendering: pixelated; cursor: crosshair; }
.mv-side { max-width: 512px; }
.mv-detail { width: 100%; height: auto; image-rendering: pixelated; cursor: crosshair; }
.mv-label { font: 13px sans-serif; color: #555; }
.mv-tip { display: none; position: absolute; z-index: 5; pointer-events: none; max-width: 250px;
  background: #fff; border: 1px solid #999; padding: 4px 6px; font: 13px sans-serif; color: #111; }
"""
_COMPONENT = st.components.v2.component("attention_model_view", html="", css=_CSS, js=_JS)
# The layer and head pickers' choice, sent apart from the weights (a few bytes, where a new payload would resend
# megabytes): the view draws that head enlarged until the pointer hovers another.
_PICK_JS = """
export default function ({ data }) {
  if (!data) return;
  window.__attentionModelViewPick = data;
  window.dispatchEvent(new CustomEvent("attention-model-view-pick", { detail: data }));
}
"""
_PICK = st.components.v2.component("attention_model_view_pick", html="", js=_PICK_JS)


def model_view_payload(attn: np.ndarray, tokens, description: str) -> bytes:
    """The bytes the canvas reads: a JSON header (shape, tokens, colour map) and the deflated uint8 weights.

    ``attn`` (L, H, T, T) weights in [0, 1]; each is sent as round(weight * 255)."""
    attn = np.asarray(attn)
    L, H, T, T2 = attn.shape
    if T2 != T or len(tokens) != T:
        raise ValueError(f"attn must be (L, H, T, T) with T = {len(tokens)} tokens; got {attn.shape}")
    q = np.rint(np.clip(attn, 0.0, 1.0) * 255).astype(np.uint8)  # (L, H, T, T)
    packed = zlib.compress(q.tobytes(), 3)  # level 3: 2.6 MB in 0.2 s at 512 tokens (level 6: 2.0 MB, 0.75 s)
    header = {
        "L": L,
        "H": H,
        "T": T,
        "tokens": [str(t) for t in tokens],
        "lut": _LUTS["viridis"].reshape(-1).tolist(),
        "description": description,
        "key": hashlib.blake2b(packed + "\x00".join(map(str, tokens)).encode(), digest_size=12).hexdigest(),
    }
    head = json.dumps(header, ensure_ascii=False).encode()
    return struct.pack("<I", len(head)) + head + packed


def decode_payload(data: bytes) -> tuple[dict, np.ndarray]:
    """(header, (L, H, T, T) uint8 weights) of a payload: what the browser reads, for tests and benchmarks."""
    (n,) = struct.unpack("<I", data[:4])
    header = json.loads(data[4 : 4 + n])
    L, H, T = header["L"], header["H"], header["T"]
    return header, np.frombuffer(zlib.decompress(data[4 + n :]), dtype=np.uint8).reshape(L, H, T, T)


def show_model_view(payload: bytes, key: str) -> None:
    """Mount the canvas model view with a payload from :func:`model_view_payload`."""
    _COMPONENT(key=key, data=payload, height="content")


def pick_model_view_head(layer: int, head: int, key: str) -> None:
    """Tell the model view which head the page's pickers name (0-based): it is drawn enlarged, with its tokens."""
    _PICK(key=key, data={"layer": int(layer), "head": int(head)}, height="content")
