"""Train it yourself: a tiny transformer learns to attend, live or from shipped runs."""

from dataclasses import replace

import streamlit as st

from attention_core.training import TASK_LABELS, TASKS, TrainConfig, Trainer
from attention_core.training.config import POSITIONAL, RANGES
from attention_core.training.inspect import attention_parity, query_key_picture
from attention_core.training.ready import READY
from attention_core.training.scores import prefix_matching_score
from attention_core.training.trajectory import Trajectory, from_trainer
from attention_core.training.views import best_prefix_matching, most_telling_head, phase_change_step, snapshot_view
from ui.compute import cached_ready_layers, cached_ready_snapshot_view, cached_ready_trajectory
from ui.draw import vega
from ui.draw.tables import show_table
from ui.lessons.train.charts import head_score_table, layered, qk_chart, show_exports, show_head_maps, show_run_charts
from ui.lessons.train.live import TICK, LiveRun
from ui.lessons.train.rationing import QUEUE, STEP_BUDGET, train_chunk
from ui.lessons.train.text import (
    LOSS_CAPTION,
    budget_warning,
    check_questions,
    live_phase_change_sentence,
    live_step_sentence,
    parity_sentence,
    phase_change_sentence,
    probe_caption,
    query_key_caption,
    queue_notice,
    ready_runs_caption,
    server_status,
)
from ui.session.state import kept_value, set_kept
from ui.skeleton.page import Page
from ui.skeleton.page_params import PageParam, draw, in_link, note, restore, write_params
from ui.text import head_name

page = Page(
    __file__,
    "Every other map in this app comes from weights someone chose. Here a tiny transformer **learns** where to "
    "look: train it on a toy task and watch its heads change. The ready experiment replays the landmark of "
    "Olsson et al. (2022): with two layers an *induction head* (a head that finds the earlier copy of the current "
    "token and looks at what came next) forms in a sudden **phase change** (after a long plateau the model's "
    "errors fall within a few steps); one layer never gets there.",
    title="Train it yourself",
    formula=r"\mathcal{L} = -\frac{1}{N}\sum_t \log p_\theta(y_t \mid x_{\le t}),\qquad "
    r"\text{prefix matching} = \operatorname{mean}_{t \ge p} \sum_{k \ge 1} A_{t,\,t-kp+1}",
)
st.caption(LOSS_CAPTION)
ss = st.session_state

# ---- the page's controls, each bound to the link (ranges from attention_core/training/config.py)
MODE = PageParam(
    "tr_mode",
    "mode",
    "ready",
    choices=("ready", "live"),
    label="What to show",
    names=("Ready experiment: induction heads (instant, shipped runs)", "Train live (your settings)"),
)
RUN = PageParam(
    "tr_run",
    "run",
    READY[0].name,
    choices=tuple(r.name for r in READY),
    label="Run to inspect",
    names=tuple(r.label for r in READY),
)
LAST = RANGES["steps"][1]  # no run is longer: show=LAST is the newest snapshot of any run
STEP = PageParam("tr_step", "step", 0, lo=0, hi=LAST, integer=True, label="step the live run had reached")
SHOW = PageParam(
    "tr_show", "show", LAST, lo=0, hi=LAST, integer=True, label="Step shown (scrub through the kept snapshots)"
)
PICKED = dict(lo=1, integer=True, widget="selectbox")  # the head of the query/key picture, 1-based
LAYER = PageParam("tr_layer", "layer", 1, hi=RANGES["n_layers"][1], label="layer (query/key picture)", **PICKED)
HEAD = PageParam("tr_head", "head", 1, hi=RANGES["n_heads"][1], label="head (query/key picture)", **PICKED)


def _whole(field: str) -> dict:
    """A PageParam's limits for the whole numbers RANGES allows ``field``, typed into a number box."""
    return dict(lo=RANGES[field][0], hi=RANGES[field][1], integer=True, widget="number")


def _each(field: str) -> dict:
    """A PageParam's choices for every whole number RANGES allows ``field`` (a select slider of a few)."""
    return dict(choices=tuple(range(RANGES[field][0], RANGES[field][1] + 1)), integer=True)


