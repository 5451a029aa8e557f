"""The new_session message's config and theme, built once per configuration (ui/server/session_msg.py)."""

from __future__ import annotations

import streamlit
from streamlit import config
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import app_session

from ui.server import session_msg

session_msg.install()  # as the first run of a page does (ui/skeleton/page.py)

SECTIONS = ("theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar", "theme.dark.sidebar")


def built(populate_config, populate_theme) -> ForwardMsg:
    """The parts of a new_session message that _create_new_session_message builds with these two functions."""
    msg = ForwardMsg()
    populate_config(msg.new_session.config)
    theme = msg.new_session.custom_theme
    for section in SECTIONS:
        part = theme
        for name in section.split(".")[1:]:
            part = getattr(part, name)
        populate_theme(part, section)
    return msg


def streamlits_own() -> ForwardMsg:
    return built(app_session._populate_config_msg.__aexp_original__, app_session._populate_theme_msg.__aexp_original__)


def wrapped() -> ForwardMsg:
    return built(app_session._populate_config_msg, app_session._populate_theme_msg)


def test_the_wrapped_streamlit_functions_are_those_the_module_was_written_against():
    assert session_msg.installed()
    assert session_msg.original_signatures() == session_msg.SIGNATURES, (
        streamlit.__version__,
        session_msg.STREAMLIT_READ,
    )


def test_the_message_is_streamlits_own_and_follows_a_change_of_the_configuration():
    first = wrapped()
    assert first == streamlits_own()
    assert first.SerializeToString() == streamlits_own().SerializeToString()
    assert first.new_session.custom_theme.primary_color == "#c53948"  # .streamlit/config.toml
    assert wrapped() == first  # built again from what was kept
    before = {k: config.get_option(k) for k in ("theme.primaryColor", "theme.dark.primaryColor", "client.toolbarMode")}
    try:
        config.set_option("theme.primaryColor", "#123456")
        config.set_option("theme.dark.primaryColor", "#654321")
        config.set_option("client.toolbarMode", "viewer")
        changed = wrapped()
        assert changed == streamlits_own() and changed != first
        assert changed.new_session.custom_theme.primary_color == "#123456"
        assert changed.new_session.custom_theme.dark.primary_color == "#654321"
        assert changed.new_session.config.toolbar_mode == changed.new_session.config.ToolbarMode.VIEWER
    finally:
        for key, value in before.items():
            config.set_option(key, value)
    assert wrapped() == first == streamlits_own()
