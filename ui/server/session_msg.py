"""The config and theme of Streamlit's new_session message, built once per configuration instead of every run.

Streamlit 1.67 starts every run, a body-only rerun too, with a ``new_session`` message
(``runtime/app_session.py``, ``AppSession._create_new_session_message``), in which ``_populate_config_msg`` and
six calls of ``_populate_theme_msg`` (the theme and its light, dark and sidebar sections) read the configuration
again: each ``config.get_options_for_section`` walks every option. That was 1.5 ms of server CPU a run here,
about a tenth of a warm change on Compare's "Why scale?", for a message part that changes only when the
configuration does.

:func:`install` wraps both functions: each keeps the message part it built for a section, and builds it again
once the configuration has changed. Every change of an option goes through ``config._set_option`` (``st.set_option``,
a config file parsed again, flags and environment variables), which is wrapped to count them; a new parse also
makes a new option dict. So a kept part is used while the option dict and the count are those it was built under.
What a run sends is the same message (``tests/test_session_msg.py`` compares it with Streamlit's own, before and
after a change of the theme).
"""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any

from streamlit import config
from streamlit.runtime import app_session

STREAMLIT_READ = "1.67.0"  # the Streamlit whose source this module was written against
# what the wrapped functions look like in STREAMLIT_READ (tests/test_session_msg.py compares)
SIGNATURES = {
    "_populate_config_msg": "(msg: 'Config') -> 'None'",
    "_populate_theme_msg": "(msg: 'CustomThemeConfig', section: 'str' = 'theme') -> 'None'",
    "config._set_option": "(key: 'str', value: 'Any', where_defined: 'str') -> 'None'",
}

_lock = threading.Lock()
_changes = 0  # options set since the process started (config._set_option's calls)
_built: dict[str, tuple[tuple, Any]] = {}  # section -> (the configuration it was built under, the message part)


def _configuration() -> tuple[int, int]:
    """Which configuration is in force: the option dict (a new one per parse) and the options set so far."""
    if config._config_options is None:  # not parsed yet: Streamlit's own getter parses the files
        config.get_config_options()
    return id(config._config_options), _changes


def _reuse(section: str, msg, build) -> None:
    """Merge into ``msg`` the part ``build`` made for ``section`` under the configuration in force."""
    now = _configuration()
    got = _built.get(section)
    if got is None or got[0] != now:
        part = type(msg)()
        build(part)
        got = (now, part)
        with _lock:
            _built[section] = got
    if got[1].ListFields():  # a section with no options set is left out, not sent as an empty message
        msg.MergeFrom(got[1])


def _config_msg(original):
    @functools.wraps(original)
    def populate(msg) -> None:
        _reuse("config", msg, original)

    populate.__aexp_original__ = original
    return populate


def _theme_msg(original):
    @functools.wraps(original)
    def populate(msg, section: str = "theme") -> None:
        _reuse(section, msg, lambda part: original(part, section))

    populate.__aexp_original__ = original
    return populate


def _counted(original):
    @functools.wraps(original)
    def set_option(key: str, value: Any, where_defined: str) -> None:
        global _changes
        try:
            original(key, value, where_defined)
        finally:
            _changes += 1

    set_option.__aexp_original__ = original
    return set_option


WRAPPERS = {"_populate_config_msg": _config_msg, "_populate_theme_msg": _theme_msg}


def installed() -> bool:
    return hasattr(config._set_option, "__aexp_original__") and all(
        hasattr(getattr(app_session, n), "__aexp_original__") for n in WRAPPERS
    )


def install() -> None:
    """Wrap ``config._set_option`` and the two functions of ``streamlit.runtime.app_session`` (once per process)."""
    with _lock:
        if not installed():
            config._set_option = _counted(config._set_option)
            for name, wrap in WRAPPERS.items():
                setattr(app_session, name, wrap(getattr(app_session, name)))


def original_signatures() -> dict[str, str]:
    """The signatures of the functions as Streamlit defines them (for tests/test_session_msg.py)."""
    out = {
        n: str(inspect.signature(getattr(getattr(app_session, n), "__aexp_original__", getattr(app_session, n))))
        for n in WRAPPERS
    }
    out["config._set_option"] = str(
        inspect.signature(getattr(config._set_option, "__aexp_original__", config._set_option))
    )
    return out
