"""Partial reruns (ui/session/partial.py): a leaf control reruns the page's body alone; everything else the page.

AppTest keeps only the body's elements after a body-only run (a browser keeps the rest of the page), so "the
widgets are gone from the tree" is how these tests see that the page's full-run part did not run. The
protocol tests run a real server: a leaf change comes back as a fragment run with the new value, and a
session that is new (the server restarted, another replica) gets a full run and then body runs again.
"""

import ast
import asyncio

import pytest

from tests.apptest_util import ROOT, app, run_ok, set_widget, tables, texts, widget_count
from ui.classroom.mode import TOGGLE_KEY
from ui.skeleton.registry import PAGES as REGISTRY

# page, a leaf control (key, value), text that shows the new value, a structural control (key, value)
PAGES = [
    ("pages/Playground.py", ("ctl_temperature", 0.501), r"\tau = 0.501", ("ctl_seq_len", 9)),
    ("pages/Multi-head.py", ("ctl_seed", 5), "(seed 5)", ("ctl_seq_len", 9)),
    ("pages/Compare.py", ("a_temperature", 0.501), "**temperature** (A 0.501, B 1)", ("a_seq_len", 9)),
    ("pages/Step_by_step.py", ("ctl_temperature", 0.501), r"\tau = 0.501", ("sbs_tokens", "A B B")),
    ("pages/Transformer_block.py", ("tb_tdec", 7), "The decoder's 7 tokens", ("ctl_d_model", 32)),
    ("pages/Cross-attention.py", ("ctl_seed", 5), "(seed 5)", ("ca_q", "a b c")),
]


@pytest.mark.parametrize("path, leaf, shown, structural", PAGES, ids=[p[0].split("/")[-1] for p in PAGES])
def test_leaf_control_reruns_the_body_alone(path, leaf, shown, structural):
    at = run_ok(app(path, partial=True))
    assert widget_count(at) > 3 and shown not in texts(at)
    run_ok(set_widget(at, *leaf))
    assert widget_count(at) == 0, "a leaf change ran the page's full-run part (its widgets were drawn again)"
    assert shown in texts(at), "the body drew the new value"
    run_ok(at)  # a plain rerun: the whole page, with the value kept
    assert widget_count(at) > 3 and shown in texts(at)
    run_ok(set_widget(at, *structural))
    assert widget_count(at) > 3, "a structural change (it changes other widgets) reruns the page"


# pages whose body names the changed value in the URL only: (page, leaf control, URL name, URL value, body text)
URL_PAGES = [
    ("pages/Softmax_saturation.py", ("ctl_temperature", 0.501), "temperature", "0.501", "temperature 0.501"),
    ("pages/Masks.py", ("ctl_temperature", 0.501), "temperature", "0.501", "Why padded keys get zero weight"),
    ("pages/Implementations.py", ("ctl_seed", 5), "seed", "5", "Differences against the NumPy reference"),
]


@pytest.mark.parametrize("path, leaf, name, value, body_text", URL_PAGES, ids=[p[0].split("/")[-1] for p in URL_PAGES])
def test_leaf_control_reruns_the_body_alone_and_writes_the_url(path, leaf, name, value, body_text):
    at = run_ok(app(path, partial=True))
    assert widget_count(at) > 3 and at.query_params[name] != value
    run_ok(set_widget(at, *leaf))
    assert widget_count(at) == 0, "a leaf change ran the page's full-run part (its widgets were drawn again)"
    assert at.query_params[name] == value and body_text in texts(at)


@pytest.mark.parametrize("path, leaf, shown, structural", PAGES[:1])
def test_classroom_mode_and_partial_off_rerun_the_page(path, leaf, shown, structural):
    at = run_ok(app(path, partial=False))
    run_ok(set_widget(at, *leaf))
    assert widget_count(at) > 3 and shown in texts(at)
    at = run_ok(app(path, partial=True))
    run_ok(set_widget(at, f"{TOGGLE_KEY}", True))
    run_ok(set_widget(at, *leaf))
    assert widget_count(at) > 3, "in classroom mode the prediction question depends on every setting"


