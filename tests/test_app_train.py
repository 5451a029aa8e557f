"""The Train page in AppTest: ready experiment, scrubbing, live play/pause/step, the link, the queue."""

from __future__ import annotations

import re

import pytest

from tests.apptest_util import app, run_ok, texts
from ui.training import QUEUE, TrainingQueue

PAGE = "pages/Train.py"
LIVE = {
    "mode": "live",
    "task": "previous",
    "layers": "1",
    "heads": "2",
    "d_model": "16",
    "batch": "8",
    "steps": "40",
    "context": "12",
    "vocab": "10",
}
pytestmark = pytest.mark.slow  # each AppTest run trains or loads real runs


def page(query=None):
    return run_ok(app(PAGE, query, timeout=240))


def shown_step(at) -> int:
    return int(re.search(r"\*\*Step (\d+)\*\* of", texts(at)).group(1))


def button(at, label):
    return next(b for b in at.button if b.label.startswith(label))


def test_queue_gives_two_slots_and_queues_the_third():
    now = [0.0]
    q = TrainingQueue(limit=2, timeout=10, clock=lambda: now[0])
    assert q.request("a") == 0 and q.request("b") == 0
    assert q.request("c") == 1 and q.request("d") == 2 and q.status() == (2, 2)
    assert q.request("c") == 1  # asking again keeps the place
    q.release("a")
    assert q.request("d") == 1 and q.request("c") == 0  # the free slot waits for c: first come, first served
    assert q.request("d") == 1
    now[0] = 11.0  # b and c stopped asking: their slots expire
    assert q.request("d") == 0 and q.status() == (1, 0)
    with pytest.raises(ValueError):
        TrainingQueue(limit=0)


def test_ready_experiment_names_the_phase_change_and_parity():
    at = page()
    text = texts(at)
    m = re.search(r"cliff at about \*\*step (\d+)\*\*", text)
    assert m and 300 <= int(m.group(1)) <= 900
    assert "With **1 layer** the same data and seed never gave one" in text
    pm1 = float(re.search(r"best prefix-matching score reaches only ([0-9.]+)", text).group(1))
    assert pm1 < 0.3
    parity = float(re.search(r"largest difference of \*\*([0-9.e+-]+)\*\*", text).group(1))
    assert parity < 1e-6
    assert at.query_params["mode"] == "ready" and at.query_params["show"] == "1500"
    assert len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart")) >= 4


def test_scrubbing_the_ready_run_and_the_link_round_trip():
    at = page()
    slider = next(s for s in at.select_slider if s.label.startswith("Step shown"))
    slider.set_value(300)
    run_ok(at)
    assert "Every head on the probe at step 300" in texts(at)
    assert at.query_params["show"] == "300"
    at.radio(key="tr_run").set_value("induction_1layer")
    run_ok(at)
    assert at.query_params["run"] == "induction_1layer"
    assert list(at.selectbox(key="ready_layer").options) == ["layer 1"]
    back = page(dict(at.query_params.items()))
    assert back.radio(key="tr_run").value == "induction_1layer"
    assert "Every head on the probe at step 300" in texts(back)


def test_bad_link_values_are_clamped_with_a_notice():
    at = page({"mode": "nope", "run": "x", "heads": "abc", "d_model": "30", "show": "-5", "layer": "9"})
    warnings = " ".join(w.value for w in at.warning)
    assert "mode='nope'" in warnings and "run='x'" in warnings and "heads='abc'" in warnings
    assert "out of range" in warnings
    assert at.radio(key="tr_mode").value == "ready"


def test_live_play_pause_step_and_the_link():
    at = page(LIVE)
    assert shown_step(at) == 0 and at.query_params["task"] == "previous"
    button(at, "▶").click()
    run_ok(at)
    run_ok(at)
    played = shown_step(at)
    assert played > 0
    button(at, "⏸").click()
    run_ok(at)
    paused = shown_step(at)
    run_ok(at)
    assert shown_step(at) == paused >= played
    button(at, "+1").click()
    run_ok(at)
    assert shown_step(at) == paused + 1
    assert at.query_params["step"] == str(paused + 1)
    slider = at.select_slider(key="tr_scrub_live")
    slider.set_value(slider.options[0] if isinstance(slider.options[0], int) else int(slider.options[0]))
    run_ok(at)
    assert "Every head on the probe at step 0" in texts(at) and at.query_params["show"] == "0"
    link = dict(at.query_params.items())
    again = page(link)  # the link retrains to the step it reached (same seed: same run)
    for _ in range(20):
        if shown_step(again) >= paused + 1:
            break
        run_ok(again)
    assert shown_step(again) == paused + 1
    assert again.session_state["tr_trainer"].train_loss == at.session_state["tr_trainer"].train_loss


def charts(at) -> dict[str, dict]:
    """Every Vega-Lite spec of the page by its title."""
    import json

    return {(spec := json.loads(el.proto.spec)).get("title", ""): spec for el in at.get("vega_lite_chart")}


