"""The Train page in AppTest: ready experiment, scrubbing, live play/pause/step, the link, the queue."""

from __future__ import annotations

import re

import pytest

from tests.apptest_util import app, run_ok, texts
from ui.lessons.train.rationing import QUEUE, TrainingQueue

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
    assert list(at.selectbox(key="tr_layer").options) == ["layer 1"]
    back = page(dict(at.query_params.items()))
    assert back.radio(key="tr_run").value == "induction_1layer"
    assert "Every head on the probe at step 300" in texts(back)


def test_bad_link_values_are_clamped_with_a_notice():
    at = page({"mode": "nope", "run": "x", "heads": "abc", "d_model": "30", "show": "-5", "layer": "9"})
    warnings = " ".join(w.value for w in at.warning)
    assert "mode='nope'" in warnings and "run='x'" in warnings and "heads='abc'" in warnings
    assert "show=-5 is outside 0 to 5000; using 0." in warnings and "layer=9 is outside 1 to 2" in warnings
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
    slider = at.select_slider(key="tr_show")
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
    assert again.session_state["tr_live"].trainer.train_loss == at.session_state["tr_live"].trainer.train_loss


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
    used = at.session_state["tr_live"].used
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
    cfg = at.session_state["tr_live"].trainer.cfg
    assert (cfg.pos, cfg.n_heads, cfg.d_k) == ("rope", 3, 4)
    parity = float(re.search(r"largest difference of \*\*([0-9.e+-]+)\*\*", texts(at)).group(1))
    assert parity < 1e-6
    assert at.query_params["pos"] == "rope"
    at.selectbox(key="tr_pos").set_value("learned")  # switching positions starts a new run
    run_ok(at)
    assert at.session_state["tr_live"].trainer.cfg.pos == "learned" and shown_step(at) == 0


# ---- the link: every control is one PageParam (pages/Train.py), read, fitted with a notice, and written back

BAD = {  # URL name -> a value it does not allow
    "run": "x",
    "show": "-5",
    "step": "-1",
    "layer": "9",
    "head": "0",
    "task": "nope",
    "layers": "3",
    "heads": "abc",
    "d_model": "30",
    "pos": "alibi",
    "mlp": "2",
    "ln": "maybe",
    "vocab": "500",
    "context": "1",
    "lr": "0.5",
    "batch": "1",
    "seed": "-3",
    "steps": "0",
}


def notices(at) -> dict[str, str]:
    """The page's notices by the URL name each starts with (``name=value ... using ...``)."""
    lines = [line[2:] for w in at.warning for line in w.value.splitlines() if line.startswith("- ")]
    return {line.split("=", 1)[0]: line for line in lines}


def test_every_bad_link_value_gets_a_notice_saying_what_was_given_allowed_and_used():
    said = notices(page({"mode": "live", **BAD}))
    for name, value in BAD.items():
        assert name in said, (name, said)
        line = said[name]
        assert f"{name}={value}" in line.replace("'", "") and "; using " in line, line
        assert "allowed" in line or "outside" in line or "not a whole number" in line or "not 1 or 0" in line, line
    assert said["d_model"] == "d_model=30 is not allowed (allowed: 8, 12, 16, 24, 32, 48, 64); using 32."
    assert said["show"] == "show=-5 is outside 0 to 5000; using 0."
    said = notices(page({"mode": "nope"}))
    assert said["mode"] == "mode='nope' is not allowed (allowed: ready, live); using ready."


def test_values_the_widgets_do_not_offer_move_to_the_nearest_with_a_notice():
    """A link's d_model, lr or batch that the select sliders do not offer went silently to the first option
    (d_model 8, lr 0.0001); now to the nearest offered value, said, and the run and the link use it."""
    at = page({**LIVE, "d_model": "30", "lr": "0.005", "batch": "1"})
    said = notices(at)
    assert said["lr"].endswith("using 0.003.") and said["batch"].endswith("using 8.")
    cfg = at.session_state["tr_live"].trainer.cfg
    assert (cfg.d_model, cfg.lr, cfg.batch) == (32, 0.003, 8)
    assert at.select_slider(key="tr_d_model").value == 32
    assert (at.query_params["d_model"], at.query_params["lr"], at.query_params["batch"]) == ("32", "0.003", "8")


def test_the_rules_between_settings_move_the_widget_to_what_runs_and_say_so():
    at = page(LIVE)  # d_model 16
    at.select_slider(key="tr_n_heads").set_value(3)
    run_ok(at)
    assert "d_model=16 is not divisible by n_heads=3; using n_heads=2" in texts(at)
    assert at.select_slider(key="tr_n_heads").value == 2 and at.query_params["heads"] == "2"
    assert at.session_state["tr_live"].trainer.cfg.n_heads == 2
    at = page({**LIVE, "task": "induction", "context": "8"})
    assert "induction needs context >= 10; using 10" in texts(at)
    assert at.number_input(key="tr_context").value == 10 and at.query_params["context"] == "10"


FULL = {  # every live setting away from its default, and the snapshot's head
    "mode": "live",
    "task": "copy",
    "layers": "1",
    "heads": "4",
    "d_model": "48",
    "pos": "sinusoidal",
    "mlp": "1",
    "ln": "1",
    "vocab": "20",
    "context": "24",
    "lr": "0.01",
    "batch": "16",
    "seed": "7",
    "steps": "30",
    "layer": "1",
    "head": "3",
}