def test_leaf_control_on_a_page_without_a_body_reruns_that_page():
    at = run_ok(app("pages/Positions.py", partial=True))
    run_ok(set_widget(at, "ctl_temperature", 0.501))
    assert widget_count(at) > 3 and at.query_params["temperature"] == "0.501"


# ---- a real server: what a browser's session sees


@pytest.fixture(scope="module")
def two_servers():
    """Two servers on loopback: the second plays the restarted server (or the other replica)."""
    from harness.server import streamlit_server

    with streamlit_server() as (a, _), streamlit_server() as (b, _):
        yield a, b


@pytest.mark.slow
def test_leaf_change_is_a_body_run_and_survives_a_new_session(two_servers):
    from benchmarks.classroom import LIVE_TOGGLE
    from benchmarks.protocol import StreamlitClient

    first, second = two_servers

    async def go():
        async with StreamlitClient(first, "Compare") as c:
            # with live maps A's temperature is the maps' own control (its release: tests/test_live_feed.py)
            assert (await c.change(LIVE_TOGGLE, False)).ok
            r = await c.change("temperature (A)", "0.501", param="a_temperature")
            assert r.ok and r.status == "fragment finished", r
            assert any("0.501" in t for t in c.page.texts()), "the body's sentence names A's temperature"
            r = await c.change("seq_len (tokens) (A)", 9, param="a_seq_len")
            assert r.ok and r.status == "finished", r
            # the server is gone; the browser keeps its page and its next change goes to a new session
            again = StreamlitClient(second, "Compare")
            again.page, again.query_string, again.page_script_hash = c.page, c.query_string, c.page_script_hash
            await again._connect(30)
            try:
                r = await again.change("temperature (A)", "2.0")
                assert r.status == "finished" and not r.errors, "a new session runs the whole page, not nothing"
                assert (await again.change(LIVE_TOGGLE, False)).ok  # a new session starts with live maps on
                r = await again.change("temperature (A)", "0.2", param="a_temperature")
                assert r.ok and r.status == "fragment finished", "and then the body alone again"
                assert again.query_params["a_seq_len"] == "9"
            finally:
                await again.close()

    asyncio.run(go())


def test_a_body_left_from_another_page_is_not_rerun():
    """Playground's body stays registered when the next page has none (Positions reruns whole): a leaf change
    there must rerun that page, not Playground's body."""
    at = run_ok(app("pages/Playground.py", partial=True))
    at.switch_page("pages/Positions.py")
    run_ok(at)
    assert widget_count(at) > 3
    run_ok(set_widget(at, "ctl_temperature", 0.501))
    assert widget_count(at) > 3, "the Positions page ran again"
    assert "Temperature 0.501 divides these scores" in texts(at)
    assert not any(s.value.startswith(("Attention weights", "Softmax saturation of head")) for s in at.subheader)


def test_a_page_whose_last_full_run_stopped_before_its_body_reruns_whole():
    """A full run interrupted before its body (a newer change) leaves the flag cleared by ui.skeleton.page.Page."""
    from ui.session.partial import _READY

    at = run_ok(app("pages/Playground.py", partial=True))
    at.session_state[_READY] = None  # what ui.skeleton.page.Page leaves when the run does not reach the body
    run_ok(set_widget(at, "ctl_temperature", 0.501))
    assert widget_count(at) > 3 and r"\tau = 0.501" in texts(at)
    run_ok(set_widget(at, "ctl_seed", 3))
    assert widget_count(at) == 0, "the full run drew the body again, so the next leaf change reruns it alone"


def test_typed_tokens_changed_with_a_leaf_control_rerun_the_page():
    """Step by step: a token edit committed by the same interaction as a temperature change reruns the page."""
    at = run_ok(app("pages/Step_by_step.py", partial=True))
    at.text_input(key="sbs_tokens").set_value("B B")
    set_widget(at, "ctl_temperature", 0.501)
    run_ok(at)
    assert widget_count(at) > 3
    page = texts(at)
    assert "2 tokens, one row each" in page and r"\tau = 0.501" in page