def test_step_axes_are_whole_steps_over_the_run_at_step_0_and_after():
    """At step 0 a run has one point, and Vega's ticks for the range [0, 0] read 0.000000: every curve's step axis
    runs from 0 to the run's length in whole steps, accuracy in percent from 0 to 1, the loss from 0."""
    at = page(LIVE)
    assert shown_step(at) == 0
    live = charts(at)
    for title in ("Loss", "Accuracy", "previous-token score of every head"):
        for layer in live[title]["layer"]:
            x = layer["encoding"]["x"]
            assert x["scale"]["domain"] == [0, 40] and x["axis"]["format"] == "d", (title, x)
    assert live["Accuracy"]["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert live["Accuracy"]["layer"][0]["encoding"]["y"]["axis"]["format"] == ".0%"
    assert live["Loss"]["layer"][0]["encoding"]["y"]["scale"]["zero"] is True
    button(at, "+1").click()
    run_ok(at)
    assert charts(at)["Loss"]["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0, 40]
    over_steps = [
        s
        for s in charts(page()).values()
        if s.get("layer", [{}])[0].get("encoding", {}).get("x", {}).get("field") == "step"
    ]
    assert len(over_steps) == 4 and all(
        layer["encoding"]["x"]["scale"]["domain"] == [0, 1500] for spec in over_steps for layer in spec["layer"]
    )


def test_server_status_is_fresh_while_training():
    """The line beside the step says what this run did: a session that trains holds a slot and has spent steps
    (drawn above the live fragment it said "0 training now ... 3000 of 3000" through a whole run)."""
    at = page(LIVE)
    status = next(c.value for c in at.caption if c.value.startswith("Server:"))
    assert status.endswith("Your budget: 3000 of 3000 live steps left.")
    button(at, "▶").click()
    run_ok(at)
    used = at.session_state["tr_used"]
    assert used == shown_step(at) > 0
    status = next(c.value for c in at.caption if c.value.startswith("Server:"))
    running = int(re.search(r"Server: (\d+) training now", status).group(1))
    assert running >= 1 and f"Your budget: {3000 - used} of 3000 live steps left." in status
    button(at, "⏸").click()
    run_ok(at)
    status = next(c.value for c in at.caption if c.value.startswith("Server:"))
    assert int(re.search(r"Server: (\d+) training now", status).group(1)) == running - 1


def test_live_training_waits_in_the_queue_when_the_server_is_full(monkeypatch):
    from collections import OrderedDict

    monkeypatch.setattr(QUEUE, "timeout", 1e9)  # the two other trainings must not expire while the page loads
    monkeypatch.setattr(QUEUE, "_active", {})  # and no session of an earlier test holds a slot
    monkeypatch.setattr(QUEUE, "_waiting", OrderedDict())
    QUEUE.request("other-1")
    QUEUE.request("other-2")
    try:
        at = page(LIVE)
        button(at, "▶").click()
        run_ok(at)
        assert "you are number 1 in the queue" in texts(at)
        assert shown_step(at) == 0
    finally:
        QUEUE.release("other-1")
        QUEUE.release("other-2")
    run_ok(at)
    assert shown_step(at) > 0


@pytest.mark.parametrize(
    "query",
    [
        {
            "mode": "live",
            "task": "find_b",
            "layers": "2",
            "heads": "4",
            "d_model": "64",
            "mlp": "1",
            "ln": "1",
            "pos": "sinusoidal",
            "context": "64",
            "steps": "2",
        },
        {
            "mode": "live",
            "task": "sort",
            "layers": "1",
            "heads": "1",
            "d_model": "8",
            "context": "8",
            "vocab": "8",
            "lr": "0.03",
            "batch": "1",
            "steps": "1",
        },
    ],
)
def test_live_extreme_settings_draw(query):
    at = page(query)
    button(at, "+1").click()
    run_ok(at)
    assert shown_step(at) == 1
    assert "largest difference of" in texts(at)


def test_live_rope_link_trains_draws_and_keeps_parity():
    at = page({**LIVE, "pos": "rope", "heads": "4", "d_model": "12"})  # d_k = 3 is odd: rope takes 3 heads
    assert "rope" in at.selectbox(key="tr_pos").options and at.selectbox(key="tr_pos").value == "rope"
    assert "d_model=12 / n_heads=4 = 3 is odd and rope needs an even d_k; using n_heads=3" in texts(at)
    button(at, "+1").click()
    run_ok(at)
    assert shown_step(at) == 1
    cfg = at.session_state["tr_trainer"].cfg
    assert (cfg.pos, cfg.n_heads, cfg.d_k) == ("rope", 3, 4)
    parity = float(re.search(r"largest difference of \*\*([0-9.e+-]+)\*\*", texts(at)).group(1))
    assert parity < 1e-6
    assert at.query_params["pos"] == "rope"
    at.selectbox(key="tr_pos").set_value("learned")  # switching positions starts a new run
    run_ok(at)
    assert at.session_state["tr_trainer"].cfg.pos == "learned" and shown_step(at) == 0
