"""Compare: two what-ifs side by side (A and B), their weights, outputs, saturation and differences."""

import numpy as np
import streamlit as st

from attention_core import run_whatif
from attention_core.readout import compare_runs, differing_settings, sharpness, uniform_max_weight
from ui.classroom.mode import Prediction, predict
from ui.compute import cached_comparison, cached_run, cached_saturation
from ui.draw.charts import (
    Axes,
    is_vector,
    shared_domain,
    show_heatmap,
    show_images,
    show_token_dims,
    show_weights,
    stretching,
    token_dims_image,
    weight_scale,
)
from ui.draw.metrics import comparison_table
from ui.glossary import defined, scale_sentence
from ui.lessons.compare.text import (
    check_questions,
    differences,
    fewer_heads_note,
    live_weights_caption,
    no_output_diff_notice,
    no_weight_diff_notice,
    outputs_caption,
    outputs_live_caption,
    saturation_caption,
    sharper_prediction,
    weight_diff_caption,
)
from ui.live import (
    CONTROLS,
    OutputMap,
    Panel,
    live_maps,
    live_on,
    live_outputs,
    live_sync,
    live_toggle,
    release_into,
    setting_of,
)
from ui.session.partial import rerun_body
from ui.session.url import URL_NAMES
from ui.skeleton.controls import LEAF_CONTROLS, ControlSet, set_current, stretch_toggle, whatif_controls
from ui.skeleton.lesson import Question
from ui.skeleton.page import Page
from ui.skeleton.widgets import head_picker
from ui.text import head_name

page = Page(
    __file__,
    "Two settings side by side, A and B: their weights, saturation and outputs, and the difference B − A. Each one's "
    "input and size are set in the sidebar; its temperature, scaling and mask right above the maps.",
)
shared = page.setting()
A_SET, B_SET = ControlSet("whatif_a", "a_", "a_"), ControlSet("whatif_b", "b_", "b_")
SHOW = ("input_kind", "seq_len", "d_model", "n_heads", "seed")  # each set's sidebar controls
MAP_SETTINGS = ("scaled", "temperature", "mask")  # set above the maps (live: the maps' own controls), nowhere else
SATURATION_KEYS = ("max_weight", "entropy", "effective_tokens", "near_one_hot_share")  # the saturation table's columns


def _reset() -> None:
    """Both sides back to the shared setting, A scaled and B unscaled (a button callback)."""
    for cs, scaled in ((A_SET, True), (B_SET, False)):
        set_current(shared.replace(scaled=scaled), cs=cs)  # the run's end writes both sets into the link


def _mean(sat, key):
    return float(np.mean([s[key] for s in sat]))


def _controls() -> tuple:
    """The full-run part: A's and B's input controls in the sidebar, the reset, the head picker, the maps with A's
    and B's temperature, scaling and mask above them; the body's places. A release of the live maps' own controls
    reruns only the body: no widget of the full run shows those settings."""
    page.keep_in_url()  # the shared setting stays in the link (the reset goes back to it)
    live = live_on()
    leaf = LEAF_CONTROLS - {"seed", "positional"} if live else LEAF_CONTROLS  # live maps hold the scores
    with st.sidebar.expander("Settings of A", expanded=True):
        cfg_a = page.whatif_set(A_SET, st, SHOW, default=shared.replace(scaled=True), label_suffix=" (A)", leaf=leaf)
    with st.sidebar.expander("Settings of B", expanded=True):
        cfg_b = page.whatif_set(B_SET, st, SHOW, default=shared.replace(scaled=False), label_suffix=" (B)", leaf=leaf)
    st.sidebar.button("Reset A and B to the shared setting (scaling on / off)", key="cmp_reset", on_click=_reset)
    stretch_toggle()
    top_left, top_right = st.columns([3, 1])  # the opening sentence and the head picker share one row
    H = max(cfg_a.n_heads, cfg_b.n_heads)
    head = head_picker("head", H, key="cmp_head", container=top_right, on_change=rerun_body)
    revealed = predict(_sharper_question(cfg_a, cfg_b))
    if revealed:  # before the reveal nothing is drawn under them: no heading without its maps
        st.subheader("Attention weights")
        live_toggle()
    hidden = page.hides(MAP_SETTINGS)
    if hidden:  # as the sidebar's sets say it for theirs (ui.skeleton.page.Page.whatif_set)
        fixed = [
            f"{URL_NAMES[n]} = {getattr(cfg_a, n)} (A), {getattr(cfg_b, n)} (B)" for n in MAP_SETTINGS if n in hidden
        ]
        st.caption("This lesson's link fixes " + "; ".join(fixed) + "; those controls are hidden.")
    live_io = False  # A's Z, B's Z and B − A drawn by the browser: the maps' feed carries X, V and W_o (set below)
    if live and revealed:  # A's and B's own controls above their maps set the temperature, the scaling and the mask
        own = tuple(c for c in CONTROLS if c not in hidden)
        panels = [
            Panel(
                name,
                cached_run(cfg),
                # the picked head as the picker shows it: the maps show a side with fewer heads its last, and a
                # release hands each side's head back, where one out of a side's range is dropped (release_into)
                setting_of(cfg, head, 0, stretching()),
                release_into(cs, {"head": "cmp_head"}),
                title=name,
                controls=own,
                heads="picked",
            )
            for name, cfg, cs in (("A", cfg_a, A_SET), ("B", cfg_b, B_SET))
        ]
        # both outputs small enough to be drawn cell by cell: the browser draws them too, Z following the maps
        live_io = is_vector((panels[0].run.T, cfg_a.d_model)) and is_vector((panels[1].run.T, cfg_b.d_model))
        live_maps("cmp_live", panels, diff=("A", "B"), size=150, partial=True, outputs=live_io)
    elif shown := tuple(n for n in MAP_SETTINGS if n not in hidden):  # the same settings as widgets, A beside B
        for col, cs, name in zip(st.columns(2), (A_SET, B_SET), "AB"):
            whatif_controls(col, cs, shown, label_suffix=f" ({name})", leaf=LEAF_CONTROLS)
    maps = st.container()
    if not revealed:
        return top_left, maps, None, None, live_io
    # what no leaf control changes is drawn here, once per full run: the headings and the words; the body fills
    # the places between them (a body rerun sends only what a release changed)
    st.subheader("Saturation (mean over heads) and the difference B − A")
    saturation = st.container()
    with st.expander("The words on this page"):
        st.markdown(scale_sentence() + "\n\n" + defined(*SATURATION_KEYS, "relative_change"))
    st.subheader("Outputs")
    return top_left, maps, saturation, st.container(), live_io