def test_reshuffle_reruns_the_body_alone():
    """Positional encoding's Reshuffle is a leaf: the next shuffle is drawn by the body alone."""
    at = run_ok(app("pages/Positional_encoding.py", partial=True))
    assert "shuffle #0" in texts(at)
    at.button(key="pe_reshuffle").click()
    run_ok(at)
    assert widget_count(at) == 0 and "shuffle #1" in texts(at)
    run_ok(at)
    at.button(key="pe_reshuffle").click()
    run_ok(at)
    assert "shuffle #2" in texts(at)


# every leaf control of every page with a body: (page, [(widget key, new value), ...])
LEAVES = [
    (
        "pages/Playground.py",
        [
            ("ctl_temperature", 0.501),
            ("ctl_scaled", False),
            ("ctl_seed", 3),
            ("ctl_positional", True),
            ("pg_head", 2),
            ("pg_query", 3),
            ("pg_qkv", True),
            ("stretch_colours", True),
        ],
    ),
    ("pages/Step_by_step.py", [("ctl_temperature", 1.995), ("ctl_scaled", False)]),
    ("pages/Soft_lookup.py", [("sl_query", 0.5), ("sl_tau", 2.0), ("sl_twin", True)]),
    ("pages/Softmax_saturation.py", [("ctl_temperature", 0.501), ("ctl_scaled", False), ("ctl_seed", 2)]),
    ("pages/Multi-head.py", [("ctl_seed", 4), ("ctl_temperature", 0.501), ("mh_head", 1)]),
    (
        "pages/Masks.py",
        [("ctl_pad_count", 3), ("ctl_positional", True), ("mk_head", 1), ("mk_query", 2), ("ctl_temperature", 0.501)],
    ),
    ("pages/Positional_encoding.py", [("ctl_temperature", 0.501), ("ctl_seed", 5), ("pe_dims", [0, 3])]),
    ("pages/Cross-attention.py", [("ctl_seed", 6), ("ca_head", 1), ("ca_query", 2), ("ctl_scaled", False)]),
    (
        "pages/Compare.py",
        [("a_temperature", 0.501), ("b_seed", 2), ("cmp_head", 1), ("b_scaled", True)],
    ),
    ("pages/Implementations.py", [("ctl_seed", 7), ("ctl_scaled", False)]),
    (
        "pages/Transformer_block.py",
        [("tb_prenorm", True), ("tb_tdec", 7), ("tb_dhead", 1), ("ctl_positional", True)],
    ),
]


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    """The calls of ``name`` (a function, or an attribute such as ``page.run``) in a parsed file."""
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and (getattr(n.func, "id", None) == name or ast.unparse(n.func) == name)
    ]


def pages_with_a_body() -> dict[str, set[str]]:
    """Every page of the registry whose ``page.run`` is given a controls function (its drawing is a body that leaf
    controls rerun alone: ui/skeleton/page.py), with the keys of the leaf PageParams its file declares."""
    found = {}
    for p in REGISTRY:
        tree = ast.parse((ROOT / p.path).read_text(encoding="utf-8"))
        if any(len(c.args) > 1 or any(k.arg == "controls" for k in c.keywords) for c in _calls(tree, "page.run")):
            found[p.path] = {
                c.args[0].value
                for c in _calls(tree, "PageParam")
                if any(k.arg == "leaf" and getattr(k.value, "value", False) is True for k in c.keywords)
            }
    return found


def test_every_page_with_a_body_has_its_leaf_controls_tested():
    """LEAVES names every page with a body once, and every leaf PageParam of its file: a new page with a body, or a
    new leaf control, fails here until it is added to LEAVES."""
    bodies = pages_with_a_body()
    listed = [path for path, _ in LEAVES]
    assert len(listed) == len(set(listed)), (
        f"LEAVES lists a page twice: {sorted(p for p in listed if listed.count(p) > 1)}"
    )
    missing, extra = sorted(set(bodies) - set(listed)), sorted(set(listed) - set(bodies))
    assert not missing, f"pages with a body (page.run given controls) without a line in LEAVES: {missing}"
    assert not extra, f"LEAVES lists pages without a body (or not in the registry): {extra}"
    for path, leaves in LEAVES:
        missing = bodies[path] - {key for key, _ in leaves}
        assert not missing, f"{path}: leaf controls missing from LEAVES: {sorted(missing)}"


