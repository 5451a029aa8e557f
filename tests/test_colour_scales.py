"""The picture agrees with the numbers: maps and bar charts a reader compares share one scale, the absolute 0-1
scale is the default for weights, and stretching is the reader's choice for a whole group (issue: colour scales
that contradicted the numbers, e.g. a softer map stretched to look sharper than its neighbour).

Every chart drawn by ui.draw.charts carries ``usermeta = {"group", "value"}``: the charts of one group are the ones
drawn together (a grid of heads, A and B, scaled/unscaled twins). On every page and every preset, with stretching
off and on, at the default and at a nearly uniform setting: one domain per group; weights on 0-1 unless stretched;
and within a group the map whose rows are sharper (larger mean row maximum) is drawn at least as far up the scale.
"""

import json
import re

import numpy as np
import pytest

from tests.apptest_util import PAGES, app, chart_datasets, heatmaps, run_ok
from ui.classroom.presets import load_presets
from ui.session.state import STRETCH_KEY

NEARLY_UNIFORM = {"temperature": "10", "seq_len": "12", "heads": "4", "d_model": "32"}
SHARP_AND_LONG = {"temperature": "0.1", "seq_len": "64", "heads": "16", "d_model": "512"}  # images, many heads


def _charts(at) -> list[dict]:
    """Every chart of ui.draw.charts on the page: its group, value name, domain (colour or y), scheme and cells (the
    heatmaps the browser draws on a canvas, then the Vega-Lite bar charts)."""
    out = [
        {
            "group": h["group"],
            "value": h["value"],
            "domain": (h["lo"], h["hi"]),
            "heatmap": True,
            "diverging": h["scheme"] == "diverging",
            "clamp": True,  # heatmap.js clamps a value to the ends of its scale (its text may round past them)
            "from_text": True,  # its colour is read from its text (or the colour's own text: `colour`)
            "cells": h["cells"],
            "title": h["title"],
            "stretched": "stretched" in h["colTitle"],
        }
        for h in heatmaps(at)
    ]
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        meta = spec.get("usermeta") or {}
        if "group" not in meta:
            continue
        encodings = [spec.get("encoding", {})] + [layer.get("encoding", {}) for layer in spec.get("layer", [])]
        colour = [e["color"] for e in encodings if e.get("color", {}).get("field") == "v"]
        channel = colour[0] if colour else next(e["y"] for e in encodings if "y" in e)
        scale = channel.get("scale") or {}
        domain = scale.get("domain")
        frames = chart_datasets(el)
        title = spec.get("title")
        out.append(
            {
                "group": meta["group"],
                "value": meta["value"],
                "domain": None if domain is None else tuple(float(x) for x in domain),
                "heatmap": bool(colour),
                "diverging": scale.get("scheme") == "redblue",
                "clamp": scale.get("clamp") is True,
                "from_text": any("t" in t.get("flatten", ()) for t in spec.get("transform", [])),  # v read from a text
                "cells": frames[0] if frames else None,
                "title": title if isinstance(title, str) else str(title),
                "stretched": "stretched" in json.dumps(spec.get("encoding", {}).get("x", {}).get("axis", {})),
            }
        )
    return out


# an image's caption: "<title> (<r> x <c> as an image...; <value>: colour <lo> to <hi>...)" (ui.draw.charts.show_heatmap)
IMAGE_SCALE = re.compile(
    r"^(?P<title>.*?) \(\d+ x \d+ as an image[^;]*; (?P<value>[^;]+?): colour (?P<lo>\S+) to (?P<hi>[^;)\s]+)"
)


def _images(at) -> list[dict]:
    """Every heatmap drawn as an image on the page, with the value and colour range its caption states (a stretched
    image states its stretch instead: its value is None)."""
    out = []
    for el in at.get("image"):
        for img in el.proto.imgs:
            if " as an image" not in img.caption:
                continue
            m = IMAGE_SCALE.match(img.caption)
            title = img.caption.split(" (")[0]
            if m is None:
                assert "stretched" in img.caption, f"image {title!r} does not state its colour range: {img.caption!r}"
                continue
            out.append({"title": m["title"], "value": m["value"], "domain": (float(m["lo"]), float(m["hi"]))})
    return out


def _mean_row_max(cells) -> float:
    """Mean over rows of a heatmap's largest cell (rows are "r", values "v")."""
    return float(cells.groupby("r")["v"].max().mean())


def assert_scales_agree(at, stretched: bool) -> int:
    charts = _charts(at)
    groups: dict[str, list[dict]] = {}
    for c in charts:
        groups.setdefault(c["group"], []).append(c)
    for name, members in groups.items():
        domains = {c["domain"] for c in members}
        assert len(domains) == 1, f"group {name!r} is drawn on {len(domains)} scales: {sorted(map(str, domains))}"
        for c in members:
            if c["value"] == "weight" and not stretched:
                assert c["domain"] == (0.0, 1.0), f"{c['title']!r}: weights drawn on {c['domain']}, not 0-1"
        maps = [c for c in members if c["heatmap"] and c["value"] == "weight" and c["cells"] is not None]
        for a in maps:
            for b in maps:
                lo, hi = a["domain"]
                pa, pb = (np.clip((_mean_row_max(m["cells"]) - lo) / (hi - lo), 0, 1) for m in (a, b))
                if _mean_row_max(a["cells"]) > _mean_row_max(b["cells"]) + 1e-9:
                    assert pa >= pb, f"{a['title']!r} is sharper than {b['title']!r} but drawn softer"
    return len(charts)


