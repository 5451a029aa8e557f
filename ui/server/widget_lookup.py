"""What a widget asks of session state while it is drawn, looked up instead of built whole.

Streamlit 1.67's radio, selectbox, number input, text input and area, date and time inputs, and a slider with a
key, each read ``get_session_state().filtered_state`` while they are drawn (``elements/widgets/radio.py``,
``selectbox.py``, ``number_input.py``, ``text_widgets.py``, ``time_widgets.py``, ``slider.py``) to ask one thing of
it: whether the widget's own key is set, and to what (a value of None empties the widget; a slider's tuple makes
it a range). ``filtered_state`` is a new dict of the whole session state, built for that
question: every key of the session is read, and every keyed custom component's value goes through its presenter,
which makes a new class at each call (``components/v2/presentation.py``). A page run here draws 10 to 20 such widgets
in a session of 55 to 80 keys: the what-if controls in the sidebar spent 45% of their time building it, about an
eighth of a page run's server CPU (and a student's move to the teacher's step is a page run per student).

:func:`install` gives those six modules a ``get_session_state`` whose ``filtered_state`` is a mapping that looks a
user key up (``SessionState.__getitem__``, the read ``st.session_state[key]`` makes, with the same presenter) and
builds Streamlit's whole dict only for anything else: iteration, length, a widget id or an internal key. Everything
else is Streamlit's own session state. ``tests/test_widget_lookup.py`` checks that every key, on every page, reads
the same both ways, and that those modules ask ``filtered_state`` only the question this module answers.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from streamlit.elements.widgets import number_input, radio, selectbox, slider, text_widgets, time_widgets
from streamlit.runtime.state.common import is_element_id
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX

STREAMLIT_READ = "1.67.0"  # the Streamlit whose source this module was written against
MODULES = (radio, selectbox, number_input, slider, text_widgets, time_widgets)

_lock = threading.Lock()


class KeyLookup(Mapping):
    """Session state as ``filtered_state`` presents it, read one key at a time."""

    __slots__ = ("_safe",)

    def __init__(self, safe) -> None:
        self._safe = safe  # Streamlit's SafeSessionState of the run

    def whole(self) -> dict[str, Any]:
        """Streamlit's own dict (for anything but a user key's lookup)."""
        return self._safe.filtered_state

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str) or is_element_id(key) or key.startswith(STREAMLIT_INTERNAL_KEY_PREFIX):
            return self.whole()[key]
        return self._safe[key]

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())


class StateForWidgets:
    """Streamlit's SafeSessionState, with ``filtered_state`` a :class:`KeyLookup`."""

    __slots__ = ("_safe",)

    def __init__(self, safe) -> None:
        self._safe = safe

    @property
    def filtered_state(self) -> KeyLookup:
        return KeyLookup(self._safe)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._safe, name)


def _for_widgets(original):
    @functools.wraps(original)
    def get_session_state():
        return StateForWidgets(original())

    get_session_state.__aexp_original__ = original
    return get_session_state


def installed() -> bool:
    return all(hasattr(m.get_session_state, "__aexp_original__") for m in MODULES)


def install() -> None:
    """Give the widget modules the looking-up ``get_session_state`` (once per process)."""
    with _lock:
        for m in MODULES:
            if not hasattr(m.get_session_state, "__aexp_original__"):
                m.get_session_state = _for_widgets(m.get_session_state)