def _static_weights(box, run_a, run_b, ha: int, hb: int, cmp) -> None:
    """A's and B's picked heads and B − A drawn by the server (live maps off), on one colour scale."""
    c1, c2, c3 = box.columns(3)
    pair = ((c1, run_a, ha, "A"), (c2, run_b, hb, "B"))
    scale = weight_scale(
        *(r.weights[h] for _, r, h, _ in pair), allowed=[r.mask for _, r, h, _ in pair], group="A and B"
    )
    for col, run, h, name in pair:
        # one colour scale for A and B; no legend: the key axis states it, and the three maps fit 1280 px
        with col:
            show_weights(
                run.weights[h],
                run.tokens,
                title=f"{name}: {head_name(h)}",
                allowed=run.mask,
                scale=scale,
                size=150,
                legend=False,
            )
    if cmp.weight_diff is not None:
        biggest = float(np.abs(cmp.weight_diff).max())
        # the same units as A and B: -1 to 1, so a small change looks small; stretched with them (to its own range)
        lim = (biggest or 1.0) if scale.stretched else 1.0
        show_heatmap(
            cmp.weight_diff,
            run_a.tokens,
            run_a.tokens,
            title="B − A",
            axes=Axes(value="Δ weight"),
            scheme="diverging",
            domain=(-lim, lim),
            note=f"colour stretched to ±{lim:.3g}" if scale.stretched else "",
            group="B − A",
            container=c3,
            size=130,  # leaves room for the legend inside the column at 1280 px
        )
        c3.caption(weight_diff_caption(lim, biggest))
    else:
        c3.info(no_weight_diff_notice(run_a.T, run_b.T))


def _weights_said(box, cmp) -> None:
    """Under the live maps: the largest change of a weight, from the numbers the server computed."""
    if cmp.weight_diff is not None:
        box.caption(live_weights_caption(float(np.abs(cmp.weight_diff).max()), stretching()))


def _sharper_question(cfg_a, cfg_b) -> Prediction:
    """Whose rows are sharper, A's or B's? Reasoned from what differs (scaling, temperature, heads)."""
    ma = _mean(cached_saturation(cfg_a), "max_weight")
    mb = _mean(cached_saturation(cfg_b), "max_weight")
    same = abs(ma - mb) <= 1e-9 * max(ma, mb, 1e-12)
    question, reveal = sharper_prediction(cfg_a, cfg_b, ma, mb)
    correct = 2 if same else 0 if ma > mb else 1
    return Prediction("compare.sharper", question, ("A", "B", "the same"), correct, reveal, signature=(cfg_a, cfg_b))


