"""Live maps (ui/live): the browser's softmax equals attention_core's, the maps redraw many times while a slider
is dragged, a release makes the value the page's setting (sidebar, URL, share link), the keyboard moves the live
slider, typed text stays text, and AppTest still runs the pages that mount the component.

The parity cases run softmax.js itself in Chromium on the float32 scores attention_core computes from the same q
and k, sent as the scores or as q and k themselves (feed.js multiplies them out), and compare the weights with
attention_core's to 1e-6."""

import base64
import json
import math
import re
import struct
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from attention_core import WhatIf, causal_mask, combine_masks, padding_mask, run_whatif, saturation_metrics
from attention_core.attention import scaled_dot_product_attention
from tests.apptest_util import app, chart_titles, page_components, run_ok, texts
from ui import live
from ui.text import fmt

# ---- the pure functions of softmax.js against attention_core

CASES = [  # (id, H, T, d_k, scaled, temperature, mask, pad)
    ("tau0.1-scaled", 4, 8, 16, True, 0.1, "none", 0),
    ("tau1-unscaled", 4, 8, 16, False, 1.0, "none", 0),
    ("tau10-scaled", 4, 8, 16, True, 10.0, "none", 0),
    ("causal", 2, 12, 8, True, 1.0, "causal", 0),
    ("padding", 2, 12, 8, True, 0.5, "padding", 5),
    ("causal+padding", 3, 10, 4, False, 2.0, "causal+padding", 3),
    ("fully-masked-rows", 2, 6, 4, True, 1.0, "causal+padding", 6),
    ("one-token", 1, 1, 64, True, 1.0, "causal", 0),
    ("512-tokens", 1, 512, 64, True, 1.0, "causal", 0),
    ("16-heads", 16, 24, 4, True, 0.3, "padding", 4),
]


def _mask(kind: str, pad: int, T: int):
    causal = causal_mask(T) if "causal" in kind else None
    padded = padding_mask(T - min(pad, T), T) if "padding" in kind else None
    return combine_masks(causal, padded)


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()


@pytest.fixture(scope="module")
def js_page(browser_and_base):
    """A blank page with softmax.js and the feeds' reader (feed.js) loaded as a module, their functions on
    window.live."""
    browser, _ = browser_and_base
    ctx = browser.new_context()
    page = ctx.new_page()
    page.set_content("<html><body></body></html>")
    page.add_script_tag(
        content=live.SOFTMAX_JS
        + live.FEED_JS
        + "\nwindow.live = {buildMask, attentionWeights, headFigures, colourScale, fmt, unpack};",
        type="module",
    )
    page.wait_for_function("() => !!window.live")
    yield page
    ctx.close()


MOUNT_FEEDS = """(b64s) => b64s.map((b) => {
  const bytes = Uint8Array.from(atob(b), (c) => c.charCodeAt(0));
  window.undos = window.undos || [];
  window.undos.push(window.syncStub({ data: bytes }));
  return window.undos.length - 1;
})"""
TAKEN = """() => {
  const kept = (window.__attentionExplorerLiveSync || {}).m;
  const held = (window.__attentionExplorerLiveScores || {}).m;
  return {
    waiting: (window.__attentionExplorerLiveMounts || []).length,
    rev: kept ? kept.rev : null,
    scores: held && held.arrays.a ? Array.from(held.arrays.a) : null,
  };
}"""


def test_a_feed_that_arrives_before_the_maps_module_waits_for_it_and_one_unmounted_is_dropped(browser_and_base):
    """The feed element carries only sync.js, which hands its data to the maps' module (feed.js): feeds that mount
    before that module has loaded wait on the window, in order; one unmounted before it loaded is never taken; after
    it loaded a feed is taken at once, and unmounting it forgets its setting."""
    browser, _ = browser_and_base
    ctx = browser.new_context()
    page = ctx.new_page()
    S = np.random.default_rng(3).standard_normal((2, 3, 3)).astype(np.float32)

    def feed(rev: int, carried: bool = False) -> str:
        header = {"key": "m", "panels": {"": {"temperature": rev}}, "rev": rev, "scores": "s", "arrays": ["a"]}
        if carried:
            header |= {"carried": [0], "shapes": [{"H": 2, "Tq": 3, "Tk": 3}]}
        return base64.b64encode(live.pack([S] if carried else [], header)).decode()

    try:
        page.set_content("<html><body></body></html>")
        stub = live.SYNC_JS.replace("KIND", "feed").replace("export default function", "window.syncStub = function")
        page.add_script_tag(content=stub)
        page.evaluate(MOUNT_FEEDS, [feed(1, carried=True), feed(2), feed(5)])
        page.evaluate("() => window.undos[2]()")  # the newest unmounted before the maps' module loaded
        assert page.evaluate(TAKEN) == {"waiting": 2, "rev": None, "scores": None}
        # the module's reader of feeds, installed as the whole module's last part installs it
        install = "window.__attentionExplorerLiveMount = mountQueued; mountQueued();"
        page.add_script_tag(content=live.FEED_JS + install, type="module")
        page.wait_for_function("() => !!window.__attentionExplorerLiveMount")
        got = page.evaluate(TAKEN)
        assert (got["waiting"], got["rev"]) == (0, 2)  # both taken in order; rev 5 was never taken
        np.testing.assert_array_equal(np.float32(got["scores"]), S.ravel())  # the first carried the scores
        page.evaluate(MOUNT_FEEDS, [feed(3)])  # after the module loaded: taken at once
        assert page.evaluate(TAKEN)["rev"] == 3
        page.evaluate("() => window.undos[3]()")  # unmounted: its setting is forgotten, the scores kept
        got = page.evaluate(TAKEN)
        assert got["rev"] is None and got["scores"] is not None
    finally:
        ctx.close()


def test_the_maps_write_numbers_as_the_page_does(js_page):
    """softmax.js's fmt (a map's hover, its figures, the B - A hover) writes every number as ui.text.fmt writes it in
    the page's sentences and tables: random numbers over 18 decades, ties on their exact binary value (1/32 at 3
    digits is 0.0312, rounded half to even), the edges of the positional range, zero, nan and inf."""
    from ui.text import fmt

    rng = np.random.default_rng(5)
    xs = [*(rng.normal(size=400) * 10.0 ** rng.integers(-9, 9, 400)).tolist(), 0.0, -0.0, 1.0, 100.0, 999.5, 999.6]
    xs += [0.1175, 0.99746, 0.99751, 1e-4, 9.9995e-5, 1 / 32, 1 / 64, 1 / 128, 2.5, 1234.5, 4e-5, 0.000999]
    xs += [1.7e308, 5e-324]  # the largest, and a subnormal
    cases = [[x, d] for x in xs for d in (2, 3, 4)]
    got = js_page.evaluate("(cases) => cases.map(([x, d]) => live.fmt(x, d))", cases)
    assert got == [fmt(x, d) for x, d in cases]
    special = js_page.evaluate("() => [live.fmt(NaN), live.fmt(Infinity), live.fmt(-Infinity)]")
    assert special == [fmt(float("nan")), fmt(float("inf")), fmt(float("-inf"))]