D = TrainConfig()  # the live settings' defaults
SETTINGS = {  # the live run's settings by TrainConfig field, in the order drawn (rows of 4, 4 and 5)
    "task": PageParam("tr_task", "task", D.task, choices=TASKS, names=tuple(map(TASK_LABELS.get, TASKS))),
    "n_layers": PageParam("tr_n_layers", "layers", D.n_layers, label="layers", **_each("n_layers")),
    "n_heads": PageParam("tr_n_heads", "heads", D.n_heads, label="heads", **_each("n_heads")),
    "d_model": PageParam("tr_d_model", "d_model", D.d_model, choices=(8, 12, 16, 24, 32, 48, 64), integer=True),
    "pos": PageParam("tr_pos", "pos", D.pos, choices=POSITIONAL, label="positions", widget="selectbox"),
    "mlp": PageParam("tr_mlp", "mlp", D.mlp, boolean=True, label="MLP after attention"),
    "layernorm": PageParam("tr_layernorm", "ln", D.layernorm, boolean=True, label="LayerNorm"),
    "lr": PageParam("tr_lr", "lr", D.lr, choices=(1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2), label="learning rate"),
    "batch": PageParam("tr_batch", "batch", D.batch, choices=(8, 16, 32, 64, 128, 256), integer=True),
    "seed": PageParam("tr_seed", "seed", D.seed, **_whole("seed")),
    "steps": PageParam("tr_steps", "steps", D.steps, label="steps to train", **_whole("steps")),
    "vocab": PageParam("tr_vocab", "vocab", D.vocab, **_whole("vocab")),
    "context": PageParam("tr_context", "context", D.context, **_whole("context")),
}
READY_LINK = (MODE, RUN, SHOW, LAYER, HEAD)  # what each section writes into the link
LIVE_LINK = (MODE, STEP, SHOW, *SETTINGS.values(), LAYER, HEAD)


def live_setting() -> TrainConfig:
    """The live run's setting: each control fitted to its own range, then to the rules between them
    (TrainConfig.clamped: heads divide d_model, rope's even d_k, induction's context), the controls moved to the
    setting that runs, with a notice for each change."""
    restore(list(SETTINGS.values()))
    cfg, notices = TrainConfig.clamped(**{f: ss[p.key] for f, p in SETTINGS.items()})
    for f, p in SETTINGS.items():
        if ss[p.key] != getattr(cfg, f):
            set_kept(p.key, getattr(cfg, f))
    for text in notices:
        note(text)
    return cfg


def scrubber(traj: Trajectory, newest: bool = False) -> int:
    """The step slider over the kept snapshots (show=, at the last kept snapshot at or before it, or the newest);
    returns the index of the snapshot shown."""
    steps = tuple(int(s) for s in traj.steps)
    set_kept(SHOW.key, steps[-1 if newest else traj.index_at(ss[SHOW.key])])
    return steps.index(draw(replace(SHOW, choices=steps)))


def show_details(traj: Trajectory, index: int, view_fn, key: str) -> None:
    """Maps, head scores, the query/key picture, parity and exports of snapshot ``index`` of ``traj``."""
    cfg, snap = traj.cfg, traj.snapshot(index)
    if kept_value(LAYER.key, None) is None and not in_link(LAYER):  # none chosen: the most telling
        for p, i in zip((LAYER, HEAD), most_telling_head(snap.scores)):
            set_kept(p.key, i + 1)
    c1, c2 = st.columns(2)
    layer = draw(
        replace(LAYER, hi=cfg.n_layers, why=f"({cfg.n_layers} in this run)"), c1, format_func="layer {}".format
    )
    head = draw(
        replace(HEAD, hi=cfg.n_heads, why=f"({cfg.n_heads} in this run)"), c2, format_func=lambda h: head_name(h - 1)
    )
    layer, head = layer - 1, head - 1  # 0-based from here
    view = view_fn(layer, head)
    st.subheader(f"Every head on the probe at step {snap.step}")
    st.caption(probe_caption(view.tokens))
    show_head_maps(view.maps, view.tokens, key=f"{key}_maps")
    show_table(st, head_score_table(snap.scores), hide_index=True)
    st.subheader(f"Queries and keys of layer {layer + 1} {head_name(head)} in one picture")
    vega.draw(None, qk_chart(view.qk, view.tokens), width="stretch")
    st.caption(query_key_caption(view.qk.explained))
    st.markdown(parity_sentence(snap.step, cfg, view))
    show_exports(cfg, snap, key)


