"""AppTest: the home page (its live example, the labelled map, the claims it makes, the lesson footer)."""

import io
import math
import sys

import numpy as np
from PIL import Image

from tests.apptest_util import app, run_ok, texts


def _booster_weight(k_scale: float) -> float:
    s = k_scale / math.sqrt(2)  # q = [0, 1], B's key = k_scale * [0, 1], A's keys score 0
    return math.exp(s) / (3 + math.exp(s))


def test_home_runs_and_shows_class_notes_numbers():
    at = run_ok(app("streamlit_app.py"))
    assert len(at.get("page_link")) >= 3
    shown = texts(at)
    assert f"**{_booster_weight(10):.4f}** of its weight on B3" in shown
    assert f"B3 would get only {_booster_weight(1):.4f}" in shown
    assert at.latex and "softmax" in at.latex[0].value
    assert "Every page shares the sidebar settings" not in shown and "Home has no controls" in shown
    answers = {e.label: e.markdown[0].value for e in at.expander if e.markdown}
    assert len([k for k in answers if k[0].isdigit()]) == 3
    booster = next(v for k, v in answers.items() if "W_k = 10 I change" in k)
    assert f"{_booster_weight(1):.4f} instead of {_booster_weight(10):.4f}" in booster
    assert any(
        link.proto.page == "Step_by_step" and link.proto.label == "Step by step" for link in at.get("page_link")
    )  # the lesson footer's "next in the reading order": the page that teaches from zero
    assert "d_k = 2" in shown  # the map's √2 is explained


def test_home_map_is_labelled_and_sized_to_its_content(monkeypatch):
    import ui.draw.images

    drawn = []

    def recording(m, row_labels, col_labels, **kw):
        png = real(m, row_labels, col_labels, **kw)
        drawn.append((np.array(m), list(row_labels), list(col_labels), png))
        return png

    real = ui.draw.images.labelled_heatmap_png
    monkeypatch.setattr(ui.draw.images, "labelled_heatmap_png", recording)
    at = run_ok(app("streamlit_app.py"))
    imgs = [img for el in at.get("image") for img in el.proto.imgs if "Attention weights" in img.caption]
    assert len(imgs) == 1 and "purple (0) to yellow (1)" in imgs[0].caption
    ((m, rows, cols, png),) = drawn
    assert rows == cols == ["A1", "A2", "B3", "A4"] and m.shape == (4, 4)
    np.testing.assert_allclose(m[:, 2], _booster_weight(10), atol=1e-6)
    w, h = Image.open(io.BytesIO(png)).size
    assert 150 <= w <= 300 and 150 <= h <= 300, (w, h)  # not the ~460 px unlabeled square of before


def test_home_imports_no_chart_library():
    """Home's first render stays fast: it must not import Altair (or the chart module that does)."""
    import subprocess

    from tests.apptest_util import ROOT

    code = (
        "import sys; from tests.apptest_util import app, run_ok; run_ok(app('streamlit_app.py')); "
        "print(sorted(m for m in ('altair', 'ui.draw.charts') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