JS_RUN = """([feed64, expected64, s64, H, T, dk, scaled, tau, kind, pad]) => {
    const bytes = (b) => Uint8Array.from(atob(b), c => c.charCodeAt(0));
    const want = new Float32Array(bytes(expected64).buffer), S64 = new Float64Array(bytes(s64).buffer);
    const S = live.unpack(bytes(feed64)).scores[0];  // what the feed's reader keeps: S, however it travelled
    const mask = kind === "none" ? null : live.buildMask(kind, pad, T, T);
    const A = live.attentionWeights(S, H, T, T, dk, scaled, tau, mask);
    let diff = 0, nan = 0, sdiff = 0;
    for (let k = 0; k < A.length; k++) { if (!Number.isFinite(A[k])) nan++; diff = Math.max(diff, Math.abs(A[k] - want[k])); }
    for (let k = 0; k < S.length; k++) sdiff = Math.max(sdiff, Math.abs(S[k] - S64[k]));
    return {diff, nan, sdiff, n: S.length, figures: live.headFigures(A, H, T, T), mask: mask ? Array.from(mask) : null};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("sent", ["scores", "factors"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_browsers_weights_equal_attention_cores(js_page, case, sent):
    """A feed carrying the scores S = q kᵀ (float32), or q and k (float32) that feed.js multiplies out: the weights
    the browser computes from the S it keeps are attention_core's, to 1e-6. The S it keeps is the one sent, or the
    float64 product of the float32 factors rounded to float32 once (within half a float32 step of the largest)."""
    _, H, T, dk, scaled, tau, kind, pad = case
    rng = np.random.default_rng(H * 1000 + T)
    q = rng.standard_normal((H, T, dk)).astype(np.float32)
    k = rng.standard_normal((H, T, dk)).astype(np.float32)
    S = q @ np.swapaxes(k, -1, -2)  # (H, T, T) float32, what ui.live sends
    factors = sent == "factors"
    exact = q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64) if factors else S.astype(np.float64)
    shape = {"H": H, "Tq": T, "Tk": T} | ({"dk": dk} if factors else {})
    feed = live.pack([q, k] if factors else [S], {"carried": [0], "shapes": [shape]})
    mask = _mask(kind, pad, T)
    _, want = scaled_dot_product_attention(q, k, q, mask=mask, scaled=scaled, temperature=tau)
    args = [base64.b64encode(feed).decode(), _b64(want), base64.b64encode(exact.tobytes()).decode()]
    got = js_page.evaluate(JS_RUN, [*args, H, T, dk, scaled, tau, kind, pad])
    assert got["n"] == H * T * T
    assert got["sdiff"] <= (np.spacing(np.float32(np.abs(exact).max())) / 2 if factors else 0), got["sdiff"]
    assert got["nan"] == 0 and got["diff"] < 1e-6, got["diff"]
    if mask is not None:
        assert got["mask"] == mask.astype(int).ravel().tolist()  # the same mask, cell for cell
    sat = [saturation_metrics(want[h]).summary() for h in range(H)]
    for f, s in zip(got["figures"], sat):
        assert f["maxWeight"] == pytest.approx(s["max_weight"], abs=1e-6)
        assert f["entropy"] == pytest.approx(s["entropy"], abs=1e-5)
        assert f["effectiveTokens"] == pytest.approx(s["effective_tokens"], abs=1e-4)


@pytest.mark.browser
def test_the_browsers_stretched_scale_is_the_groups_as_in_python(js_page, monkeypatch):
    import ui.draw.charts as charts

    rng = np.random.default_rng(3)
    A = rng.dirichlet(np.ones(12), size=(4, 12)).astype(np.float32)  # (4, 12, 12) rows of weights
    monkeypatch.setattr(charts, "stretching", lambda: True)
    want = charts.weight_scale(A)
    got = js_page.evaluate(
        """([a64]) => { const A = new Float32Array(Uint8Array.from(atob(a64), c => c.charCodeAt(0)).buffer);
            return live.colourScale(A, 4, 12, 12, null, true); }""",
        [_b64(A)],
    )
    assert got[2] is True and got[0] == pytest.approx(want.lo, abs=1e-6) and got[1] == pytest.approx(want.hi, abs=1e-6)
    assert js_page.evaluate("() => live.colourScale(new Float32Array(4), 1, 2, 2, null, false)") == [0, 1, False]


# ---- Python's side: what the component is sent


def test_the_component_is_sent_the_scores_once_per_input():
    cfg = WhatIf(seq_len=6, d_model=16, n_heads=2, temperature=0.5)
    run = run_whatif(cfg)
    S = live.scores(run)
    assert S.shape == (2, 6, 6) and S.dtype == np.float32
    np.testing.assert_allclose(S, run.q @ np.swapaxes(run.k, -1, -2), rtol=1e-6)
    hotter = run_whatif(cfg.replace(temperature=3.0, scaled=False, mask="causal"))
    assert live.scores(hotter) is S  # a leaf setting reuses the same scores
    setting = live.setting_of(cfg, 1, 2, False)
    data = live.pack([S], {"scores": [{"H": 2, "Tq": 6, "Tk": 6}], "rows": ["<b>x</b>"] * 6, "setting": setting})
    assert data[:4] == b"AEL1"
    n = struct.unpack("<I", data[4:8])[0]
    header = json.loads(data[8 : 8 + n])
    start = 8 + n + (-n) % 4
    assert header["rows"][0] == "<b>x</b>" and header["setting"]["temperature"] == 0.5  # labels travel as data
    np.testing.assert_array_equal(np.frombuffer(data[start:], "<f4").reshape(2, 6, 6), S)


def _feed_of(data: bytes) -> tuple[dict, list[np.ndarray], int]:
    """A feed's header, the arrays it stands for (S multiplied out where it carries Q and K, as feed.js's unpack
    does: float64 sums, stored as float32) and the bytes of the arrays it carries."""
    assert data[:4] == b"AEL1"
    n = struct.unpack("<I", data[4:8])[0]
    header = json.loads(data[8 : 8 + n])
    body = start = 8 + n + (-n) % 4

    def take(*shape: int) -> np.ndarray:
        nonlocal start
        a = np.frombuffer(data[start : start + 4 * math.prod(shape)], "<f4").reshape(shape)
        start += a.nbytes
        return a

    arrays = []
    for s in header.get("shapes", []):
        if "dk" in s:
            Q, K = take(s["H"], s["Tq"], s["dk"]), take(s["H"], s["Tk"], s["dk"])
            arrays.append(np.einsum("hid,hjd->hij", Q.astype(np.float64), K.astype(np.float64)).astype(np.float32))
        else:
            arrays.append(take(s["H"], s["Tq"], s["Tk"]))
    assert start == len(data)  # nothing left over
    return header, arrays, len(data) - body


@pytest.mark.parametrize(
    "T, d_model, H, factors",
    [
        (8, 64, 4, False),  # the default: S (4 x 8 x 8) is a quarter of Q and K (2 x 4 x 8 x 16)
        (8, 16, 4, False),  # a tie (d_k 4: 4 x 16 = 8 x 8 numbers a head): S, which needs no arithmetic
        (9, 16, 4, True),  # one token more: Q and K (72 numbers a head) against S (81)
        (64, 16, 2, True),  # d_k 8: a quarter of S's bytes
    ],
    ids=["default", "tie", "past-the-tie", "64-tokens-d_k-8"],
)
def test_the_feed_carries_q_and_k_where_they_are_smaller_than_the_scores(T, d_model, H, factors):
    """The Playground's feed carries, for the scores, whichever is smaller: S = Q Kᵀ (H, T, T), or Q and K
    (H, T, d_k) each, float32, exactly when d_k·2T < T²; its shapes entry has d_k when it carries Q and K, which are
    attention_core's q and k and give back S; the array keeps its key (the digest of S). X, V and W_o travel as
    before, and a second run of the session carries nothing."""
    from ui.draw.vega import digest

    query = {"seq_len": str(T), "d_model": str(d_model), "heads": str(H)}
    at = run_ok(app("pages/Playground.py", query, live=True))
    header, arrays, sent = _feed_of(next(c for c in page_components(at) if c.key == "pg_live_feed").proto.bytes)
    run = run_whatif(WhatIf(seq_len=T, d_model=d_model, n_heads=H))
    dk, S = d_model // H, live.scores(run)
    assert live.factors_smaller(T, T, dk) is factors
    assert header["arrays"][0] == live._scores(run).key == digest(S).hex()  # the key of S, however it travels
    assert header["carried"] == list(range(len(header["arrays"])))  # a new session: everything
    assert header["shapes"][0] == {"H": H, "Tq": T, "Tk": T} | ({"dk": dk} if factors else {})
    outputs = live._outputs_arrays(run)  # X, V and W_o: the browser draws X and Z at these sizes
    assert header["arrays"][1:] == [a.key for a in outputs] and all("dk" not in s for s in header["shapes"][1:])
    assert sent == 4 * H * T * (2 * dk if factors else T) + sum(a.S.nbytes for a in outputs)
    assert sent - sum(a.S.nbytes for a in outputs) <= S.nbytes  # never more than the scores
    if factors:  # what was sent is attention_core's q and k, and they give back S to float32 rounding
        sc = live._scores(run)
        np.testing.assert_array_equal(sc.Q, run.q.astype(np.float32))
        np.testing.assert_array_equal(sc.K, run.k.astype(np.float32))
        assert sc.Q.flags.c_contiguous and sc.K.flags.c_contiguous
        assert np.abs(arrays[0] - S).max() <= 4 * np.spacing(np.abs(S).max()), np.abs(arrays[0] - S).max()
    else:
        assert live._scores(run).Q is None  # nothing kept that is never sent
        np.testing.assert_array_equal(arrays[0], S)
    for got, a in zip(arrays[1:], outputs):
        np.testing.assert_array_equal(got, a.S)
    at.run()  # the session's second run: it holds every array
    header, arrays, sent = _feed_of(next(c for c in page_components(at) if c.key == "pg_live_feed").proto.bytes)
    assert "shapes" not in header and arrays == [] and sent == 0


def _release_script():
    import streamlit as st

    from ui.live import release_into
    from ui.skeleton.controls import SHARED, current

    current()  # the session's setting, from the (empty) link
    release_into(SHARED, {"head": "pg_head", "query": "pg_query"})(st.session_state["released"])


KEYS = ("ctl_temperature", "ctl_scaled", "ctl_mask", "ctl_pad_count", "pg_head", "pg_query")


@pytest.mark.parametrize(
    "released, expected",
    [
        (
            {"temperature": 0.37, "scaled": False, "mask": "causal+padding", "pad": 2, "head": 3, "query": 5},
            (0.37, False, "causal+padding", 2, 3, 5),
        ),
        ({"temperature": 99.0, "scaled": False, "mask": "causal", "pad": 0, "head": 1, "query": 1}, None),
        ({"temperature": 1.5, "scaled": True, "mask": "<script>", "pad": 0, "head": 1, "query": 1}, None),
        (
            {"temperature": 2.0, "scaled": True, "mask": "none", "pad": 0, "head": 9, "query": -1},
            (2.0, True, "none", 0, None, None),
        ),
    ],
    ids=["valid", "temperature-out-of-range", "unknown-mask", "picker-out-of-range"],
)
def test_a_release_becomes_the_pages_setting_and_bad_values_are_dropped(released, expected):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_release_script)
    at.session_state["released"] = released
    run_ok(at)
    got = tuple(at.session_state[k] if k in at.session_state else None for k in KEYS)
    if expected is None:  # refused as a whole: the widgets keep the link's setting
        assert got[:4] == (1.0, True, "none", 2)
    else:
        assert got == expected


def test_the_playground_mounts_the_maps_and_their_feed_in_its_full_run():
    at = run_ok(app("pages/Playground.py", live=True))
    # the module, the maps, their feed (a body-only rerun's sync is not drawn), and X and Z (the browser draws them
    # at this size)
    assert [c.key for c in page_components(at)] == ["pg_live_module", "pg_live", "pg_live_feed", "pg_live_outputs"]
    assert "The maps are drawn by your browser on one colour scale" in texts(at)
    at.toggle(key="live_maps").set_value(False)
    run_ok(at)
    assert len(page_components(at)) == 0 and "One map per head" in texts(at)  # the static path


def test_classroom_mode_hides_the_live_maps_until_the_reveal():
    at = run_ok(app("pages/Playground.py", {"classroom": "lock"}, live=True))
    assert len(page_components(at)) == 0


# ---- in the page, in Chromium

MAPS = ".ae-live"
# a range input three steps to the right of ``start`` (the keys a test pressed have all been taken)
THREE_STEPS_TAKEN = "([e, start]) => Math.abs(Number(e.value) - (start + 3 * Number(e.step))) < 1e-9"


def three_steps_right(page, slider) -> None:
    """Press the right arrow three times on the focused range input ``slider`` and wait until all three are taken
    (a loaded machine read a live slider after one or two of them, and its release then named a later value)."""
    start, step, top = slider.evaluate("e => [Number(e.value), Number(e.step), Number(e.max)]")
    assert start + 3 * step <= top + 1e-9, (start, step, top)  # room for three steps: else the wait never ends
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(THREE_STEPS_TAKEN, arg=[slider.element_handle(), start])


READ_WEIGHTS = "el => Array.from(el.parentNode.__attentionExplorerLive.panels[0].A)"
READ_SCORES = (
    "el => { const p = el.parentNode.__attentionExplorerLive.panels[0]; return [Array.from(p.S), Array.from(p.A)]; }"
)


def _frames(page) -> int:
    return int(page.locator(MAPS).first.get_attribute("data-frames"))


def _url_temperature(url: str) -> float:
    return float(re.search(r"temperature=([\d.]+)", url)[1])


def _assert_maps_show(page, cfg: WhatIf) -> None:
    """The live maps hold attention_core's weights for ``cfg`` (the page's static path draws these numbers)."""
    got = page.locator(MAPS).first.evaluate(READ_WEIGHTS)
    want = run_whatif(cfg).weights  # (H, T, T)
    assert np.abs(np.asarray(got, dtype=np.float64) - want.ravel()).max() < 1e-6


@pytest.mark.browser
def test_a_drag_redraws_the_maps_before_the_release_which_becomes_the_setting(browser_and_base):
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import COUNT_ELEMENTS, opened

    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=8&d_model=64&heads=4&temperature=1.0") as (page, dialogs):
        page.wait_for_selector(MAPS)
        page.wait_for_function("() => true")
        slider = page.locator(f'{MAPS} input[aria-label^="temperature"]').first
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        x0, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        elements = page.evaluate(COUNT_ELEMENTS)
        before = _frames(page)
        page.mouse.move(x0, y)
        page.mouse.down()
        for k in range(30):  # a third of the slider, 30 moves
            page.mouse.move(x0 - (k + 1) * box["width"] / 90, y)
            page.wait_for_timeout(20)
        during = _frames(page) - before
        assert "temperature=1.0" in page.url  # nothing has reached the server yet
        page.mouse.up()
        assert during >= 10, f"the maps were drawn {during} times during the drag"
        tau = float(page.locator(MAPS).first.get_attribute("data-temperature"))
        assert 0.1 <= tau < 1.0
        wait_for_address(page, lambda url: "temperature=" in url and _url_temperature(url) == tau, timeout=60000)
        wait_for_app(page)
        # one control per setting: the sidebar has no temperature of its own; the formula states the released one
        sidebar = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]')
        assert sidebar.filter(has_text="temperature").count() == 0
        formula = page.locator('[data-testid="stMain"] annotation').filter(has_text=f"\\tau = {tau:g}")
        formula.first.wait_for(state="attached")
        # the release reran the page's body alone: every element once, as before it (no copies beside the old ones)
        assert page.evaluate(COUNT_ELEMENTS) == elements
        page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').filter(
            has_text="Share this experiment"
        ).click()
        assert f"temperature={tau:g}" in page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').inner_text()
        _assert_maps_show(page, WhatIf(seq_len=8, d_model=64, n_heads=4, temperature=tau))
        assert not dialogs
        errors = [t for kind, t in page.console if kind == "error" and "Failed to load resource" not in t]
        assert errors == []


TIP = f"{MAPS} .ae-tip"
TIP_TEXT = re.compile(r"^head (\d+) · query (.+) \(#(\d+)\) → key (.+) \(#(\d+)\): weight ([0-9.e+-]+)$")


def shows_weight(text: str, weight: float) -> bool:
    """The hover's weight is attention_core's ``weight`` as the page writes it (ui.text.fmt); the browser's float32
    softmax may land on the other side of a rounding boundary, within 1e-6."""
    from ui.text import fmt

    return text in {fmt(weight), fmt(weight - 1e-6), fmt(weight + 1e-6)}


def _cell_point(canvas, i: int, j: int, Tk: int, margin: float = 0.0, cell: float | None = None) -> tuple[int, int]:
    """A point in whole px (Chromium's mouse events carry whole px) inside cell (query i, key j) of a live map:
    the drawing is the canvas's box inside its border, the cells after a label margin (none above 16 tokens,
    where the ``Tk`` cells fill the width)."""
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    border_x, border_y, width = canvas.evaluate("c => [c.clientLeft, c.clientTop, c.clientWidth]")
    cell = cell or width / Tk
    x0 = box["x"] + border_x + margin + j * cell  # the cell spans [x0, x0 + cell) on the screen
    y0 = box["y"] + border_y + margin + i * cell
    return max(math.ceil(x0), math.floor(x0 + cell / 2)), max(math.ceil(y0), math.floor(y0 + cell / 2))


@pytest.mark.browser
@pytest.mark.parametrize("where", ["middle", "near-the-edges"])
def test_hovering_a_cell_names_its_query_key_and_attention_cores_weight(browser_and_base, where):
    """At 128 tokens a cell is 1 px: the tip names the cell under the pointer, up to the edges. (cellAt measured the
    pointer against the canvas with its 2 px border, so near the edges it named a cell up to 2 off, and a click
    picked the wrong query.)"""
    from tests.test_browser import opened

    browser, base = browser_and_base
    cfg = WhatIf(seq_len=128, d_model=512, n_heads=8)
    run = run_whatif(cfg)
    T = cfg.seq_len
    # (63, 63) holds 0.0399, four times its neighbours': a cell off by one shows another weight
    cells = [(63, 63)] if where == "middle" else [(1, 2), (T - 3, T - 2)]
    with opened(browser, base + "/Playground?seq_len=128&d_model=512&heads=8") as (page, dialogs):
        page.wait_for_selector(MAPS)
        maps = page.locator(MAPS).first.element_handle()  # in the component's shadow root
        page.wait_for_function("el => Number(el.dataset.frames) > 0", arg=maps)
        canvas = page.locator(f'{MAPS} .ae-map canvas[data-head="0"]').first
        tip = page.locator(TIP).first
        for i, j in cells:
            page.mouse.move(*_cell_point(canvas, i, j, T))
            tip.wait_for(state="visible", timeout=5000)
            text = tip.text_content()
            m = TIP_TEXT.match(text)
            assert m, text
            head, query, qn, key, kn, weight = m.groups()
            assert (head, query, int(qn), key, int(kn)) == ("1", run.tokens[i], i + 1, run.tokens[j], j + 1), text
            assert shows_weight(weight, float(run.weights[0, i, j])), text
            assert tip.evaluate("el => el.childElementCount") == 0  # set as text, no element inside
        box = canvas.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 30)  # off the map: the tip goes
        tip.wait_for(state="hidden", timeout=5000)
        assert not dialogs


@pytest.mark.browser
def test_the_keyboard_reads_a_maps_cells_as_the_pointer_does(browser_and_base):
    """Hover has a keyboard twin: on a focused map, right and left move along the picked query's keys and the tip (a
    status region, so a screen reader says it) names the cell and attention_core's weight; down picks the next
    query and reads the same key there; Escape hides it."""
    from harness.server import wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    cfg = WhatIf(seq_len=8, d_model=64, n_heads=4)
    run = run_whatif(cfg)
    with opened(browser, base + "/Playground?seq_len=8&d_model=64&heads=4") as (page, _):
        page.wait_for_selector(MAPS)
        canvas = page.locator(f'{MAPS} .ae-map canvas[data-head="1"]').first
        tip = page.locator(TIP).first
        assert tip.get_attribute("role") == "status"
        canvas.focus()
        query = page.locator(MAPS).first.evaluate("el => el.parentNode.__attentionExplorerLive.panels[0].setting.query")

        def read(i: int, j: int) -> None:
            page.wait_for_function(
                "([el, want]) => el.textContent.includes(want)",
                arg=[tip.element_handle(), f"query {run.tokens[i]} (#{i + 1}) → key {run.tokens[j]} (#{j + 1})"],
                timeout=10000,
            )
            m = TIP_TEXT.match(tip.text_content())
            assert m and m[1] == "2", tip.text_content()  # head 2: the focused map
            assert shows_weight(m[6], float(run.weights[1, i, j])), tip.text_content()

        page.keyboard.press("ArrowRight")  # the first key
        read(query, 0)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        read(query, 1)
        page.keyboard.press("ArrowDown")  # the next query (picked: the page reruns with it), the same key
        read(query + 1, 1)
        wait_for_app(page)
        canvas.focus()
        page.keyboard.press("Escape")
        tip.wait_for(state="hidden", timeout=5000)


@pytest.mark.browser
def test_the_keyboard_moves_the_live_slider_and_the_maps(browser_and_base):
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=6&d_model=32&heads=2&temperature=1.0&scaled=0") as (page, _):
        page.wait_for_selector(MAPS)
        slider = page.locator(f'{MAPS} input[aria-label^="temperature"]').first
        slider.focus()
        before = _frames(page)
        three_steps_right(page, slider)
        # the maps draw a key at the next animation frame, which a busy machine may not have reached when the last
        # press returns: wait two frames in the page (no server answer comes in two frames' time), then count
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        assert _frames(page) > before  # the maps moved with the keys, before any answer from the server
        tau = page.locator(MAPS).first.evaluate(  # what the third key set (taken at once; drawn at the next frame)
            "el => el.parentNode.__attentionExplorerLive.panels[0].setting.temperature"
        )
        assert tau > 1.0
        wait_for_address(page, lambda url: _url_temperature(url) == tau, timeout=60000)  # its release, in the URL
        wait_for_app(page)
        page.wait_for_timeout(500)
        _assert_maps_show(page, WhatIf(seq_len=6, d_model=32, n_heads=2, temperature=tau, scaled=False))


OUTPUTS = ".ae-outputs"
READ_OUTPUTS = """el => {
  const v = el.parentNode.__attentionExplorerLive;
  return { Z: Array.from(v.Z), lim: v.lim, tau: v.setting.temperature, frames: v.frames,
           labels: [...el.querySelectorAll("canvas[role=img]")].map((c) => c.getAttribute("aria-label")) };
}"""


def _wait_outputs(page) -> None:
    """Until the inputs and outputs have drawn (they live in the component's shadow root: a locator, not a query)."""
    outputs = page.locator(OUTPUTS).first
    outputs.wait_for(timeout=60000)
    page.wait_for_function("el => Number(el.dataset.frames) > 0", arg=outputs.element_handle(), timeout=60000)


def _assert_outputs_show(page, cfg: WhatIf) -> dict:
    """The browser's Z is attention_core's output for ``cfg``, on the page's scale max(|X|, |Z|)."""
    got = page.locator(OUTPUTS).first.evaluate(READ_OUTPUTS)
    run = run_whatif(cfg)
    assert got["tau"] == cfg.temperature
    # float32 scores, V and W_o against float64: a few units of 1e-7 of the values' size
    np.testing.assert_allclose(np.reshape(got["Z"], run.output.shape), run.output, rtol=0, atol=1e-5)
    lim = max(np.abs(run.x).max(), np.abs(run.output).max())
    assert got["lim"] == pytest.approx(lim, rel=1e-5)
    return got


@pytest.mark.browser
@pytest.mark.parametrize(
    "query, cfg",
    [
        ("", WhatIf()),
        (
            "seq_len=5&d_model=32&heads=4&temperature=0.3&scaled=0",
            WhatIf(seq_len=5, d_model=32, n_heads=4, temperature=0.3, scaled=False),
        ),  # noqa: E501
        (
            "seq_len=12&d_model=48&heads=3&mask=causal%2Bpadding&pad=12",
            WhatIf(seq_len=12, d_model=48, n_heads=3, mask="causal+padding", pad_count=12),
        ),  # noqa: E501
        ("seq_len=64&d_model=64&heads=16&temperature=10", WhatIf(seq_len=64, d_model=64, n_heads=16, temperature=10.0)),  # noqa: E501
        (  # d_k 8: the feed carries Q and K (a quarter of S's bytes); the coldest temperature
            "seq_len=64&d_model=16&heads=2&temperature=0.1&mask=causal",
            WhatIf(seq_len=64, d_model=16, n_heads=2, temperature=0.1, mask="causal"),
        ),
    ],
    ids=["default", "unscaled-cold", "every-row-masked", "64x64-16-heads", "64-tokens-d_k-8-cold"],
)
def test_the_browsers_outputs_equal_attention_cores(browser_and_base, query, cfg):
    """Where X and Z are drawn cell by cell, the browser draws them from X, V and W_o (sent once per input) and the
    maps' weights: Z equals attention_core's output, on the scale the page's caption states, and the maps' text
    alternatives name its largest and smallest values. The maps' scores and weights are attention_core's to 1e-5,
    whether the feed carried S (the first three) or Q and K (the last two: d_k 4 and 8 at 64 tokens)."""
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Playground" + (f"?{query}" if query else "")) as (page, _):
        _wait_outputs(page)
        run = run_whatif(cfg)
        assert (live._scores(run).Q is not None) is (cfg.seq_len == 64)  # how the scores travelled
        S, A = page.locator(MAPS).first.evaluate(READ_SCORES)
        exact = run.q.astype(np.float64) @ np.swapaxes(run.k, -1, -2).astype(np.float64)
        assert np.abs(np.asarray(S) - exact.ravel()).max() <= 1e-5 * max(1.0, np.abs(exact).max())
        assert np.abs(np.asarray(A) - run.weights.ravel()).max() <= 1e-5
        got = _assert_outputs_show(page, cfg)
        run = run_whatif(cfg)
        z = run.output
        i, j = np.unravel_index(int(np.argmax(z)), z.shape)
        assert f"the largest, {fmt(z[i, j])}, at token '{run.tokens[i]}' and dim {j + 1}" in got["labels"][1]
        lim = max(np.abs(run.x).max(), np.abs(z).max())
        assert f"x and z: −{fmt(lim)} (blue) to {fmt(lim)} (red)" in page.locator(OUTPUTS).first.inner_text()
        assert f"share one colour scale, −{fmt(lim)} (blue) to {fmt(lim)} (red)" in page.inner_text("body")


@pytest.mark.browser
def test_the_outputs_follow_the_live_temperature_before_the_release(browser_and_base):
    """Keys on the maps' temperature move Z at once (before any answer from the server); after the release Z is
    attention_core's output at the new temperature, and a cell read by the keyboard states its value."""
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=6&d_model=32&heads=2&temperature=1.0") as (page, _):
        _wait_outputs(page)
        before = page.locator(OUTPUTS).first.evaluate(READ_OUTPUTS)
        page.locator(f'{MAPS} input[aria-label^="temperature"]').first.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        moved = page.locator(OUTPUTS).first.evaluate(READ_OUTPUTS)
        assert moved["frames"] > before["frames"] and moved["tau"] > 1.0 and moved["Z"] != before["Z"]
        wait_for_address(page, lambda url: _url_temperature(url) == moved["tau"], timeout=60000)
        wait_for_app(page)
        page.wait_for_timeout(500)
        cfg = WhatIf(seq_len=6, d_model=32, n_heads=2, temperature=moved["tau"])
        _assert_outputs_show(page, cfg)
        z = page.locator(f"{OUTPUTS} canvas[role=img]").nth(1)
        z.focus()
        for key in ("ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight"):  # the first key reads a cell, then moves
            page.keyboard.press(key)
        tip = page.locator(f"{OUTPUTS} .ae-tip")
        want = run_whatif(cfg)
        # read (0, 0), then down one and right two
        assert tip.inner_text() == f"Z output · token {want.tokens[1]} (#2) · dim 3: z = {fmt(want.output[1, 2])}"
        assert tip.evaluate("el => el.childElementCount") == 0  # set as text


def test_the_playground_draws_x_and_z_live_where_they_are_drawn_cell_by_cell():
    """Live maps at a size where X and Z are vector maps: the browser draws them (one more component, no heatmap of Z
    drawn by the server), and the feed carries X, V and W_o; larger, or with live maps off, the server draws them."""
    at = run_ok(app("pages/Playground.py", live=True))
    components = page_components(at)
    assert len(components) == 4  # the module, the maps, their feed, the inputs and outputs
    outputs = next(c for c in components if c.key == "pg_live_outputs").proto
    header = json.loads(json.loads(outputs.json))  # the data is the header as text, sent as a JSON string
    run = run_whatif(WhatIf())
    ours = header["runs"][""]  # the maps' one panel
    assert ours["rows"] == list(run.tokens) and (ours["d"], ours["H"]) == (64, 4)
    assert [(m["kind"], m["title"]) for m in header["maps"]] == [("x", "X input"), ("z", "Z output")]
    maps = json.loads(json.loads(next(c for c in components if c.key == "pg_live").proto.json))
    assert header["scores"] == maps["key"]  # the outputs follow the frames of these maps only
    held = {a.key: a.S for a in live._outputs_arrays(run)}
    assert list(held) == [ours["arrays"][k] for k in ("x", "v", "wo")]  # what the feed carries, by key
    assert "X input" not in chart_titles(at) and "Z output" not in chart_titles(at)
    assert "your browser draws them, and Z follows the temperature" in texts(at)
    at.toggle(key="live_maps").set_value(False)
    run_ok(at)
    assert len(page_components(at)) == 0
    assert {"X input", "Z output"} <= set(chart_titles(at))
    big = run_ok(app("pages/Playground.py", {"seq_len": "8", "d_model": "128"}, live=True))
    assert len(page_components(big)) == 3 and "drawn as images" in texts(big)


READ_CMP_OUTPUTS = """el => {
  const v = el.parentNode.__attentionExplorerLive;
  return { maps: v.maps.map((m) => ({ kind: m.kind, title: m.title, values: Array.from(v.values(m)) })),
           lim: v.lim, tau: v.setting.temperature, frames: v.frames,
           legend: el.querySelector(".ae-legend-text").textContent,
           labels: [...el.querySelectorAll("canvas[role=img]")].map((c) => c.getAttribute("aria-label")) };
}"""


def _assert_compare_outputs_show(page, a: WhatIf, b: WhatIf) -> dict:
    """The browser's A's Z, B's Z and (one shape) B − A are attention_core's, on the scale Python states:
    shared_domain(Z_A, Z_B), in the legend and the page's caption."""
    from ui.draw.charts import shared_domain

    got = page.locator(OUTPUTS).first.evaluate(READ_CMP_OUTPUTS)
    za, zb = run_whatif(a).output, run_whatif(b).output
    same = za.shape == zb.shape
    want = [("z", "A: Z", za), ("z", "B: Z", zb)] + ([("diff", "Z: B − A", zb - za)] if same else [])
    assert [(m["kind"], m["title"]) for m in got["maps"]] == [(k, t) for k, t, _ in want]
    for m, (_, _, z) in zip(got["maps"], want):
        np.testing.assert_allclose(np.reshape(m["values"], z.shape), z, rtol=0, atol=1e-5)
    lim = shared_domain(za, zb, symmetric=True)[1]
    assert got["lim"] == pytest.approx(lim, rel=1e-5) and got["tau"] == a.temperature
    scope = "one scale for A's Z, B's Z and B − A" if same else "one scale for A's Z and B's Z"
    assert got["legend"] == f"z: −{fmt(lim)} (blue) to {fmt(lim)} (red), {scope}"
    return got


@pytest.mark.browser
@pytest.mark.parametrize(
    "query, a, b",
    [
        ("", WhatIf(scaled=True), WhatIf(scaled=False)),
        (  # two inputs: no B − A map, and each Z from its own panel of the same frame
            "a_seq_len=8&b_seq_len=5&b_heads=2",
            WhatIf(seq_len=8, scaled=True),
            WhatIf(seq_len=5, n_heads=2, scaled=False),
        ),
        (  # every row of A masked: A's Z is zero, B − A is B's Z
            "a_mask=causal%2Bpadding&a_pad=8",
            WhatIf(scaled=True, mask="causal+padding", pad_count=8),
            WhatIf(scaled=False),
        ),
    ],
    ids=["default", "different-seq_len", "every-row-of-A-masked"],
)
def test_compare_draws_as_and_bs_outputs_and_their_difference_as_attention_core(browser_and_base, query, a, b):
    """On Compare the browser draws A's Z, B's Z and (one shape) B − A from X, V and W_o (the maps' feed) and the
    live maps' weights: each equals attention_core's output, on the page's one scale, and the text alternative of
    the last map names its largest value."""
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Compare" + (f"?{query}" if query else "")) as (page, dialogs):
        _wait_outputs(page)
        got = _assert_compare_outputs_show(page, a, b)
        ra, rb = run_whatif(a), run_whatif(b)
        last, run = (rb.output - ra.output, ra) if ra.output.shape == rb.output.shape else (rb.output, rb)
        i, j = np.unravel_index(int(np.argmax(last)), last.shape)
        assert f"the largest, {fmt(last[i, j])}, at token '{run.tokens[i]}' and dim {j + 1}" in got["labels"][-1]
        assert f"share one colour scale (±{fmt(got['lim'])})" in page.inner_text("body")
        assert not dialogs


@pytest.mark.browser
def test_compares_outputs_follow_as_live_temperature_before_the_release(browser_and_base):
    """Keys on A's live temperature move A's Z and B − A at once (before any answer from the server) and leave B's Z;
    after the release all three are attention_core's at the new temperature."""
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Compare?seq_len=6&d_model=32&heads=2") as (page, _):
        _wait_outputs(page)
        a, b = (
            WhatIf(seq_len=6, d_model=32, n_heads=2, scaled=True),
            WhatIf(seq_len=6, d_model=32, n_heads=2, scaled=False),
        )
        before = _assert_compare_outputs_show(page, a, b)
        slider = page.locator(f'{MAPS} input[aria-label^="temperature τ (A)"]').first
        slider.focus()
        three_steps_right(page, slider)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        moved = page.locator(OUTPUTS).first.evaluate(READ_CMP_OUTPUTS)
        assert moved["frames"] > before["frames"] and moved["tau"] > 1.0
        assert moved["maps"][0]["values"] != before["maps"][0]["values"]  # A's Z moved
        assert moved["maps"][1]["values"] == before["maps"][1]["values"]  # B's did not
        tau = moved["tau"]
        wait_for_address(
            page, lambda u: "a_temperature=" in u and float(re.search(r"a_temperature=([\d.]+)", u)[1]) == tau
        )
        wait_for_app(page)
        page.wait_for_timeout(500)
        _assert_compare_outputs_show(page, a.replace(temperature=tau), b)


@pytest.mark.browser
@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "1280"])
def test_compares_outputs_stack_on_a_phone_and_share_a_row_at_1280(browser_and_base, size):
    """A's Z, B's Z and B − A: one above the other on a 390 px phone, side by side at 1280 px; inside the page."""
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Compare", size=size) as (page, _):
        _wait_outputs(page)
        boxes = [f.bounding_box() for f in page.locator(f"{OUTPUTS} figure").all()]
        assert len(boxes) == 3
        tops = [round(b["y"]) for b in boxes]
        if size[0] < 400:
            assert tops == sorted(tops) and len(set(tops)) == 3  # stacked
        else:
            assert len(set(tops)) == 1  # one row
        assert all(b["x"] >= 0 and b["x"] + b["width"] <= size[0] for b in boxes)


