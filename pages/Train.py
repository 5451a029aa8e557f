"""Train it yourself: a tiny transformer learns to attend, live or from shipped runs."""

import uuid

import numpy as np
import streamlit as st

from attention_core.training import TASK_LABELS, TASKS, TrainConfig, Trainer, positional_kinds
from attention_core.training.config import RANGES
from attention_core.training.export import standalone_script, weights_npz
from attention_core.training.inspect import attention_parity, query_key_picture
from attention_core.training.ready import READY, READY_BY_NAME
from attention_core.training.scores import prefix_matching_score
from attention_core.training.trajectory import Trajectory, find_phase_change, from_trainer
from ui.compute import cached_ready_layers, cached_ready_snapshot_view, cached_ready_trajectory
from ui.page import Page
from ui.tables import show_table
from ui.train_text import (
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
from ui.training import (
    QUEUE,
    STEP_BUDGET,
    best_prefix_matching,
    phase_change_step,
    snapshot_view,
    train_chunk,
)
from ui.training_views import curve_frame, curves_chart, layered, qk_chart, score_frame, scores_chart, show_head_maps

page = Page(
    __file__,
    "Every other map in this app comes from weights someone chose. Here a tiny transformer **learns** where to "
    "look: train it on a toy task and watch its heads change. The ready experiment replays the landmark of "
    "Olsson et al. (2022): with two layers an *induction head* (a head that finds the earlier copy of the current "
    "token and looks at what came next) forms in a sudden phase change; one layer never gets there.",
    title="Train it yourself",
    formula=r"\mathcal{L} = -\frac{1}{N}\sum_t \log p_\theta(y_t \mid x_{\le t}),\qquad "
    r"\text{prefix matching} = \operatorname{mean}_{t \ge p} \sum_{k \ge 1} A_{t,\,t-kp+1}",
)
st.caption(LOSS_CAPTION)

qp = st.query_params
ss = st.session_state
notices: list[str] = []
LIVE_FIELDS = (
    "task",
    "n_layers",
    "n_heads",
    "d_model",
    "pos",
    "mlp",
    "layernorm",
    "vocab",
    "context",
    "lr",
    "batch",
    "seed",
    "steps",
)
URL_NAMES = {"n_layers": "layers", "n_heads": "heads", "layernorm": "ln"}  # field -> URL key (others: same)


def url_int(key: str, default: int, low: int, high: int) -> int:
    raw = qp.get(key)
    if raw is None:
        return default
    try:
        value = int(float(raw))
    except (TypeError, ValueError):
        notices.append(f"{key}={raw!r} is not a number; using {default}")
        return default
    clipped = min(max(value, low), high)
    if clipped != value:
        notices.append(f"{key}={raw} is out of range {low}-{high}; using {clipped}")
    return clipped


def show_details(traj: Trajectory, index: int, view_fn, key: str) -> None:
    """Maps, head scores, the query/key picture, parity and exports of snapshot ``index`` of ``traj``."""
    cfg = traj.cfg
    snap = traj.snapshot(index)
    if ss.tr_layer < 0:  # no head chosen yet: the best prefix-matching (else previous-token / on-B) head of this step
        k = next((k for k in (1, 2, 0) if not np.isnan(snap.scores[..., k]).all()), 0)
        ss.tr_layer, ss.tr_head = (
            int(i) for i in np.unravel_index(np.nanargmax(snap.scores[..., k]), snap.scores.shape[:2])
        )
    pickers = (("layer", cfg.n_layers, ss.tr_layer), ("head", cfg.n_heads, ss.tr_head))  # what, how many, chosen
    layer, head = (
        col.selectbox(
            f"{what} (query/key picture)",
            range(count),
            format_func=lambda i, what=what: f"{what} {i + 1}",
            index=min(chosen, count - 1),
            key=f"{key}_{what}",
        )
        for col, (what, count, chosen) in zip(st.columns(2), pickers)
    )
    ss.tr_layer, ss.tr_head = layer, head
    qp.update({"layer": str(layer + 1), "head": str(head + 1)})
    view = view_fn(layer, head)
    st.subheader(f"Every head on the probe at step {snap.step}")
    st.caption(probe_caption(view.tokens))
    show_head_maps(view.maps, view.tokens, key=f"{key}_maps")
    table = {
        name: [f"{snap.scores[layer_i, h, k]:.2f}" for layer_i in range(cfg.n_layers) for h in range(cfg.n_heads)]
        for k, name in enumerate(("previous-token", "prefix-matching", "attention on B"))
        if not np.isnan(snap.scores[..., k]).all()
    }
    heads = [f"L{layer_i + 1}H{h + 1}" for layer_i in range(cfg.n_layers) for h in range(cfg.n_heads)]
    show_table(st, {"head": heads, **table}, hide_index=True)
    st.subheader(f"Queries and keys of layer {layer + 1} head {head + 1} in one picture")
    st.vega_lite_chart(qk_chart(view.qk, view.tokens), width="stretch")
    st.caption(query_key_caption(view.qk.explained))
    st.markdown(parity_sentence(snap.step, cfg, view))
    d1, d2 = st.columns(2)
    d1.download_button(
        f"Weights at step {snap.step} (.npz)",
        weights_npz(cfg, snap.params),
        file_name=f"tiny_transformer_step{snap.step}.npz",
        key=f"{key}_npz",
    )
    d2.download_button(
        "Standalone training script (torch only)",
        standalone_script(cfg),
        file_name="train_tiny_transformer.py",
        key=f"{key}_script",
    )
    st.caption("The script draws the same weights and batches from the same seed and prints the same loss curve.")


def scrubber(traj: Trajectory, key: str) -> int:
    """A step slider over the kept snapshots; returns the snapshot index (the URL's show=)."""
    steps = [int(s) for s in traj.steps]
    want = steps[-1] if ss.tr_view < 0 else steps[traj.index_at(ss.tr_view)]
    if ss.get(key) not in steps:
        ss[key] = want
    shown = st.select_slider("Step shown (scrub through the kept snapshots)", options=steps, key=key)
    ss.tr_view = shown
    return steps.index(shown)


def ready_section() -> None:
    two, one = (cached_ready_trajectory(r.name) for r in READY)
    cliff = phase_change_step(two)
    cliff_one = phase_change_step(one)
    best = best_prefix_matching(two), best_prefix_matching(one)
    st.markdown(phase_change_sentence((two, one), (cliff, cliff_one), best))
    st.caption(ready_runs_caption(two.cfg))
    layers = cached_ready_layers()
    name = st.radio(
        "Run to inspect",
        [r.name for r in READY],
        key="tr_run",
        horizontal=True,
        format_func=lambda n: READY_BY_NAME[n].label,
    )
    traj = two if name == READY[0].name else one
    index = scrubber(traj, key=f"tr_scrub_{name}")
    marks = [(cliff, "2 layers: phase change")] if cliff else []
    shown = int(traj.steps[index])
    length = max(int(two.steps[-1]), int(one.steps[-1]))  # the step axis: 0 to the runs' length
    for curve, curve_title, score, score_title in (  # one row each: a curve of both runs, a head score of both
        ("loss", "Loss (held-out solid, train dashed)", "prefix-matching", "Prefix-matching score of every head"),
        ("accuracy", "Accuracy on repeated tokens", "previous-token", "Previous-token score of every head"),
    ):
        a, b = st.columns(2)
        a.vega_lite_chart(layered(curve_title, layers[curve], marks, shown, length), width="stretch")
        b.vega_lite_chart(layered(score_title, layers[score], marks, shown, length), width="stretch")
    qp.update({"mode": "ready", "run": name, "show": str(shown)})
    show_details(traj, index, lambda layer, head: cached_ready_snapshot_view(name, index, layer, head), key="ready")


def live_settings() -> TrainConfig:
    """The live run's settings (each widget bound to session state seeded from the link)."""
    with st.expander("Settings (changing one starts a new run)", expanded=True):
        c = st.columns(4)
        c[0].selectbox("task", TASKS, key="tr_task", format_func=TASK_LABELS.get)
        c[1].select_slider("layers", [1, 2], key="tr_n_layers")
        c[2].select_slider("heads", [1, 2, 3, 4], key="tr_n_heads")
        c[3].select_slider("d_model", [8, 12, 16, 24, 32, 48, 64], key="tr_d_model")
        c = st.columns(4)
        c[0].selectbox("positions", positional_kinds(), key="tr_pos")
        c[1].toggle("MLP after attention", key="tr_mlp")
        c[2].toggle("LayerNorm", key="tr_layernorm")
        c[3].select_slider("learning rate", [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2], key="tr_lr")
        c = st.columns(5)
        c[0].select_slider("batch", [8, 16, 32, 64, 128, 256], key="tr_batch")
        c[1].number_input("seed", 0, RANGES["seed"][1], key="tr_seed")
        c[2].number_input("steps to train", 1, RANGES["steps"][1], key="tr_steps")
        c[3].number_input("vocab", *RANGES["vocab"], key="tr_vocab")
        c[4].number_input("context", *RANGES["context"], key="tr_context")
    raw = {f: ss[f"tr_{f}"] for f in LIVE_FIELDS}
    cfg, notes = TrainConfig.clamped(**{k: str(v) for k, v in raw.items()})
    for note in notes:
        st.warning(f"Settings: {note}", icon=":material/warning:")
    return cfg


def _play() -> None:
    ss.tr_playing = True


def _pause() -> None:
    ss.tr_playing = False
    QUEUE.release(ss.tr_sid)


def _single_step() -> None:
    if ss.tr_used < STEP_BUDGET:
        ss.tr_trainer.train(1)
        ss.tr_used += 1
    ss.tr_view = -1


def _reset() -> None:
    QUEUE.release(ss.tr_sid)
    ss.tr_trainer = Trainer(ss.tr_trainer.cfg)
    ss.tr_playing, ss.tr_view, ss.tr_link_step = False, -1, 0


def live_section() -> None:
    cfg = live_settings()
    trainer: Trainer | None = ss.get("tr_trainer")
    if trainer is None or trainer.cfg != cfg:
        if trainer is not None:
            ss.tr_view, ss.tr_link_step = -1, 0
        QUEUE.release(ss.tr_sid)
        trainer = ss.tr_trainer = Trainer(cfg)
        ss.tr_playing = ss.tr_link_step > 0  # a link that had reached a step retrains to it
    b = st.columns([1, 1, 1, 1, 3])  # callbacks run before the page draws, so the buttons show the new state
    b[0].button("▶ Play", disabled=ss.tr_playing, width="stretch", on_click=_play)
    b[1].button("⏸ Pause", disabled=not ss.tr_playing, width="stretch", on_click=_pause)
    b[2].button("+1 step", disabled=ss.tr_playing, width="stretch", on_click=_single_step)
    b[3].button("↺ Reset", width="stretch", on_click=_reset)
    st.fragment(live_view, run_every=0.3 if ss.tr_playing else None)()


def live_view() -> None:
    trainer: Trainer = ss.tr_trainer
    cfg = trainer.cfg
    stop_at = ss.tr_link_step or cfg.steps  # a link that had reached a step retrains exactly to it
    if ss.tr_playing:
        place = QUEUE.request(ss.tr_sid)
        left = STEP_BUDGET - ss.tr_used
        if left <= 0 or trainer.step >= stop_at:
            ss.tr_playing, ss.tr_link_step = False, 0
            QUEUE.release(ss.tr_sid)
            st.rerun()  # redraw the buttons and stop the timer
        elif place:
            st.info(queue_notice(QUEUE.limit, place))
        else:
            ss.tr_used += train_chunk(trainer, stop_at, left)
            ss.tr_view = -1
    if ss.tr_used >= STEP_BUDGET:
        st.warning(budget_warning(STEP_BUDGET))
    traj = from_trainer(trainer, current=not ss.tr_playing)  # while playing: the newest kept snapshot
    st.markdown(live_step_sentence(trainer.step, cfg.steps, ss.tr_playing, traj))
    # read after this run's chunk, in the live fragment: as fresh as the step beside it (drawn above the fragment,
    # it kept saying "0 training now ... 3000 of 3000" through a whole run)
    st.caption(server_status(QUEUE.status(), ss.tr_used, STEP_BUDGET))
    if ss.tr_playing:
        index = len(traj.steps) - 1
        st.caption("Following the newest snapshot; pause to scrub.")
    else:
        index = scrubber(traj, key="tr_scrub_live")
    shown = int(traj.steps[index])
    best = best_prefix_matching(traj)
    cliff = None if np.isnan(best).all() else find_phase_change(traj.steps, best)
    marks = [(cliff, "phase change")] if cliff else []
    df, sf = curve_frame(traj, "live"), score_frame(traj, "live")
    length = max(cfg.steps, stop_at, trainer.step)  # the step axis: 0 to where this run stops
    a, b = st.columns(2)
    a.vega_lite_chart(curves_chart(df, "loss", "Loss", marks, shown, steps=length), width="stretch")
    b.vega_lite_chart(curves_chart(df, "accuracy", "Accuracy", marks, shown, steps=length), width="stretch")
    names = list(dict.fromkeys(sf["score"]))
    cols = st.columns(len(names))
    for col, name in zip(cols, names):
        title = f"{name} score of every head"
        col.vega_lite_chart(scores_chart(sf, name, title, marks, shown, steps=length), width="stretch")
    if cliff:
        st.markdown(live_phase_change_sentence(cliff, best))
    qp.update(
        {
            "mode": "live",
            "step": str(trainer.step),
            "show": str(shown),
            **{
                URL_NAMES.get(f, f): str(int(v) if isinstance(v, bool) else v)
                for f, v in ((f, getattr(cfg, f)) for f in LIVE_FIELDS)
            },
        }
    )
    show_details(traj, index, lambda layer, head: snapshot_view(cfg, traj.params[index], layer, head), key="live")


def _draw() -> list[tuple[str, str]]:
    """The link's settings (once per session), the choice of ready or live runs, and that section."""
    if "tr_seeded" not in ss:  # seed the widgets from the link once per session
        ss.tr_seeded, ss.tr_sid = True, uuid.uuid4().hex
        mode = qp.get("mode", "ready")
        if mode not in ("ready", "live"):
            notices.append(f"mode={mode!r} is not offered; using 'ready' (allowed: ready, live)")
            mode = "ready"
        ss.tr_mode = mode
        run = qp.get("run", READY[0].name)
        if run not in READY_BY_NAME:
            notices.append(f"run={run!r} is not a ready experiment; using {READY[0].name!r}")
            run = READY[0].name
        ss.tr_run = run
        cfg, cfg_notes = TrainConfig.clamped(**{f: qp.get(URL_NAMES.get(f, f)) for f in LIVE_FIELDS})
        notices.extend(cfg_notes)
        for f in LIVE_FIELDS:
            ss[f"tr_{f}"] = getattr(cfg, f)
        ss.tr_view = url_int("show", -1, -1, RANGES["steps"][1])
        ss.tr_link_step = url_int("step", 0, 0, RANGES["steps"][1])
        ss.tr_layer = url_int("layer", 0, 0, 2) - 1  # -1: pick the most telling head
        ss.tr_head = url_int("head", 1, 1, 4) - 1
        ss.tr_used = 0
        ss.tr_playing = False
    for note in notices:
        st.warning(f"Link: {note}", icon=":material/warning:")

    mode = st.radio(
        "What to show",
        ["ready", "live"],
        key="tr_mode",
        horizontal=True,
        format_func={
            "ready": "Ready experiment: induction heads (instant, shipped runs)",
            "live": "Train live (your settings)",
        }.get,
    )
    if mode == "ready":
        ready_section()
    else:
        live_section()
    return check_questions()


page.run(_draw, code=(Trainer.train, prefix_matching_score, attention_parity, query_key_picture, train_chunk))
