"""The protocol-level client of the load benchmarks (benchmarks/protocol.py): a real server, a real websocket.

Not timed: these tests check that a change sent as the front end sends it comes back with the new value on the
page, that the client notices when it does not, and that bad widget values leave the server working. The first
tests build ForwardMsgs by hand to pin down the page model the verification rests on.
"""

import asyncio
import urllib.request

import pytest
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.protocol import Page, StreamlitClient, widget_state
from harness.server import streamlit_server


def slider_delta(label: str, **fields) -> Delta:
    d = Delta()
    s = d.new_element.slider
    s.id, s.label = f"$$ID-{label}", label
    for k, v in fields.items():
        if isinstance(v, list):
            getattr(s, k)[:] = v
        else:
            setattr(s, k, v)
    return d


def test_page_keeps_widget_state_like_the_front_end():
    page = Page()
    page.start_run()
    page.apply(slider_delta("seq_len", default=[8], min=1, max=512, data_type=Slider.INT), (0, 1))
    page.apply(slider_delta("old", default=[1]), (0, 2))
    page.finish_run()
    assert page.widget("seq_len").value == 8 and page.widget("seq").label == "seq_len"
    page.values[page.widget("seq_len").id] = 20  # the user moved it
    page.start_run()
    page.apply(slider_delta("seq_len", default=[8], min=1, max=512, data_type=Slider.INT), (0, 1))
    page.finish_run()
    assert page.widget("seq_len").value == 20  # a redrawn widget keeps its state unless Python sets it
    with pytest.raises(LookupError, match="old"):  # not drawn again: gone, and the message lists what is there
        page.widget("old")
    page.start_run()
    page.apply(slider_delta("seq_len", value=[5], set_value=True, data_type=Slider.INT), (0, 1))
    assert page.widget("seq_len").value == 5


def test_select_slider_state_is_the_formatted_option_and_exceptions_are_reported():
    page = Page()
    page.start_run()
    page.apply(slider_delta("temperature", type=Slider.SELECT_SLIDER, options=["0.1", "1", "10"], default=[1]), (1, 0))
    w = page.widget("temperature")
    assert w.value == "1" and w.options == ["0.1", "1", "10"]
    assert list(widget_state(w, "10").string_array_value.data) == ["10"]
    d = Delta()
    d.new_element.exception.type, d.new_element.exception.message = "ValueError", "boom"
    assert "ValueError: boom" in page.apply(d, (0, 3))


def test_widget_state_value_types():
    page = Page()
    page.start_run()
    page.apply(slider_delta("x", default=[0.5]), (0, 0))
    d = Delta()
    n = d.new_element.number_input
    n.id, n.label, n.data_type, n.default = "$$ID-seed", "seed", NumberInput.INT, 3
    page.apply(d, (0, 1))
    d = Delta()
    c = d.new_element.checkbox
    c.id, c.label = "$$ID-t", "scale"
    page.apply(d, (0, 2))
    assert list(widget_state(page.widget("x"), 0.75).double_array_value.data) == [0.75]
    assert widget_state(page.widget("seed"), 7).WhichOneof("value") == "int_value"
    assert widget_state(page.widget("scale"), True).bool_value is True
    with pytest.raises(ValueError, match="must be an http"):
        StreamlitClient("ws://127.0.0.1:1")


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as (base, _proc):
        yield base


def run(coro):
    return asyncio.run(coro)


LIVE_TOGGLE = "live maps (redraw in the browser while a control moves)"


async def static_maps(c: StreamlitClient, label: str = "temperature") -> None:
    """Turn the live maps off (the Playground's, Compare's): the temperature is then a widget of the page's (with
    live maps on it is the maps' own control, in the browser)."""
    r = await c.change(LIVE_TOGGLE, False)
    assert r.ok, r.errors
    c.page.widget(label)  # there now


@pytest.mark.slow
def test_slider_change_comes_back_with_the_new_value(server):
    async def go():
        async with StreamlitClient(server, "Playground") as c:
            assert c.page.texts()[0].endswith("Playground")
            assert c.page.widget("seq_len (tokens)").value != 12
            r = await c.change("seq_len (tokens)", 12, param="seq_len")
            assert r.status == "finished" and r.errors == () and r.verified and r.bytes > 0 and r.messages > 0
            assert c.query_params["seq_len"] == "12"
            assert any("T = 12" in t for t in c.page.texts())  # the formula on the page names the new length
            await static_maps(c)
            r = await c.change("temperature", "0.501", param="temperature")
            assert r.ok and c.query_params["temperature"] == "0.501"
            assert any(r"\tau = 0.501" in t for t in c.page.texts())

    run(go())