@pytest.mark.browser
def test_a_typed_sentence_reaches_the_maps_as_text(browser_and_base):
    from tests.test_browser import opened

    browser, base = browser_and_base
    text = "<img src=x onerror=alert(1)> it was <b>tired</b>"
    with opened(browser, base + f"/Playground?input=sentence&sentence={quote(text)}") as (page, dialogs):
        page.wait_for_selector(MAPS)
        page.wait_for_timeout(1000)
        assert page.locator(f"{MAPS} img, {MAPS} b").count() == 0  # no element made from the text
        rows = page.locator(MAPS).first.evaluate("el => el.parentNode.__attentionExplorerLive.panels[0].spec.rows")
        assert rows[:2] == ["<img", "src=x"] and "<b>tired</b>" in rows
        i, j = rows.index("<b>tired</b>"), 0  # hover query <b>tired</b>, key <img: the tip shows them as text
        canvas = page.locator(f'{MAPS} .ae-map canvas[data-head="0"]').first
        L = canvas.evaluate(  # labelled maps: the cells after a label margin
            "c => { const v = c.closest('.ae-live').parentNode.__attentionExplorerLive; return v.layout(v.panels[0]); }"
        )
        page.mouse.move(*_cell_point(canvas, i, j, len(rows), L["margin"], L["cell"]))
        tip = page.locator(TIP).first
        tip.wait_for(state="visible", timeout=5000)
        m = TIP_TEXT.match(tip.text_content())
        assert m and (m[2], m[4]) == ("<b>tired</b>", "<img"), tip.text_content()
        assert tip.evaluate("el => el.childElementCount") == 0
        assert page.locator(f"{MAPS} img, {MAPS} b").count() == 0
        assert not dialogs


