"""AppTest: the Multi-head page (pages/Multi-head.py)."""

import math

import numpy as np
import pytest

from attention_core import WhatIf, head_divergence_matrix, run_whatif, saturation_metrics
from attention_core.class_notes import purposeful_vs_random_heads
from tests.apptest_util import app, chart_titles, heatmap, heatmaps, run_ok, texts
from ui.text import fmt, fmt_all

MH = "pages/Multi-head.py"


def _image_captions(at):
    return [img.caption for el in at.get("image") for img in el.proto.imgs]


def _rows_of_maps(node) -> list[list[str]]:
    """The titles of the heatmaps (canvas maps) inside each horizontal block (a wrapping row), block by block, in
    page order."""
    rows = []
    kids = node.children.values() if isinstance(node.children, dict) else node.children
    for child in kids:
        if getattr(child, "type", "") == "flex_container" and child.proto.flex_container.direction == 2:
            rows.append(
                [
                    heatmap(el)["title"]
                    for el in (child.children.values() if isinstance(child.children, dict) else child.children)
                    if getattr(el, "type", "") == "bidi_component"
                    and el.proto.component_name == "attention_explorer.heatmap"
                ]
            )
        if hasattr(child, "children"):
            rows += _rows_of_maps(child)
    return rows


@pytest.mark.parametrize("heads, seq_len, d_model", [(1, 8, 64), (4, 8, 64), (16, 8, 64), (8, 1, 64)])
def test_head_grid_has_one_vector_map_per_head_and_one_caption(heads, seq_len, d_model):
    at = run_ok(app(MH, {"heads": str(heads), "seq_len": str(seq_len), "d_model": str(d_model)}, timeout=120))
    titles = chart_titles(at)
    assert sorted(t for t in titles if t.startswith("head ") and "enlarged" not in t) == sorted(
        f"head {h + 1}" for h in range(heads)
    )
    page = texts(at)
    assert page.count("One map per head (dark purple = 0, yellow = 1, the same scale for every head)") == 1
    assert not any(c.startswith("head ") for c in _image_captions(at))
    assert "W_o" in titles and not any(t.startswith("W_o:") for t in titles)  # no "W_o: 64 x 64 (64 x 64, ..."
    assert f"W_o (**{d_model} x {d_model}**)" in page
    # every head's map sits in one wrapping row, in reading order (one block, not a block per column)
    assert [f"head {h + 1}" for h in range(heads)] in _rows_of_maps(at.main)


@pytest.mark.slow
def test_large_grid_is_one_image_with_one_caption():
    at = run_ok(app(MH, {"heads": "16", "seq_len": "128", "d_model": "512"}, timeout=300))
    caps = _image_captions(at)
    assert sum(c.startswith("heads 1–16, 4 per row (") for c in caps) == 1
    assert not any(c.startswith("head 2") for c in caps)  # no caption per head
    page = texts(at)
    assert page.count("each tile is one head's 128 x 128 map") == 1
    assert "grey cells are masked" not in page  # no mask here
    run = run_whatif(WhatIf(seq_len=128, d_model=512, n_heads=16))
    m = saturation_metrics(run.weights[0]).summary()["max_weight"]
    assert f"mean max weight {m:.3g} (uniform rows: 0.0078" in page


def test_numbers_table_and_controls():
    at = run_ok(app(MH))
    run = run_whatif(WhatIf())
    js = head_divergence_matrix(run.weights)
    off = js[~np.eye(4, dtype=bool)]
    assert f"differ by {off.mean():.3g} bits on average" in texts(at)
    sat = [saturation_metrics(w).summary() for w in run.weights]
    table = at.dataframe[0].value
    assert list(table.columns) == [
        "head",
        "Q/K/V shape",
        "mean max weight",
        "entropy (nats)",
        "effective tokens",
        "near-one-hot rows",
    ]
    # one formatter: the table, the sentence and the map's tooltip write a number the same way
    assert list(table["mean max weight"]) == [fmt(s["max_weight"]) for s in sat]
    at.selectbox(key="mh_head").set_value(2)
    run_ok(at)
    assert "head 3, enlarged" in chart_titles(at)
    assert "Q, K, V shapes: 8 x 16 each (columns 33–48" in texts(at)
    assert f"mean max weight {at.dataframe[0].value['mean max weight'][2]} (uniform rows: 0.125)" in texts(at)
    (enlarged,) = [h for h in heatmaps(at) if h["title"] == "head 3, enlarged"]
    assert enlarged["value"] == "weight"  # the tooltip's last field: the cell's text, titled "weight"
    assert list(enlarged["cells"]["t"]) == fmt_all(run.weights[2])
    a, b = np.unravel_index(np.argmax(js - np.eye(4)), js.shape)
    assert f"Head {a + 1} and head {b + 1}, with a Jensen-Shannon divergence of {js[a, b]:.3g} bits" in texts(at)