@pytest.mark.slow
def test_verification_fails_when_the_page_does_not_take_the_value(server):
    async def go():
        async with StreamlitClient(server, "Playground") as c:
            await static_maps(c)
            r = await c.change("temperature", "0.5", param="temperature")  # not one of the slider's options
            assert r.errors == () and r.verified is False and not r.ok
            assert c.query_params["temperature"] != "0.5"

    run(go())


@pytest.mark.slow
def test_bad_widget_values_do_not_crash_the_server(server):
    async def go():
        async with StreamlitClient(server, "Playground") as c:
            w = c.page.widget("seq_len (tokens)")
            huge = WidgetState(id=w.id)
            huge.double_array_value.data[:] = [1e9]
            r = await c.change(w.label, None, state=huge)
            assert r.status == "finished" and r.errors == ()
            assert 1 <= int(c.query_params["seq_len"]) <= 512
            r = await c.change("seq_len (tokens)", 9, param="seq_len")
            assert r.ok
            wrong = WidgetState(id=w.id)
            wrong.string_value = "nine"  # a slider never sends text
            r = await c.change(w.label, None, state=wrong)
            # the run ends (Streamlit ignores the value or shows a TypeError on the page); the server stays up
            assert r.status == "finished"
        with urllib.request.urlopen(f"{server}/_stcore/health", timeout=10) as resp:
            assert resp.status == 200
        async with StreamlitClient(server, "Playground?seq_len=7") as c:  # a new student gets a working page
            assert c.page.widget("seq_len (tokens)").value == 7
            r = await c.change("seq_len (tokens)", 6, param="seq_len")
            assert r.ok

    run(go())


def test_the_classroom_tab_runs_at_the_niceness_asked_for(tmp_path):
    """benchmarks/classroom.niced: the Chromium tab's wrapper runs its program at the given niceness, with its
    arguments; niceness 0 uses the program itself."""
    import shutil
    import subprocess

    from benchmarks.classroom import niced

    nice = shutil.which("nice")
    assert niced(nice, 0, tmp_path) == nice
    wrapper = niced(nice, 19, tmp_path)
    assert subprocess.run([wrapper], capture_output=True, text=True, check=True).stdout.strip() == "19"
    out = subprocess.run([wrapper, "sh", "-c", 'nice; echo "$0"', "arg with spaces"], capture_output=True, text=True)
    assert out.stdout.split("\n")[:2] == ["19", "arg with spaces"]


@pytest.mark.slow
def test_a_flood_beside_a_small_class_is_folded_paced_and_told(server):
    """One client sends 400 reruns of Compare's temperature (A) back to back while three students change theirs:
    the flooder's page ends on its last value after few runs and shows the notice; every student's change comes
    back verified (ui/server/fairness.py)."""
    import re

    from benchmarks.classroom import scenarios
    from benchmarks.flood import flood, flood_values
    from ui.server.fairness import FLOOD_REQUESTS

    sc = scenarios()["why_scale"]

    async def student():
        async with StreamlitClient(server, sc.path) as c:
            await static_maps(c, sc.label)
            out = []
            for _ in range(3):
                w = c.page.widget(sc.label)
                out.append(await c.change(sc.label, flood_values(w.options, w.value, 1)[0], param=sc.param))
                await asyncio.sleep(0.3)
            return out

    async def flooder():
        async with StreamlitClient(server, sc.path) as c:
            await static_maps(c, sc.label)
            await asyncio.sleep(0.2)
            w = c.page.widget(sc.label)
            return await flood(c, sc.label, flood_values(w.options, w.value, 400), sc.param, timeout=60)

    async def go():
        return await asyncio.gather(flooder(), student(), student(), student())

    f, *students = run(go())
    assert f.shows_last and not f.errors, f
    assert 0 < f.runs_started <= 40, f"400 requests should fold into a few runs, not {f.runs_started}"
    said = [n for n in f.notices if n.startswith("Slow down")]
    assert said, f  # the whole result: runs started and finished, seconds, notices
    assert int(re.search(r"sent ([\d,]+) changes", said[-1]).group(1).replace(",", "")) > FLOOD_REQUESTS
    for changes in students:
        assert all(r.ok for r in changes), [r.errors or r.verified for r in changes]