@pytest.mark.browser
def test_the_projector_view_draws_the_live_maps_larger(browser_and_base):
    from tests.test_browser import horizontal_overflow, opened

    browser, base = browser_and_base
    widths = {}
    for view in ("", "&view=projector"):
        with opened(browser, base + f"/Playground?seq_len=8&d_model=64&heads=4{view}", size=(1280, 720)) as (page, _):
            page.wait_for_selector(MAPS)
            page.wait_for_timeout(500)
            widths[view] = page.locator(f"{MAPS} .ae-map canvas").first.bounding_box()["width"]
            assert horizontal_overflow(page) == []
    assert widths["&view=projector"] >= 1.3 * widths[""], widths  # the cells 1.5x, the label margins not


ROW_OF_MAPS = """el => { const v = el.parentNode.__attentionExplorerLive; const p = v.panels[0];
    const tops = Array.from(p.grid.querySelectorAll('.ae-map canvas'))
        .filter(c => c.offsetParent !== null).map(c => Math.round(c.getBoundingClientRect().top));
    return {tops, L: v.layout(p), room: v.root.clientWidth}; }"""
REDRAWN = """el => { const v = el.parentNode.__attentionExplorerLive;
    return (v.width ?? v.root.clientWidth) === v.root.clientWidth && !v.raf && v.frames > 0; }"""  # drawn for it