@pytest.mark.parametrize("scaled, temperature", [(False, 0.2), (True, 10.0), (True, 0.1), (True, 1.0)])
def test_class_notes_sentence_follows_scaling_and_temperature(scaled, temperature):
    at = run_ok(app(MH))
    at.sidebar.toggle(key="ctl_scaled").set_value(scaled)
    at.sidebar.select_slider(key="ctl_temperature").set_value(temperature)
    run_ok(at)
    demo = purposeful_vs_random_heads(scaled, temperature, 0)
    z = demo.purposeful_output[0]
    page = texts(at)
    assert f"With scaling {'on' if scaled else 'off'} and temperature {temperature:g}, the purposeful head" in page
    assert (
        f"puts {demo.focus_on_b:.3g} of every row's weight on B3, so every output is [{z[0]:.3f}, {z[1]:.3f}]" in page
    )
    s = 10 / (math.sqrt(2) if scaled else 1) / temperature
    assert f"{math.exp(s) / (3 + math.exp(s)):.3g}: B3's score is s" in page
    if temperature == 10.0:
        assert demo.focus_on_b < 0.5  # the old caption claimed "close to [0, 1]" at every setting
    out = at.dataframe[-1].value
    assert list(out.columns) == ["token", "E", "Z, 1 head looking for B", "Z, 2 random heads"]
    assert out["Z, 1 head looking for B"][0] == f"[{z[0]:.3f}, {z[1]:.3f}]"


def test_one_head_has_no_divergence_and_masks_are_named():
    at = run_ok(app(MH, {"heads": "1", "mask": "causal"}))
    page = texts(at)
    assert "nothing to compare" in page
    run = run_whatif(WhatIf(n_heads=1, mask="causal"))
    u = np.mean([1 / (i + 1) for i in range(8)])
    m = saturation_metrics(run.weights[0]).summary()["max_weight"]
    assert f"mean max weight {m:.3g} (uniform rows: {u:.3g})" in page
    assert "Check yourself" in page


@pytest.mark.parametrize(
    "heads, says", [(1, "the one head gives 8 x (1 · 64) = 8 x 64"), (4, "the 4 heads side by side give")]
)
def test_check_yourself_counts_the_heads(heads, says):
    shown = texts(run_ok(app("pages/Multi-head.py", {"heads": str(heads)})))
    assert says in shown and "the 1 heads" not in shown


def later_settings(at):
    """The sidebar's expander of the controls whose words later pages teach: (its open state, its caption, the keys
    of the widgets in it); None if the sidebar has none."""
    from ui.skeleton.controls import LATER_LABEL

    found = [e for e in at.sidebar.expander if e.label == LATER_LABEL]
    if not found:
        return None
    box = found[0]
    keys = {w.key for kind in ("selectbox", "checkbox", "slider") for w in box.get(kind)}
    return box.proto.expanded, " ".join(c.value for c in box.caption), keys


def test_the_mask_and_positional_encoding_wait_behind_an_explained_expander():
    """Multi-head comes before the Masks and Positional encoding pages: their controls are in a closed expander of
    the sidebar whose first line says what they are (not only a help icon's tooltip); a link that turns one on
    opens it and says so, so nothing that moves the maps is hidden."""
    at = run_ok(app(MH))
    opened, caption, keys = later_settings(at)
    assert not opened and {"ctl_mask", "ctl_positional"} <= keys
    assert "a **mask** decides which keys each query may see (the Masks page)" in caption
    assert "adds to each token's embedding a vector that depends on its position" in caption
    assert "Off until you turn them on." in caption
    outside = {w.key for kind in ("selectbox", "checkbox") for w in at.sidebar.get(kind)} - keys
    assert not outside & {"ctl_mask", "ctl_positional"}
    on = run_ok(app(MH, {"mask": "causal+padding", "pad": "2"}))
    opened, caption, keys = later_settings(on)
    assert opened and "On in this setting: the causal + padding mask." in caption
    assert "ctl_pad_count" in keys  # the pad count goes with its mask
    assert on.session_state["whatif"].mask == "causal+padding"
