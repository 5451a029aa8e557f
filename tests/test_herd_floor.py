"""benchmarks/herd_floor.py serves its bare page with the app's own server settings, as environment variables
Streamlit reads: a floor measured under Streamlit's defaults (a full collection after every run) is not the app's."""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit import config

from benchmarks.herd_floor import app_settings

ROOT = Path(__file__).resolve().parents[1]


def test_the_bare_page_gets_every_server_setting_of_the_app():
    env = app_settings()
    assert env["STREAMLIT_RUNNER_POST_SCRIPT_GC"] == "false" and env["STREAMLIT_RUNNER_FAST_RERUNS"] == "false"
    assert env["STREAMLIT_GLOBAL_MIN_CACHED_MESSAGE_SIZE"] == "120"
    names = {o.env_var: key for key, o in config._config_options_template.items()}
    assert set(env) <= set(names)  # each one an option this Streamlit reads
    toml = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    drawn = {"theme", "browser"}  # how the page looks, and usage statistics: nothing a rerun's cost depends on
    wanted = {f"{s}.{k}" for s in toml if s not in drawn for k in toml[s]}
    assert {names[e] for e in env} == wanted  # and none of the app's left out