@pytest.mark.browser
@pytest.mark.parametrize("path, width", [("Playground", 1280), ("Multi-head", 1280), ("Playground", 1180)])
def test_the_head_maps_share_one_row_when_they_fit_and_follow_the_windows_width(browser_and_base, path, width):
    """At 1280x720 (the sidebar open) the four head maps of 8 tokens share one row instead of wrapping three plus
    one (their figures' text wraps under them); at 1180 px they shrink too, their cells at least 12 px; the pointer
    still reads the cell under it; when the window grows to 1400x1000 they are redrawn at their full size, still
    in one row."""
    from tests.test_browser import opened

    browser, base = browser_and_base
    cfg = WhatIf(seq_len=8, d_model=64, n_heads=4)
    run = run_whatif(cfg)
    full = 150 // 8 if path == "Playground" else 130 // 8  # the cell of the page's size: 150 px, 130 px
    with opened(browser, base + f"/{path}?seq_len=8&d_model=64&heads=4", size=(width, 720)) as (page, dialogs):
        page.wait_for_selector(MAPS)
        maps = page.locator(MAPS).first
        page.wait_for_function(REDRAWN, arg=maps.element_handle())
        got = maps.evaluate(ROW_OF_MAPS)
        assert len(got["tops"]) == 4 and len(set(got["tops"])) == 1, got  # one row, not three plus one
        assert 12 <= got["L"]["cell"] <= full, got
        assert width >= 1280 or got["L"]["cell"] < full, got  # at 1180 px only shrunk maps share a row
        canvas = page.locator(f'{MAPS} .ae-map canvas[data-head="2"]').first
        assert canvas.bounding_box()["width"] == pytest.approx(got["L"]["w"] + 4, abs=0.5)  # drawn as laid out
        tip = page.locator(TIP).first
        for i, j in ((0, 7), (5, 2), (7, 0)):  # the pointer reads the shrunk map's cells
            page.mouse.move(*_cell_point(canvas, i, j, 8, got["L"]["margin"], got["L"]["cell"]))
            tip.wait_for(state="visible", timeout=5000)
            m = re.search(TIP_TEXT.pattern.lstrip("^"), tip.text_content())  # or "every head (4), head 3 · …"
            assert m and (m[1], int(m[3]), int(m[5])) == ("3", i + 1, j + 1), tip.text_content()
            assert shows_weight(m[6], float(run.weights[2, i, j])), tip.text_content()
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.wait_for_function(
            "([el, room]) => el.parentNode.__attentionExplorerLive.root.clientWidth > room",
            arg=[maps.element_handle(), got["room"]],
        )
        page.wait_for_function(REDRAWN, arg=maps.element_handle())
        wide = maps.evaluate(ROW_OF_MAPS)
        assert len(set(wide["tops"])) == 1 and wide["L"]["cell"] == full, wide  # room enough: the full size
        assert not dialogs