@pytest.mark.slow
def test_the_url_ends_on_the_last_value_when_a_change_is_sent_before_the_last_run_wrote_its_url(server):
    """A browser sends each change with the URL it shows. When a second change leaves before the first run's new URL
    has arrived, that run starts from the stale URL: a page that wrote only the parameters that differ from it sent
    nothing (the stale URL already named the value), and the browser kept the first run's URL while its slider
    showed the second value (found with 121 arrow presses on Compare). Every run now sends the whole URL."""

    async def go():
        async with StreamlitClient(server, "Playground") as c:
            await static_maps(c)
            label = "temperature"
            first = c.page.widget(label).value
            other = next(o for o in c.page.widget(label).options if o != first)
            a = c.client_state(label, other)  # both carry the URL as it is now (temperature = first)
            b = c.client_state(label, first)
            await c.ws.send(c.rerun_message(a))
            errors, finished, sent_b = [], False, False
            async with asyncio.timeout(90):
                while True:  # until a run has finished after b was sent and nothing more comes for 2 s
                    try:
                        async with asyncio.timeout(2 if finished else 60):
                            raw = await c.ws.recv(decode=False)
                    except TimeoutError:
                        break
                    msg = ForwardMsg()
                    msg.ParseFromString(raw)
                    if msg.WhichOneof("type") == "new_session" and not sent_b:
                        await c.ws.send(c.rerun_message(b))  # the first run has started, its URL not yet sent
                        sent_b = True
                    finished = bool(c.handle(msg, errors)) and sent_b or finished
            assert not errors, errors
            return first, c.query_params.get("temperature")

    first, in_url = run(go())
    assert in_url is not None and float(in_url) == float(first), (first, in_url)


WIDGET_ELEMENTS = {  # the new_element kinds that are widgets (a toggle is a checkbox)
    "button", "checkbox", "slider", "selectbox", "number_input", "text_input", "text_area", "radio", "multiselect",
    "color_picker", "date_input", "time_input", "download_button", "data_editor", "button_group", "chat_input",
}  # fmt: skip


def _recording(c: StreamlitClient) -> list[tuple[str, str]]:
    """Every message the client handles from now on, as (kind, element kind)."""
    seen, handle = [], c.handle

    def recorded(msg, errors):
        kind = msg.WhichOneof("type")
        element = msg.delta.new_element.WhichOneof("type") if kind == "delta" else ""
        seen.append((kind, element or ""))
        return handle(msg, errors)

    c.handle = recorded
    return seen


@pytest.mark.slow
def test_a_run_writes_the_url_in_one_message_and_a_body_rerun_sends_no_widget(server):
    """Each change of st.query_params sends a message, so a page that wrote each what-if set's parameters and then
    the whole URL sent two to four a run: the URL is written into a dict and sent once, in a full run and in a
    body rerun. A body rerun (a live release on Compare's "Why scale?") sends no widget: the share box's "Start a
    class" is drawn by the full run, around the place where the body writes the link (a button in the body reran
    a fragment a new session does not hold). The URL still follows the release."""
    from ui.skeleton.controls import TEMPERATURES

    async def go():
        async with StreamlitClient(server, "Compare?preset=2_why_scale") as c:
            now = c.live_settings()["A"]["temperature"]
            tau = next(t for t in TEMPERATURES if t != now)
            seen = _recording(c)
            r = await c.release("A", tau, "a_temperature")
            assert r.ok and r.status == "fragment finished", r
            body = list(seen)
            label = next(w.label for w in c.page.widgets() if w.label.startswith("seq_len") and w.label.endswith("(A)"))
            seen.clear()
            r = await c.change(label, 12, param="a_seq_len")
            assert r.ok and r.status == "finished", r
            return body, list(seen), tau, dict(c.query_params)

    body, full, tau, params = run(go())
    assert [k for k, _ in body].count("page_info_changed") == 1, body
    assert [k for k, _ in full].count("page_info_changed") == 1, full
    assert not {e for _, e in body} & WIDGET_ELEMENTS, body
    assert "button" in {e for _, e in full}  # the full run draws them, "Start a class" among them
    assert float(params["a_temperature"]) == tau and params["a_seq_len"] == "12"