def test_a_link_with_every_live_setting_round_trips_into_the_share_link():
    at = page(FULL)
    assert not notices(at)
    link = dict(at.query_params.items())
    assert {k: link[k] for k in FULL} == FULL and link["step"] == "0" and link["show"] == "0"
    cfg = at.session_state["tr_live"].trainer.cfg
    assert (cfg.task, cfg.n_heads, cfg.d_model, cfg.pos, cfg.mlp, cfg.layernorm, cfg.lr, cfg.seed) == (
        "copy", 4, 48, "sinusoidal", True, True, 0.01, 7,
    )  # fmt: skip
    assert "Queries and keys of layer 1 head 3 in one picture" in texts(at)
    again = page(link)
    assert dict(again.query_params.items()) == link
    assert again.session_state["tr_live"].trainer.cfg == cfg


def test_the_ready_link_shows_the_snapshot_at_or_before_show_and_picks_the_most_telling_head():
    at = page({"show": "310"})
    assert "Every head on the probe at step 300" in texts(at) and at.query_params["show"] == "300"
    assert not notices(at)
    layer, head = int(at.query_params["layer"]), int(at.query_params["head"])  # none in the link: picked
    assert f"Queries and keys of layer {layer} head {head} in one picture" in texts(at)
    at.radio(key="tr_run").set_value("induction_1layer")
    run_ok(at)
    if layer == 2:  # the 1-layer run has no layer 2: moved, and said
        assert notices(at)["layer"] == "layer=2 is outside 1 to 1 (1 in this run); using 1."
    assert at.query_params["layer"] == "1" and at.query_params["run"] == "induction_1layer"


def test_plus_one_step_shows_the_new_step_and_scrubbing_stays_until_the_run_moves():
    """+1 step used to leave the maps on the snapshot shown before (the slider kept its value)."""
    at = page(LIVE)
    for n in (1, 2):
        button(at, "+1").click()
        run_ok(at)
        assert f"Every head on the probe at step {n}" in texts(at) and at.query_params["show"] == str(n)
    at.select_slider(key="tr_show").set_value(0)
    run_ok(at)
    run_ok(at)
    assert "Every head on the probe at step 0" in texts(at) and at.query_params["show"] == "0"
    button(at, "↺").click()
    run_ok(at)
    assert shown_step(at) == 0 and at.query_params["step"] == "0"


def test_a_page_switch_keeps_the_mode_the_settings_and_the_run():
    """The widgets' state is dropped on another page; the mode went back to ready and the settings to the first
    option of each widget (a new run). The kept values bring them back."""
    at = page(LIVE)
    button(at, "+1").click()
    run_ok(at)
    at.switch_page("pages/Masks.py")
    run_ok(at)
    at.switch_page(PAGE)
    run_ok(at)
    assert at.radio(key="tr_mode").value == "live" and at.selectbox(key="tr_task").value == "previous"
    assert at.select_slider(key="tr_d_model").value == 16 and shown_step(at) == 1


def test_the_live_run_plays_to_a_links_step_and_its_buttons_change_its_state():
    from attention_core.training import TrainConfig
    from ui.lessons.train.live import LiveRun
    from ui.lessons.train.rationing import STEP_BUDGET

    cfg = TrainConfig(task="previous", n_layers=1, d_model=16, batch=8, steps=40, context=12, vocab=10)
    live = LiveRun(target=7)
    try:
        assert live.use(cfg).step == 0 and live.playing and live.stop_at == 7
        while live.playing:
            live.tick()
        assert live.trainer.step == 7 and live.used == 7 and live.target == 0 and live.stop_at == 40
        live.single_step()
        assert live.trainer.step == 8 and live.moved
        live.play()
        live.tick()
        assert live.sid in QUEUE._active and live.trainer.step > 8
        live.pause()
        assert not live.playing and live.sid not in QUEUE._active  # the slot is given up
        live.reset()
        assert live.trainer.step == 0 and live.trainer.cfg == cfg and not live.playing
        live.used = STEP_BUDGET
        live.single_step()
        assert live.trainer.step == 0  # the budget is spent
        trainer = live.trainer
        assert live.use(cfg) is trainer and live.use(TrainConfig()) is not trainer  # a new setting: a new run
    finally:
        QUEUE.release(live.sid)


def test_the_head_table_and_the_most_telling_head():
    import numpy as np

    from attention_core.training.views import most_telling_head
    from ui.lessons.train.charts import head_score_table

    scores = np.full((2, 2, 3), np.nan)
    scores[..., 0] = [[0.1, 0.9], [0.2, 0.3]]  # previous-token only
    assert most_telling_head(scores) == (0, 1)
    assert head_score_table(scores) == {
        "head": ["L1H1", "L1H2", "L2H1", "L2H2"],
        "previous-token": ["0.10", "0.90", "0.20", "0.30"],
    }
    scores[..., 1] = [[0.0, 0.1], [0.8, 0.2]]  # prefix-matching comes first
    assert most_telling_head(scores) == (1, 0) and list(head_score_table(scores)) == [
        "head", "previous-token", "prefix-matching",
    ]  # fmt: skip