BAR_TEXTS = """el => new Promise(resolve => {
    const v = el.parentNode.__attentionExplorerLive;
    const canvas = v.panels[0].bars, texts = [], fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, ...rest) {
        if (this.canvas === canvas) texts.push(String(t));
        return fill.call(this, t, ...rest);
    };
    v.schedule();
    requestAnimationFrame(() => requestAnimationFrame(() => {
        CanvasRenderingContext2D.prototype.fillText = fill;
        resolve(texts);
    }));
})"""


@pytest.mark.browser
@pytest.mark.parametrize("size", [(1280, 720), (1400, 1000)])
def test_the_querys_bars_are_a_chart_with_axis_titles_across_the_panel(browser_and_base, size):
    """The picked query's bars of 8 keys take the panel's width (they were a 274 px strip), inside it, with the axis
    titles "weight" and "key", a middle tick on the weight axis and every key's label."""
    from tests.test_browser import horizontal_overflow, opened

    browser, base = browser_and_base
    run = run_whatif(WhatIf(seq_len=8, d_model=64, n_heads=4))
    with opened(browser, base + "/Playground?seq_len=8&d_model=64&heads=4", size=size) as (page, _):
        page.wait_for_selector(MAPS)
        maps = page.locator(MAPS).first
        page.wait_for_function(REDRAWN, arg=maps.element_handle())
        bars = page.locator(f"{MAPS} .ae-bars canvas").first
        box, root = bars.bounding_box(), maps.bounding_box()
        assert box["width"] >= 500 and box["height"] >= 200, box
        assert box["x"] >= root["x"] - 1 and box["x"] + box["width"] <= root["x"] + root["width"] + 1, (box, root)
        texts = maps.evaluate(BAR_TEXTS)
        assert {"weight", "key", "0", "0.5", "1"} <= set(texts), texts  # unstretched: the axis runs 0 to 1
        assert {t if len(t) <= 6 else t[:5] + "…" for t in run.tokens} <= set(texts), texts  # every key, shortened
        assert horizontal_overflow(page) == []


