"""What the live maps send, at the protocol level (the front end's websocket, no browser): the raw scores once per
input and session, never again for a change they survive (a temperature release), again when the input changes,
to every new session (a second tab, a reload, a server restart), and when the browser says it lacks them.

The bytes are counted by part as benchmarks/live_bytes.py counts them (the float32 arrays in the live components'
data). Chromium's side (the maps redrawn after a lost copy and after a server restart) is in tests/test_live_maps.py.
"""

import asyncio
import json

import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.live_bytes import CountingClient, Tally, _setting
from ui.server.fairness import CACHE_GRACE

PLAYGROUND = "Playground?seq_len=128&d_model=512&heads=8"
SCORES_128x8 = 8 * 128 * 128 * 4  # (H, T, T) float32


async def _release(c: CountingClient, tau: float, panel: str = "") -> Tally:
    """The learner lets go of the live temperature at ``tau`` (after a student's pause: a request within
    CACHE_GRACE of a run's end is answered without references to the browser's message cache)."""
    await asyncio.sleep(CACHE_GRACE + 0.2)
    c.tally = Tally()
    r = await c._run(c.release_state({panel: _setting(tau)}))
    assert not r.errors, r.errors
    return c.tally


async def _open(base: str, path: str) -> CountingClient:
    c = CountingClient(base, path, timeout=120)
    c.tally = Tally()
    r = await c.open()
    assert not r.errors, r.errors
    return c


@pytest.mark.slow
def test_a_release_sends_no_scores_and_a_new_input_sends_them_once(app_server):
    async def go():
        c = await _open(app_server[0], PLAYGROUND)
        try:
            assert c.tally.parts["scores"] == SCORES_128x8  # the page load: every head's scores, once
            for tau in (0.5, 2.0):
                sent = await _release(c, tau)
                assert c.query_params["temperature"] == str(tau)  # the release became the page's setting
                assert sent.parts["scores"] == 0
                # the maps' element came as a reference to the browser's copy; the feed is a setting
                assert sent.parts["live maps, other"] < 20_000, sent.parts
            await asyncio.sleep(CACHE_GRACE + 0.2)
            c.tally = Tally()
            r = await c.change("seq_len (tokens)", 127, param="seq_len")
            assert r.ok, r.errors
            assert c.tally.parts["scores"] == 8 * 127 * 127 * 4  # a new input: its scores, once
            sent = await _release(c, 0.5)
            assert sent.parts["scores"] == 0 and c.query_params["temperature"] == "0.5"
        finally:
            await c.close()

    asyncio.run(go())


def _outputs_bytes(seq_len: int, than: int | None = None) -> int:
    """Bytes of X, V and W_o of Compare's input at ``seq_len`` (d_model 64, 4 heads), less those of the input at
    ``than`` that it shares (by key, as the feed counts what the browser holds)."""
    from attention_core import WhatIf, run_whatif
    from ui.live import _outputs_arrays

    def arrays(T: int) -> dict:
        return {a.key: a.S.nbytes for a in _outputs_arrays(run_whatif(WhatIf(seq_len=T, d_model=64, n_heads=4)))}

    held = arrays(than) if than else {}
    return sum(n for k, n in arrays(seq_len).items() if k not in held)


@pytest.mark.slow
def test_on_compare_a_release_sends_no_scores_and_a_new_seq_len_of_a_sends_only_as(app_server):
    async def go():
        c = await _open(app_server[0], "Compare?seq_len=16&d_model=64&heads=4")
        try:
            # A and B share one input: one array of scores, and one X, V and W_o (the browser draws both Z from them)
            assert c.tally.parts["scores"] == 4 * 16 * 16 * 4 + _outputs_bytes(16)
            sent = await _release(c, 0.5, panel="A")
            assert c.query_params["a_temperature"] == "0.5" and sent.parts["scores"] == 0
            await asyncio.sleep(CACHE_GRACE + 0.2)
            c.tally = Tally()
            r = await c.change("seq_len (tokens) (A)", 15, param="a_seq_len")
            assert r.ok, r.errors
            # A's new scores, X and V; B's, and W_o (one d_model and seed), which the browser holds, not
            assert c.tally.parts["scores"] == 4 * 15 * 15 * 4 + _outputs_bytes(15, than=16)
        finally:
            await c.close()

    asyncio.run(go())


@pytest.mark.slow
def test_every_new_session_and_a_browser_that_lacks_them_are_sent_the_scores(app_server):
    """A second tab (also what a reload or a server restart makes: a new session) is sent the scores though the
    first session holds them; a browser that says it lacks them (the maps' ``need`` trigger) is sent them by the
    run that follows, and after that no more."""

    async def go():
        first = await _open(app_server[0], PLAYGROUND)
        second = await _open(app_server[0], PLAYGROUND)
        try:
            assert first.tally.parts["scores"] == second.tally.parts["scores"] == SCORES_128x8
            assert (await _release(second, 0.5)).parts["scores"] == 0
            maps = second.live_maps_id()
            feed = [
                p
                for k, p, _ in second.page.nodes.values()
                if k == "bidi_component" and p.id != maps and p.component_name.endswith("live_sync")
            ]
            header = json.loads(feed[0].bytes[8 : 8 + int.from_bytes(feed[0].bytes[4:8], "little")])
            cs = second.release_state({"": _setting(0.5)})
            need = [{"event": "need", "value": header["scores"]}]
            cs.widget_states.widgets.append(
                WidgetState(id=_make_trigger_id(maps, "events"), json_trigger_value=json.dumps(need))
            )
            await asyncio.sleep(CACHE_GRACE + 0.2)
            second.tally = Tally()
            r = await second._run(cs)
            assert not r.errors and second.tally.parts["scores"] == SCORES_128x8
            assert (await _release(second, 2.0)).parts["scores"] == 0
        finally:
            await first.close()
            await second.close()

    asyncio.run(go())