@pytest.mark.parametrize("path, leaves", LEAVES, ids=[p[0].split("/")[-1] for p in LEAVES])
def test_every_leaf_change_draws_what_a_full_run_draws(path, leaves):
    """After each leaf change the body alone ran; a full run right after must draw every line the body drew
    (a value the body read stale, or a place it wrote twice, shows up as a line the full run does not draw)."""
    at = run_ok(app(path, partial=True))
    for key, value in leaves:
        run_ok(set_widget(at, key, value))
        assert widget_count(at) == 0, f"{key}: the change ran the page's full-run part"
        body = [line for line in texts(at).splitlines() if line.strip()]
        assert body, f"{key}: the body drew nothing"
        run_ok(at)  # the whole page, same state
        full = set(texts(at).splitlines())
        stale = [line for line in body if line not in full]
        assert not stale, f"{key}: the body drew lines the full run does not: {stale[:3]}"


@pytest.mark.parametrize(
    "path, radio, choice, leaf",
    [
        ("pages/Cross-attention.py", "ca_source", "seeded random", ("ctl_seed", 5)),
        ("pages/Transformer_block.py", "tb_source", "the shared what-if input", ("tb_tdec", 7)),
    ],
)
def test_an_input_radio_changed_with_a_leaf_control_reruns_the_page(path, radio, choice, leaf):
    """The input radios decide which widgets the page draws: changed in the same interaction as a leaf control,
    they still rerun the page (a radio without a callback would have no say, and the body alone would run)."""
    at = run_ok(app(path, partial=True))
    at.radio(key=radio).set_value(choice)
    run_ok(set_widget(at, *leaf))
    assert widget_count(at) > 3 and at.radio(key=radio).value == choice


def test_classroom_mode_keeps_body_reruns_on_a_page_without_a_question():
    """Multi-head asks no prediction question: with classroom mode on, its leaf controls still rerun the body alone
    (Playground, which asks one, reruns whole: test_classroom_mode_and_partial_off_rerun_the_page)."""
    at = run_ok(app("pages/Multi-head.py", {"classroom": "1"}, partial=True))
    run_ok(set_widget(at, "ctl_temperature", 0.501))
    assert widget_count(at) == 0 and "One map per head" in texts(at)


def test_step_by_step_scaling_and_temperature_redraw_only_the_steps_they_change():
    """Steps 1 to 5 (E, Q, K, V, S) depend on the tokens and the matrices alone: the full run draws them and a
    scaling or temperature change (a body rerun) leaves them; the body draws the booster's sentence and steps 6
    to 9 with the new value. A full run draws all nine steps once."""
    at = run_ok(app("pages/Step_by_step.py", partial=True))
    headings = [h for h in texts(at).splitlines() if h.startswith("#### ")]
    assert [h.split(".")[0] for h in headings] == [f"#### {i}" for i in range(1, 10)]
    full_tables = len(tables(at))
    run_ok(set_widget(at, "ctl_scaled", False))
    shown = texts(at)
    assert widget_count(at) == 0
    assert [h.split(".")[0] for h in shown.splitlines() if h.startswith("#### ")] == [f"#### {i}" for i in (6, 7, 8, 9)]
    assert "6. Scaled scores S / √d_k (scaling is off: unchanged)" in shown and "The key booster" in shown
    assert len(tables(at)) == full_tables - 3 - 5  # nor the three matrix editors, nor E, Q, K, V and S
    run_ok(at)  # a plain rerun: the whole page again (AppTest holds only the body's elements after a body rerun)
    assert "1. Embeddings E" in texts(at) and len(tables(at)) == full_tables
    run_ok(set_widget(at, "ctl_temperature", 0.501))
    assert r"\tau = 0.501" in texts(at) and "1. Embeddings E" not in texts(at)