# ---- a browser that has lost its copy of the scores, and a server that restarted

HELD = "() => (window.__attentionExplorerLiveScores || {}).pg_live"
DRAWN = "el => { const v = el.parentNode.__attentionExplorerLive; return !!v && v.frames > 0 && !v.raf; }"


@pytest.mark.browser
def test_maps_whose_scores_were_lost_ask_for_them_and_are_redrawn(browser_and_base):
    """The page forgets the scores it was sent, then the maps are mounted again (the live toggle off and on): the
    session has sent them already, so the feed names them without carrying them; the maps ask (``need``) and the
    next run sends them. Without the ask the maps stayed blank."""
    from benchmarks.browser_feel import set_live
    from tests.test_browser import opened

    browser, base = browser_and_base
    cfg = WhatIf(seq_len=8, d_model=64, n_heads=4, temperature=0.5)
    with opened(browser, base + "/Playground?seq_len=8&d_model=64&heads=4&temperature=0.5") as (page, dialogs):
        page.wait_for_selector(MAPS)
        page.wait_for_function(DRAWN, arg=page.locator(MAPS).first.element_handle())
        page.evaluate("() => { delete window.__attentionExplorerLiveScores; }")
        set_live(page, False)
        assert page.locator(MAPS).count() == 0
        set_live(page, True)
        page.wait_for_selector(MAPS)
        maps = page.locator(MAPS).first
        page.wait_for_function(DRAWN, arg=maps.element_handle(), timeout=60000)
        assert maps.evaluate("el => el.parentNode.__attentionExplorerLive.asked") >= 0  # it asked
        assert page.evaluate(HELD) is not None
        _assert_maps_show(page, cfg)
        assert not dialogs