class PathClient(CountingClient):
    """Also notes the delta path of every element a run sends."""

    paths: list = []

    def handle(self, msg, errors):
        if msg.WhichOneof("type") in ("delta", "ref_hash"):
            self.paths.append(tuple(msg.metadata.delta_path))
        return super().handle(msg, errors)


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, panel, param, most, images",
    [
        # a full run sent 58 KB per new temperature here; the body rerun about 20 KB over the websocket, and the
        # output map drawn by the server as an image, 15-45 KB (docs/BENCHMARKS.md says what the rest is)
        (PLAYGROUND, "", "temperature", 24_000, False),
        # the default size: X and Z drawn by the browser too, and any image the browser would fetch counted
        ("Playground", "", "temperature", 20_000, True),
        # A's and B's temperature, scaling and mask are set above their maps only: a release reruns the body too
        ("Compare", "A", "a_temperature", 20_000, True),
    ],
    ids=["128x8", "default", "compare"],
)
def test_a_release_reruns_only_the_body(app_server, path, panel, param, most, images):
    """The Playground and Compare draw the temperature nowhere but in the live maps, so a release that moves only it
    reruns the page's body: of the sidebar nothing is sent while the share box is closed (as a page opens), only
    the share box's link once it is open, the page's widgets stay, the URL and the sentences follow."""

    async def go():
        c = PathClient(app_server[0], path, timeout=120)
        c.tally, c.paths, c.fetch_images = Tally(), [], images
        r = await c.open()
        assert not r.errors, r.errors
        widgets = {w.label for w in c.page.widgets()}
        assert any(p[0] == 1 for p in c.paths)  # the full run drew the sidebar
        try:
            for tau, shared in ((0.398, False), (2.512, True)):  # temperatures this session has not had
                if shared:  # open the share box (a full run): its link is then sent with every release
                    r = await c.change("Share this experiment", True)
                    assert r.ok and r.status == "finished", r
                c.paths = []
                sent = await _release(c, tau, panel)
                assert c.query_params[param] == str(tau)
                # of the sidebar, only the open share box (its link names the new temperature); none of its widgets
                sidebar = {p[:2] for p in c.paths if p[0] == 1}
                assert len(sidebar) == (1 if shared else 0), sorted(set(c.paths))
                links = [t for t in c.page.texts() if "?" in t and param in t]
                assert (f"{param}={tau}" in links[0]) if shared else not links, links
                assert {w.label for w in c.page.widgets()} == widgets
                assert sent.total < most, sent.parts
            said = "**temperature** (A 2.512, B 1)" if panel else "2.512"
            assert any(said in t for t in c.page.texts()), c.page.texts()
        finally:
            await c.close()

    asyncio.run(go())


@pytest.mark.slow
def test_the_protocol_client_lets_go_of_the_live_temperature_as_a_browser_does(app_server):
    """benchmarks/protocol.StreamlitClient.release (a classroom benchmark's student on a live page): the release
    becomes the panel's setting, in the URL and in the newest feed, and a value the URL does not name is not
    counted as verified."""
    from benchmarks.protocol import StreamlitClient

    async def go():
        async with StreamlitClient(app_server[0], "Compare", timeout=120) as c:
            assert c.live_settings()["A"]["temperature"] == 1.0 and c.live_settings()["B"]["scaled"] is False
            r = await c.release("A", 0.5, "a_temperature")
            assert r.ok and r.verified and r.status == "fragment finished", r
            assert c.live_settings()["A"]["temperature"] == 0.5  # the body's feed, newer than the full run's
            assert c.live_settings()["B"]["temperature"] == 1.0
            r = await c.release("A", 0.7, "b_temperature")  # the wrong parameter: B's stays at 1
            assert not r.errors and r.verified is False and not r.ok

    asyncio.run(go())


@pytest.mark.slow
def test_on_compare_a_release_keeps_the_picked_head_when_one_side_has_fewer_heads(app_server):
    """A has 8 heads, B one; head 6 is picked (B's maps show its only head). Letting go of A's temperature hands
    both sides' heads back: B's head 6, out of its range, is dropped, so the picker keeps head 6 and the release
    reruns only the body (a side's head clamped to its range came back as a new pick: a full run, head 1)."""
    from benchmarks.protocol import StreamlitClient

    async def go():
        async with StreamlitClient(app_server[0], "Compare?a_heads=8&b_heads=1", timeout=120) as c:
            r = await c.change("head", "head 6")
            assert r.ok, r
            assert {p: s["head"] for p, s in c.live_settings().items()} == {"A": 5, "B": 5}
            for tau in (0.5, 2.0):
                r = await c.release("A", tau, "a_temperature")
                assert r.ok and r.verified and r.status == "fragment finished", r
                assert c.page.widget("head").value == "head 6"

    asyncio.run(go())