def _outputs(box, cfg_a, cfg_b, run_a, run_b, cmp, live: bool) -> None:
    """A's Z, B's Z and (same shape) B − A, on one colour scale, with what separates them, into ``box`` (``live``:
    drawn by the browser, each Z following its side's live maps; else side by side in one wrapping row, one block
    where two rows of columns sent six)."""
    z_domain = shared_domain(run_a.output, run_b.output, symmetric=True)  # one colour scale for both outputs
    shape_a, shape_b = (run_a.T, cfg_a.d_model), (run_b.T, cfg_b.d_model)
    if live:
        maps = [OutputMap("z", "A", "A: Z"), OutputMap("z", "B", "B: Z")]
        scope = "one scale for A's Z and B's Z"
        if cmp.output_diff is not None:
            maps.append(OutputMap("diff", "B", "Z: B − A", base="A"))
            scope = "one scale for A's Z, B's Z and B − A"
        with box:
            live_outputs("cmp_live", {"A": run_a, "B": run_b}, maps, scope=scope)
        if cmp.output_diff is not None:
            box.caption(outputs_caption(z_domain[1], cmp.output_change, shape_a, shape_b, live=True))
        else:
            box.info(no_output_diff_notice(shape_a, shape_b))
            box.caption(outputs_live_caption(z_domain[1]))
        return
    # each map with the settings its numbers are made from (the images' cache key: no digest of a 512 x 1024 map)
    maps = [(run_a.output, run_a.tokens, "A: Z", "z", cfg_a), (run_b.output, run_b.tokens, "B: Z", "z", cfg_b)]
    if cmp.output_diff is not None:  # on the outputs' own scale: a small change looks small
        maps.append((cmp.output_diff, run_a.tokens, "Z: B − A", "Δ z", (cfg_a, cfg_b)))
    if is_vector(shape_a) or is_vector(shape_b):  # drawn cell by cell: one wrapping row of charts
        row = box.container(horizontal=True, gap="medium")
        for m, tokens, title, value, _ in maps:
            show_token_dims(
                m, tokens, title=title, value_name=value, domain=z_domain, group="Z", container=row, size=240
            )
    else:  # too large to draw cell by cell: the images side by side, one element
        images = [token_dims_image(m, t, title=n, domain=z_domain, value_name=v, ident=i) for m, t, n, v, i in maps]
        show_images(box, images)
    if cmp.output_diff is not None:
        box.caption(outputs_caption(z_domain[1], cmp.output_change, shape_a, shape_b))
    else:
        box.info(no_output_diff_notice(shape_a, shape_b))


def _draw(top_left, maps, saturation, outputs, live_io: bool) -> list[Question]:
    """What differs between A and B, then their weights, saturation, outputs and the differences (into the places
    the full run drew; ``saturation`` is None before the reveal)."""
    cfg_a, cfg_b = page.setting(A_SET), page.setting(B_SET)
    diffs = differing_settings(cfg_a, cfg_b)
    top_left.markdown(differences(cfg_a, cfg_b))
    if saturation is None:
        return []  # the weights and the saturation answer the prediction: they wait for the reveal

    run_a, run_b = cached_run(cfg_a), cached_run(cfg_b)
    sat_a, sat_b = cached_saturation(cfg_a), cached_saturation(cfg_b)
    head = st.session_state["cmp_head"]
    ha, hb = min(head, cfg_a.n_heads - 1), min(head, cfg_b.n_heads - 1)
    if ha != head or hb != head:
        st.caption(fewer_heads_note(cfg_a.n_heads, cfg_b.n_heads))
    cmp = cached_comparison(cfg_a, cfg_b, ha, hb)
    if live_on():
        live_sync(
            "cmp_live", {"A": setting_of(cfg_a, head, 0, stretching()), "B": setting_of(cfg_b, head, 0, stretching())}
        )
        _weights_said(maps, cmp)
    else:
        _static_weights(maps, run_a, run_b, ha, hb, cmp)

    means = [{key: _mean(sat, key) for key in SATURATION_KEYS} for sat in (sat_a, sat_b)]
    saturation.markdown(comparison_table(SATURATION_KEYS, *means))  # A's row, B's, and B − A under them
    ma, mb = _mean(sat_a, "max_weight"), _mean(sat_b, "max_weight")
    ua, ub = uniform_max_weight(run_a.mask, run_a.T, run_a.T), uniform_max_weight(run_b.mask, run_b.T, run_b.T)
    la, lb = sharpness(ma, ua), sharpness(mb, ub)
    saturation.caption(saturation_caption((la, ma, ua), (lb, mb, ub)))

    _outputs(outputs, cfg_a, cfg_b, run_a, run_b, cmp, live_io)
    return check_questions(diffs, (la, ma), (lb, mb), cmp.output_change)


page.run(_draw, _controls, code=(run_whatif, compare_runs, differing_settings))
