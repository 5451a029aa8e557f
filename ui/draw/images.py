"""Heatmaps as PNG images (for large matrices and the home page): a colour lookup table, mean
pooling and the encoder. Imports only NumPy and Pillow, so a page that needs no chart library
loads fast."""

from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image

# viridis anchors (matplotlib's colormap sampled at 9 points) for the image fallback
_VIRIDIS = np.array(
    [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 144, 141],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ],
    dtype=np.float64,
)
_DIVERGING = np.array(
    [[5, 48, 97], [67, 147, 195], [209, 229, 240], [247, 247, 247], [253, 219, 199], [214, 96, 77], [103, 0, 31]],
    dtype=np.float64,
)


def _lut(anchors: np.ndarray, n: int = 256) -> np.ndarray:
    xs = np.linspace(0, 1, len(anchors))
    t = np.linspace(0, 1, n)
    return np.stack([np.interp(t, xs, anchors[:, c]) for c in range(3)], 1).astype(np.uint8)  # (n, 3)


_LUTS = {"viridis": _lut(_VIRIDIS), "diverging": _lut(_DIVERGING)}


def lut(name: str) -> np.ndarray:
    """The colour lookup table ``(256, 3)`` uint8 of "viridis" or "diverging" (the live maps draw with it too)."""
    return _LUTS[name]


def pool(m: np.ndarray, max_px: int) -> tuple[np.ndarray, tuple[int, int]]:
    """Mean-pool a 2-D array so that no side exceeds ``max_px`` (rows and columns pooled separately);
    returns (pooled, (row factor, column factor))."""
    fr = int(np.ceil(m.shape[0] / max_px)) if m.shape[0] > max_px else 1
    fc = int(np.ceil(m.shape[1] / max_px)) if m.shape[1] > max_px else 1
    if fr == fc == 1:
        return m, (1, 1)
    r, c = (-m.shape[0]) % fr, (-m.shape[1]) % fc
    padded = np.pad(m.astype(np.float64), ((0, r), (0, c)), constant_values=np.nan)
    h, w = padded.shape
    with warnings.catch_warnings():  # an all-blank block stays NaN (drawn grey)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(padded.reshape(h // fr, fr, w // fc, fc), axis=(1, 3)), (fr, fc)


BLANK = (225, 225, 225)  # NaN cells (masked, padded) are drawn in this grey ...
HATCH = (150, 150, 150)  # ... crossed by diagonal lines of this one (27 L* units darker), as the live maps hatch them
HATCH_EVERY = 5  # a hatch line every 5 pixels
_LEVELS = 254  # palette entries for the colour scale; entry 254 is BLANK, 255 HATCH


def _palette(lut: np.ndarray) -> bytes:
    """A PNG palette: ``_LEVELS`` colours sampled evenly from ``lut`` (both ends exact), then BLANK and HATCH."""
    picks = np.linspace(0, len(lut) - 1, _LEVELS).round().astype(np.int64)
    return np.concatenate([lut[picks], np.array([BLANK, HATCH], dtype=np.uint8)]).astype(np.uint8).tobytes()


def hatch(idx: np.ndarray) -> np.ndarray:
    """Palette indices ``(h, w)`` with diagonal lines drawn over the BLANK pixels: masked cells differ from every
    colour of the scale by a pattern, not by a grey alone (a weight of 1, viridis' yellow, is about as light as the
    grey, and with tritanopia about as grey)."""
    h, w = idx.shape
    lines = (np.arange(h)[:, None] + np.arange(w)[None, :]) % HATCH_EVERY == 0  # (h, w)
    return np.where((idx == _LEVELS) & lines, _LEVELS + 1, idx).astype(np.uint8)


_PALETTES = {name: _palette(lut) for name, lut in _LUTS.items()}


def heatmap_png(
    m: np.ndarray, vmin: float, vmax: float, scheme: str = "viridis", max_px: int = 256, min_px: int = 160
) -> tuple[bytes, tuple[int, int]]:
    """A heatmap as PNG bytes (rows top to bottom) and the pooling factors used; NaN cells are grey, hatched.

    Each side is enlarged (nearest neighbour) to at least ``min_px`` / 2 pixels, so a 11 x 256 matrix
    is not drawn as a thin strip. The image is a palette PNG (one byte a pixel, 254 levels of the colour
    scale and the two greys): it encodes about four times faster than RGB at the same size, and a class asking
    for new settings encodes one per head."""
    pooled, f = pool(np.asarray(m, dtype=np.float64), max_px)
    span = (vmax - vmin) or 1.0
    level = np.clip(np.nan_to_num((pooled - vmin) / span, nan=0.0), 0, 1)
    idx = (level * (_LEVELS - 1)).round().astype(np.uint8)  # (h, w) palette entries 0 .. 254
    idx[np.isnan(pooled)] = _LEVELS  # BLANK
    img = Image.fromarray(idx, "P")
    img.putpalette(_PALETTES[scheme])
    w, h = img.size
    sw = max(1, int(np.ceil(min_px / 2 / w)), int(np.ceil(min_px / max(w, h))))
    sh = max(1, int(np.ceil(min_px / 2 / h)), int(np.ceil(min_px / max(w, h))))
    if sw > 1 or sh > 1:
        img = img.resize((w * sw, h * sh), Image.NEAREST)
    if (idx == _LEVELS).any():
        img = Image.fromarray(hatch(np.asarray(img)), "P")
        img.putpalette(_PALETTES[scheme])
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)  # fast: heatmaps compress well anyway
    return buf.getvalue(), f


def _luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour (0-255 channels)."""
    c = np.asarray(rgb, dtype=np.float64) / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def _ink(rgb) -> tuple[int, int, int]:
    """Black or white, whichever contrasts more with the cell colour ``rgb`` (at least 4.58:1 on any colour)."""
    lum = _luminance(rgb)
    return (0, 0, 0) if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else (255, 255, 255)


def labelled_heatmap_png(
    m: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    vmin: float = 0.0,
    vmax: float = 1.0,
    cell: int = 48,
    font_size: int = 14,
    decimals: int = 2,
) -> bytes:
    """A small matrix as a PNG sized to its content: row labels on the left, column labels on top and each
    cell's value written in it (black or white, whichever contrasts more with the cell). For matrices of a few rows."""
    from PIL import ImageDraw, ImageFont

    m = np.asarray(m, dtype=np.float64)
    n_r, n_c = m.shape
    font = ImageFont.load_default(size=font_size)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left = 8 + max(int(measure.textlength(str(t), font=font)) for t in row_labels)
    top = font_size + 10
    img = Image.new("RGB", (left + n_c * cell + 2, top + n_r * cell + 2), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    span = (vmax - vmin) or 1.0
    lut = _LUTS["viridis"]
    for j, label in enumerate(col_labels):
        draw.text((left + j * cell + cell / 2, top - 4), str(label), fill=(0, 0, 0), font=font, anchor="mb")
    for i, label in enumerate(row_labels):
        draw.text((left - 6, top + i * cell + cell / 2), str(label), fill=(0, 0, 0), font=font, anchor="rm")
        for j in range(n_c):
            level = float(np.clip((m[i, j] - vmin) / span, 0, 1))
            rgb = tuple(int(c) for c in lut[int(round(level * 255))])
            box = (left + j * cell, top + i * cell, left + (j + 1) * cell - 1, top + (i + 1) * cell - 1)
            draw.rectangle(box, fill=rgb)
            ink = _ink(rgb)
            draw.text(
                (box[0] + cell / 2, box[1] + cell / 2), f"{m[i, j]:.{decimals}f}", fill=ink, font=font, anchor="mm"
            )
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()
