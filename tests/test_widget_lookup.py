"""A widget drawn looks its own key up in session state (ui/server/widget_lookup.py): the same answers as Streamlit's
whole ``filtered_state``, on every page, without building it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import streamlit
import streamlit.elements.widgets as widgets_package
from hypothesis import given, settings
from hypothesis import strategies as st_
from streamlit.runtime.state import session_state as ss_module
from streamlit.testing.v1 import AppTest

from tests.apptest_util import PAGES, app, run_ok
from ui.server import widget_lookup
from ui.server.widget_lookup import MODULES, KeyLookup

USE = re.compile(r"(?<![\w.])session_state\b(?!\s*=)")  # a use of the local name, not its assignment

widget_lookup.install()  # as the first run of a page does (ui/skeleton/page.py)


def test_the_widget_modules_ask_filtered_state_only_whether_their_own_key_is_set():
    """If a Streamlit release reads filtered_state any other way in these modules, or in a widget module not listed,
    the lookup may no longer answer what is asked of it: this fails, and the module is to be read again."""
    assert widget_lookup.installed()
    listed = {Path(m.__file__).stem for m in MODULES}
    readers = {
        p.stem
        for p in Path(widgets_package.__file__).parent.glob("*.py")
        if "filtered_state" in p.read_text(encoding="utf-8")
    }
    assert readers == listed, (streamlit.__version__, widget_lookup.STREAMLIT_READ)
    for m in MODULES:
        lines = inspect.getsource(m).splitlines()
        reads = [i for i, line in enumerate(lines) if "filtered_state" in line]
        for i in reads:
            assert lines[i].strip() == "session_state = get_session_state().filtered_state", (m.__name__, lines[i])
            after = "\n".join(lines[i + 1 : i + 8])
            uses = [after[u.start() - 7 : u.end() + 5] for u in USE.finditer(after)]
            assert uses, (m.__name__, i)
            assert all(u.startswith("key in ") or u.endswith("[key]") for u in uses), (m.__name__, uses)


def _same(lookup: KeyLookup, whole: dict, key) -> None:
    assert (key in lookup) == (key in whole), key
    if key in whole:
        assert lookup[key] == whole[key], key
    else:
        with pytest.raises(KeyError):
            lookup[key]


def _check_session(at: AppTest, extra=()) -> None:
    safe = at.session_state._state
    state = safe._state
    whole = safe.filtered_state
    lookup = KeyLookup(safe)
    assert len(lookup) == len(whole) and set(lookup) == set(whole)
    candidates = set(whole) | state._keys() | set(state._key_id_mapper._key_id_mapping) | set(extra)
    candidates |= {ss_module.STREAMLIT_INTERNAL_KEY_PREFIX + "_x", "no such key"}
    for key in candidates:
        _same(lookup, whole, key)
    assert len(candidates) > 40  # a real session: widget ids, user keys, internal keys


def test_every_key_reads_the_same_looked_up_as_in_streamlits_dict_on_every_page():
    """One session through every page (the keys of the pages before stay in it, as a learner's do)."""
    at = run_ok(app(PAGES[0], live=True, partial=True))
    _check_session(at)
    for path in PAGES[1:]:
        at.switch_page(path)
        run_ok(at)
        _check_session(at)


@settings(max_examples=30, deadline=None)
@given(st_.text(max_size=30))
def test_any_other_key_reads_the_same(key):
    at = _playground()
    whole = at.session_state._state.filtered_state
    _same(KeyLookup(at.session_state._state), whole, key)


_AT: list[AppTest] = []


def _playground() -> AppTest:
    if not _AT:
        _AT.append(run_ok(app("pages/Playground.py", live=True, partial=True)))
    return _AT[0]


def _widgets_emptied_by_none():
    import streamlit as st

    from ui.server.widget_lookup import install

    install()
    if "started" not in st.session_state:
        st.session_state.started = True
        for k in ("sel", "rad", "num"):
            st.session_state[k] = None
        st.session_state.rng = (3, 5)
    st.selectbox("sel", ["a", "b"], key="sel")
    st.radio("rad", ["a", "b"], key="rad")
    st.number_input("num", value=4, key="num")
    st.slider("rng", 0, 10, key="rng")
    st.selectbox("kept", ["a", "b"], index=1, key="kept")


def test_a_key_set_to_none_still_empties_its_widget_and_a_tuple_still_makes_a_range_slider():
    at = AppTest.from_function(_widgets_emptied_by_none).run()
    assert not at.exception
    assert at.selectbox(key="sel").value is None
    assert at.radio(key="rad").value is None
    assert at.number_input(key="num").value is None
    assert at.slider(key="rng").value == (3, 5)
    assert at.selectbox(key="kept").value == "b"
    at.selectbox(key="sel").set_value("b").run()
    assert at.selectbox(key="sel").value == "b" and at.radio(key="rad").value is None


def test_a_page_run_no_longer_builds_streamlits_whole_dict_for_its_widgets(monkeypatch):
    """The saving itself: a Playground run draws sliders, select sliders, radios, selectboxes and number inputs
    and builds the whole dict for none of them (Streamlit's own widgets built it once each)."""
    at = _playground()
    calls = []
    original = ss_module.SessionState.filtered_state

    def counted(self):
        calls.append(re.sub(r"\s+", " ", "".join(inspect.stack()[2].code_context or ())))
        return original.fget(self)

    monkeypatch.setattr(ss_module.SessionState, "filtered_state", property(counted))
    at.slider(key="ctl_seq_len").set_value(7)
    run_ok(at)
    assert calls == []
    for kind in ("slider", "select_slider", "radio", "selectbox", "number_input"):
        assert getattr(at, kind), kind  # the page drew each kind of widget that looks up