def assert_colour_rule(at, stretched: bool) -> int:
    """The colour rule of every heatmap on the page (maps and images), for every quantity: an explicit domain; a
    signed quantity on a diverging scale centred on 0; a non-negative one on a sequential scale from 0; no value
    outside its map's domain (the colour would be clipped); and on one page the maps of one quantity share one
    domain unless a map's title says "own range". Stretched weights are the reader's choice, group by group
    (assert_scales_agree checks them, and each says "stretched")."""
    maps = [c for c in _charts(at) if c["heatmap"]]
    for c in maps:
        name, lo_hi = f"{c['title']!r} ({c['value']})", c["domain"]
        assert lo_hi is not None, f"{name} is coloured by its data's range, not an explicit domain"
        lo, hi = lo_hi
        vals = c["cells"]["v"].to_numpy(dtype=float) if c["cells"] is not None else np.zeros(0)
        vals = vals[np.isfinite(vals)]
        if stretched and c["stretched"]:
            continue
        if c["diverging"]:
            assert np.isclose(lo, -hi), f"{name}: a diverging scale {lo_hi} not centred on 0"
        else:
            assert lo == 0, f"{name}: a sequential scale {lo_hi} that does not start at 0"
            assert vals.size == 0 or vals.min() >= -1e-9, f"{name}: negative values on a sequential scale"
        if vals.size:  # the cells carry their text (3 significant digits: within 0.5 % of the value)
            slack = 5e-3 * max(abs(lo), abs(hi)) if c["from_text"] else 1e-4
            assert lo - slack <= vals.min() and vals.max() <= hi + slack, f"{name}: values outside its domain {lo_hi}"
            assert c["clamp"] or not c["from_text"], (
                f"{name}: a value rounded past the domain's end must take the end's colour"
            )
    images = _images(at)
    for c in images:
        lo, hi = c["domain"]
        assert lo == 0 or np.isclose(lo, -hi), f"image {c['title']!r}: scale {c['domain']} neither from 0 nor centred"
    by_value: dict[str, set] = {}
    own: dict[str, list[str]] = {}
    for c in maps + images:
        if stretched and c.get("stretched"):
            continue
        if "own range" in c["title"]:
            own.setdefault(c["value"], []).append(c["title"])
            continue
        by_value.setdefault(c["value"], set()).add(_rounded(c["domain"]))
    for value, titles in own.items():  # an exception, not the rule: maps of one quantity are compared
        assert len(titles) == 1, f"{len(titles)} maps of {value!r} on their own ranges, not one shared: {titles}"
    for value, domains in by_value.items():
        assert len(domains) == 1, f"maps of {value!r} are drawn on {len(domains)} scales: {sorted(domains)}"
    return len(maps) + len(images)


def _rounded(domain) -> tuple[str, str]:
    """A domain as an image caption states it (3 significant digits), so maps and images compare."""
    return tuple(f"{float(f'{x:.3g}'):.3g}" for x in domain)


def _open(path: str, query: dict, stretched: bool):
    at = app(path, query, timeout=120)
    if stretched:
        at.session_state[f"{STRETCH_KEY}_kept"] = True
    return run_ok(at)


@pytest.mark.parametrize("stretched", [False, True], ids=["absolute", "stretched"])
@pytest.mark.parametrize(
    "setting", [{}, NEARLY_UNIFORM, SHARP_AND_LONG], ids=["default", "nearly-uniform", "sharp-and-long"]
)
@pytest.mark.parametrize("path", PAGES)
def test_compared_charts_share_one_scale_on_every_page(path, setting, stretched):
    at = _open(path, setting, stretched)
    assert_scales_agree(at, stretched)
    assert_colour_rule(at, stretched)


PRESETS, _ = load_presets()


@pytest.mark.parametrize("stretched", [False, True], ids=["absolute", "stretched"])
@pytest.mark.parametrize("preset", PRESETS, ids=[p.slug for p in PRESETS])
def test_compared_charts_share_one_scale_in_every_preset(preset, stretched):
    at = _open(preset.page, preset.query_params(), stretched)
    assert assert_scales_agree(at, stretched) > 0  # every preset's page draws its maps with ui.draw.charts
    assert_colour_rule(at, stretched)


def test_why_scale_shows_the_scaled_side_softer_than_the_unscaled():
    """The preset's point, seen: A (scaled) is soft and B (unscaled) sharp, and B's row maxima are drawn higher."""
    preset = next(p for p in PRESETS if p.slug == "2_why_scale")
    at = _open(preset.page, preset.query_params(), stretched=False)
    maps = {c["title"]: c for c in _charts(at) if c["group"] == "A and B"}
    a, b = maps["A: head 1"], maps["B: head 1"]
    assert a["domain"] == b["domain"] == (0.0, 1.0)
    assert _mean_row_max(b["cells"]) > _mean_row_max(a["cells"]) + 0.2


def test_one_random_head_is_not_stretched_to_look_like_the_purposeful_one():
    """Multi-head's class-notes demo: the random heads' nearly uniform rows stay pale beside the purposeful head."""
    at = _open("pages/Multi-head.py", {}, stretched=False)
    demo = [c for c in _charts(at) if c["group"] == "class notes"]
    assert len(demo) == 3 and {c["domain"] for c in demo} == {(0.0, 1.0)}
    purposeful = next(c for c in demo if c["title"].startswith("1 head"))
    for c in demo:
        if c is not purposeful:
            assert _mean_row_max(c["cells"]) < _mean_row_max(purposeful["cells"])


def test_saturation_twins_share_their_axes():
    at = _open("pages/Softmax_saturation.py", {"d_model": "512", "heads": "1"}, stretched=False)
    charts = _charts(at)
    softmax = [c for c in charts if c["group"] == "softmax"]
    logits = [c for c in charts if c["group"] == "logits"]
    assert len(softmax) == 2 and {c["domain"] for c in softmax} == {(0.0, 1.0)}
    assert len(logits) == 2 and len({c["domain"] for c in logits}) == 1
