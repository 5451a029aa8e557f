"""A lesson link works on every page, or the page says plainly what it cannot do: classroom mode (``classroom=lock``)
asks a question worth predicting where a page has one and says so where it has none; ``hide=`` hides the controls
it names wherever they are drawn (the sidebar, Compare's A and B) and says so on a page without them."""

import pytest

from tests.apptest_util import PAGES, app, run_ok, texts
from ui.skeleton import registry

HIDE = {"hide": "seq_len,d_model,seed,input"}


@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_classroom_lock_asks_a_question_or_says_there_is_none(path):
    at = run_ok(app(path, {"classroom": "lock"}, timeout=120))
    shown = texts(at)
    assert "Classroom mode is on for this lesson" in shown
    if path != registry.HOME and registry.info(path).predicts:
        assert "Predict first" in shown
        assert any(b.key.startswith("reveal_") for b in at.button), f"{path}: no reveal button"
        assert "asks no question to predict" not in shown
    else:
        assert "Predict first" not in shown
        others = ", ".join(p.label for p in registry.predicting())
        assert (
            f"this page asks no question to predict, so everything is shown. The pages that ask one first: {others}"
            in shown
        )


@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_hide_hides_the_named_controls_wherever_they_are(path):
    at = run_ok(app(path, HIDE, timeout=120))
    labels = [w.label for kind in ("slider", "number_input", "radio") for w in getattr(at.sidebar, kind)]
    assert not [lab for lab in labels if lab.split(" ")[0] in ("seq_len", "d_model", "seed", "Input")], labels
    shown = texts(at)
    fixed, none = (
        "This lesson's link fixes" in shown,
        "this page draws none of them, so nothing is hidden here" in shown,
    )
    assert fixed != none, f"{path}: the page must say which it is"