def ready_section() -> None:
    two, one = (cached_ready_trajectory(r.name) for r in READY)
    cliff, cliff_one = phase_change_step(two), phase_change_step(one)
    best = best_prefix_matching(two), best_prefix_matching(one)
    st.markdown(phase_change_sentence((two, one), (cliff, cliff_one), best))
    st.caption(ready_runs_caption(two.cfg))
    layers = cached_ready_layers()
    name = page.control(RUN)
    traj = two if name == READY[0].name else one
    index = scrubber(traj)
    marks = [(cliff, "2 layers: phase change")] if cliff else []
    shown = int(traj.steps[index])
    length = max(int(two.steps[-1]), int(one.steps[-1]))  # the step axis: 0 to the runs' length
    for curve, curve_title, score, score_title in (  # one row each: a curve of both runs, a head score of both
        ("loss", "Loss (held-out solid, train dashed)", "prefix-matching", "Prefix-matching score of every head"),
        ("accuracy", "Accuracy on repeated tokens", "previous-token", "Previous-token score of every head"),
    ):
        a, b = st.columns(2)
        vega.draw(a, layered(curve_title, layers[curve], marks, shown, length), width="stretch")
        vega.draw(b, layered(score_title, layers[score], marks, shown, length), width="stretch")
    show_details(traj, index, lambda layer, head: cached_ready_snapshot_view(name, index, layer, head), key="ready")
    write_params(READY_LINK)


def live_section(cfg: TrainConfig) -> None:
    """The settings, the buttons, and the run (a fragment that reruns itself while the run plays)."""
    with st.expander("Settings (changing one starts a new run)", expanded=True):
        controls = iter(SETTINGS.values())
        for n in (4, 4, 5):
            for box in st.columns(n):
                page.control(next(controls), box)
    live = LiveRun.of_session(link_step=ss[STEP.key])
    live.use(cfg)
    b = st.columns([1, 1, 1, 1, 3])  # callbacks run before the page draws, so the buttons show the new state
    b[0].button("▶ Play", disabled=live.playing, width="stretch", on_click=live.play)
    b[1].button("⏸ Pause", disabled=not live.playing, width="stretch", on_click=live.pause)
    b[2].button("+1 step", disabled=live.playing, width="stretch", on_click=live.single_step)
    b[3].button("↺ Reset", width="stretch", on_click=live.reset)
    st.fragment(live_view, run_every=TICK if live.playing else None)(live)


def live_view(live: LiveRun) -> None:
    if live.playing:
        place = live.tick()
        if not live.playing:
            st.rerun()  # it stopped: redraw the buttons and end the timer
        if place:
            st.info(queue_notice(QUEUE.limit, place))
    trainer, cfg = live.trainer, live.trainer.cfg
    if live.used >= STEP_BUDGET:
        st.warning(budget_warning(STEP_BUDGET))
    traj = from_trainer(trainer, current=not live.playing)  # while playing: the newest kept snapshot
    st.markdown(live_step_sentence(trainer.step, cfg.steps, live.playing, traj))
    # read after this run's chunk, in the live fragment: as fresh as the step beside it (drawn above the fragment,
    # it kept saying "0 training now ... 3000 of 3000" through a whole run)
    st.caption(server_status(QUEUE.status(), live.used, STEP_BUDGET))
    moved, live.moved = live.moved, False  # the run moved since the last drawing: show its newest snapshot
    if live.playing:
        index = len(traj.steps) - 1
        set_kept(SHOW.key, int(traj.steps[index]))
        st.caption("Following the newest snapshot; pause to scrub.")
    else:
        index = scrubber(traj, newest=moved)
    shown = int(traj.steps[index])
    best, cliff = best_prefix_matching(traj), phase_change_step(traj)
    marks = [(cliff, "phase change")] if cliff else []
    show_run_charts(traj, marks, shown, steps=max(cfg.steps, live.stop_at, trainer.step))  # 0 to where it stops
    if cliff:
        st.markdown(live_phase_change_sentence(cliff, best))
    show_details(traj, index, lambda layer, head: snapshot_view(cfg, traj.params[index], layer, head), key="live")
    set_kept(STEP.key, trainer.step)
    write_params(LIVE_LINK)


def _draw() -> list[tuple[str, str]]:
    """The choice of ready or live runs, and that section. The whole link is read on the session's first run."""
    restore([RUN, STEP, SHOW])
    cfg = live_setting()
    if page.control(MODE) == "ready":
        ready_section()
    else:
        live_section(cfg)
    return check_questions()


page.run(_draw, code=(Trainer.train, prefix_matching_score, attention_parity, query_key_picture, train_chunk))