@pytest.mark.browser
def test_after_a_server_restart_the_maps_are_sent_their_scores_again_and_take_the_new_sessions_settings(
    browser_and_base,
):
    """The server stops and starts again on the same address while the tab stays open. The tab reconnects to a new
    session (Streamlit keeps the page as it was, maps included); its first change runs the page whole, which sends
    the scores afresh (the page's copy is replaced) and the maps show the page's setting, the one in the URL; two
    releases on the live slider after it (body-only reruns) redraw them: the new session's settings win over the
    ones the maps took from the old session."""
    import subprocess

    from harness.server import ROOT, free_port, stop, streamlit_command, wait_for_address, wait_for_app, wait_healthy
    from tests.test_browser import opened

    browser, _ = browser_and_base
    port = free_port()
    shape = dict(seq_len=8, d_model=64, n_heads=4)

    def serve():
        proc = subprocess.Popen(streamlit_command("streamlit_app.py", port), cwd=ROOT, stdout=subprocess.DEVNULL)
        wait_healthy(f"http://127.0.0.1:{port}", proc, 90)
        return proc

    proc = serve()
    try:
        url = f"http://127.0.0.1:{port}/Playground?seq_len=8&d_model=64&heads=4&temperature=1.0"
        with opened(browser, url) as (page, dialogs):
            page.wait_for_selector(MAPS, timeout=120000)
            maps = page.locator(MAPS).first
            page.wait_for_function(DRAWN, arg=maps.element_handle())
            page.evaluate("() => { window.__attentionExplorerLiveScores.pg_live.before = true; }")
            stop(proc)
            connected = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
            page.wait_for_selector(connected, state="detached", timeout=60000)  # the tab has seen it go
            proc = serve()
            page.wait_for_selector(connected, timeout=90000)
            live_slider = page.locator(f'{MAPS} input[aria-label^="temperature"]').first
            live_slider.focus()
            page.keyboard.press("ArrowRight")  # the new session's first run: the whole page
            page.wait_for_function(f"() => !({HELD})().before", timeout=60000)  # the scores, sent again
            wait_for_app(page)

            def shows_the_url():
                tau = _url_temperature(page.url)
                page.wait_for_function(
                    "([el, t]) => el.parentNode.__attentionExplorerLive.panels[0].setting.temperature === t",
                    arg=[maps.element_handle(), tau],
                    timeout=30000,
                )
                page.wait_for_function(DRAWN, arg=maps.element_handle())
                _assert_maps_show(page, WhatIf(**shape, temperature=tau))
                return tau

            tau = shows_the_url()
            live_slider.focus()
            page.keyboard.press("ArrowLeft")  # a release: a body-only rerun of the new session
            wait_for_address(page, lambda u: _url_temperature(u) < tau, timeout=60000)
            wait_for_app(page)
            tau = shows_the_url()
            live_slider.focus()
            page.keyboard.press("ArrowRight")  # a release
            wait_for_address(page, lambda u: _url_temperature(u) > tau, timeout=60000)
            wait_for_app(page)
            shows_the_url()
            assert not dialogs
    finally:
        stop(proc)


@pytest.mark.browser
def test_compares_maps_after_a_new_seq_len_of_a_draw_as_new_scores_and_bs_kept_ones(browser_and_base):
    """A new seq_len of A sends A's new scores and not B's (the page holds them): the maps draw A's new weights
    and B's from the array kept since the page load, both equal to attention_core's."""
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    a = WhatIf(seq_len=8, d_model=64, n_heads=4, scaled=True)
    b = a.replace(scaled=False)
    with opened(browser, base + "/Compare?seq_len=8&d_model=64&heads=4") as (page, dialogs):
        page.wait_for_selector(MAPS, timeout=120000)
        page.wait_for_function(DRAWN, arg=page.locator(MAPS).first.element_handle())
        kept = page.evaluate("() => Object.values(window.__attentionExplorerLiveScores.cmp_live.arrays)[0]")
        sidebar = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(
            has_text="seq_len (tokens) (A)"
        )
        sidebar.get_by_role("slider").first.focus()
        page.keyboard.press("ArrowLeft")
        wait_for_address(page, lambda u: "a_seq_len=7" in u, timeout=60000)
        wait_for_app(page)
        maps = page.locator(MAPS).first
        page.wait_for_function(
            "el => { const v = el.parentNode.__attentionExplorerLive; return v && v.panels[0].Tq === 7 && v.frames > 0; }",
            arg=maps.element_handle(),
            timeout=60000,
        )
        got = maps.evaluate("el => el.parentNode.__attentionExplorerLive.panels.map(p => Array.from(p.A))")
        for weights, cfg in zip(got, (a.replace(seq_len=7), b)):
            assert np.abs(np.asarray(weights) - run_whatif(cfg).weights.ravel()).max() < 1e-6
        assert maps.evaluate("el => Array.from(el.parentNode.__attentionExplorerLive.panels[1].S)") == kept
        assert not dialogs


@pytest.mark.browser
def test_the_scripts_are_sent_when_opened_and_follow_a_release_and_the_downloads_still_work(browser_and_base):
    """The reproduce scripts are sent when their box is opened, and after a release (a body-only rerun, which does
    not draw their box again) the scripts shown carry the new temperature, and the downloads give their files."""
    from harness.server import wait_for_address, wait_for_app
    from tests.test_browser import opened

    browser, base = browser_and_base
    with opened(browser, base + "/Playground?seq_len=6&d_model=32&heads=2&temperature=1.0") as (page, _):
        page.wait_for_selector(MAPS)
        box = page.locator('[data-testid="stExpander"]').filter(has_text="Show the reproduce scripts")
        assert box.locator('[data-testid="stCode"]').count() == 0  # closed: not sent
        box.locator("summary").click()
        box.locator('[data-testid="stCode"]').nth(1).wait_for(timeout=60000)
        assert re.findall(r"temperature=([\d.]+)", box.inner_text())[:1] == ["1.0"]
        slider = page.locator(f'{MAPS} input[aria-label^="temperature"]').first
        slider.focus()
        page.keyboard.press("ArrowRight")
        wait_for_address(page, lambda url: _url_temperature(url) > 1.0, timeout=60000)
        wait_for_app(page)
        tau = _url_temperature(page.url)
        box.filter(has_text=f"temperature={tau:g}").wait_for(timeout=30000)
        shown = [float(t) for t in re.findall(r"temperature=([\d.]+)", box.inner_text())]
        assert shown and set(shown) == {tau}  # both scripts, at the released temperature only
        # the downloads still lead to their files (a release's request starts as a full run, which drops the files
        # of the buttons it does not draw again: a button outside the body led nowhere)
        for label in ("Output Z (CSV", "Reproduce with attention_core (.py)"):
            with page.expect_download(timeout=60000) as got:
                page.locator('[data-testid="stDownloadButton"]').filter(has_text=label).locator("button").click()
            text = Path(got.value.path()).read_text(encoding="utf-8")
            if label.startswith("Reproduce"):
                assert [float(t) for t in re.findall(r"temperature=([\d.]+)", text)] == [tau]
            else:
                assert text.count("\n") >= 6  # a header and a row per token
