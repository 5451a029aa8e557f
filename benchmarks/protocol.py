"""A Streamlit client that speaks the front end's websocket protocol, and a server launcher, for load benchmarks.

The client talks to ``/_stcore/stream`` (subprotocol ``streamlit``) as the browser does on Streamlit 1.67:
it sends ``BackMsg.rerun_script`` with a ``ClientState`` (query string, page name or page script hash, every
widget's state, the forward-message cache hashes) and reads ``ForwardMsg`` protobufs until the run's
``script_finished``. It keeps the page (elements by delta path, the URL's query string) so that a change can be
verified: the page that comes back must show the new value. No browser, so the figures are the server's.

    async with StreamlitClient("http://127.0.0.1:8501", "Playground?seq_len=16") as c:
        r = await c.change("temperature", "0.5", param="temperature")
        r.seconds, r.wire_bytes, r.ok
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

from harness.server import free_port, stop, streamlit_command, wait_healthy

LIVE_COMPONENTS = "attention_explorer.live_"  # the live maps' components (ui/live): their maps, their feed


def size_query(T: int, H: int) -> str:
    """The query string of the shared what-if at ``T`` tokens and ``H`` heads, d_model 64 a head: the large sizes the
    benchmarks open the Playground and Compare at (``size_query(128, 8)``: "seq_len=128&d_model=512&heads=8")."""
    return f"seq_len={T}&d_model={64 * H}&heads={H}"


ROOT = Path(__file__).resolve().parents[1]
FINISHED = {
    ForwardMsg.FINISHED_SUCCESSFULLY: "finished",
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "fragment finished",
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile error",
}


# ---- the page as the front end holds it: elements by delta path, rebuilt run by run

WIDGET_KINDS = (
    "slider", "checkbox", "number_input", "selectbox", "radio", "text_input", "text_area", "button",
    "expander",  # an expander that keeps its state (a block: open or closed, sent with every rerun as a bool)
)  # fmt: skip
TEXT_FIELDS = {
    "markdown": "body",
    "heading": "body",
    "text": "body",
    "alert": "body",
    "code": "code_text",
    "toast": "body",
}


@dataclass(frozen=True)
class Widget:
    """One widget element of the page."""

    kind: str  # the Element oneof: "slider" (also select_slider), "checkbox" (also toggle), "number_input", ...
    proto: Any  # its protobuf (Slider, Checkbox, ...), as the server sent it
    fragment_id: str  # the st.fragment it belongs to ("" for the full script)
    path: tuple[int, ...]  # delta path on the page
    value: Any  # what it shows: the front end's state for it (see Page.apply)

    @property
    def id(self) -> str:
        return self.proto.id

    @property
    def label(self) -> str:
        return self.proto.label

    @property
    def disabled(self) -> bool:
        return bool(getattr(self.proto, "disabled", False))

    @property
    def options(self) -> list[str]:
        """The formatted options of a select_slider, selectbox or radio (else [])."""
        return list(getattr(self.proto, "options", []))


def shown_value(kind: str, p: Any) -> Any:
    """The value a widget proto tells a newly drawn widget to show: the value set from Python, else the default.

    A number, a formatted option, a bool, text, or a tuple for ranges.
    """
    if kind == "slider":
        if p.type == Slider.SELECT_SLIDER:  # formatted options (raw_value) once set, else default indices
            vals = list(p.raw_value) if p.set_value and p.raw_value else [p.options[int(i)] for i in p.default]
        else:
            raw = list(p.value if p.set_value else p.default)
            vals = [int(v) if p.data_type == Slider.INT else v for v in raw]
        return vals[0] if len(vals) == 1 else tuple(vals)
    if kind == "number_input":
        v = p.value if p.set_value else p.default
        return int(v) if p.data_type == NumberInput.INT else v
    if kind in ("selectbox", "radio"):
        if p.set_value:
            return p.raw_value
        return p.options[p.default] if p.HasField("default") and p.default < len(p.options) else None
    if kind == "button":
        return False
    if kind == "expander":
        return p.expanded
    return p.value if p.set_value else p.default  # checkbox, toggle, text_input, text_area


class Page:
    """The elements one session shows, kept as the front end keeps them across runs."""

    def __init__(self):
        self.nodes: dict[tuple[int, ...], tuple[str, Any, str]] = {}  # path -> (kind, proto, fragment_id)
        self.values: dict[str, Any] = {}  # widget id -> the value it shows (the front end's widget state)
        self._touched: set[tuple[int, ...]] = set()
        self._fragments: tuple[str, ...] = ()

    def start_run(self, fragment_ids: tuple[str, ...] = ()) -> None:
        """A run (of the whole script, or of these fragments) begins."""
        self._touched, self._fragments = set(), fragment_ids

    def apply(self, delta, path: tuple[int, ...]) -> str | None:
        """Put one Delta at ``path``; return a description when it is an exception element."""
        kind = delta.WhichOneof("type")
        if kind == "new_element":
            el = delta.new_element
            ek = el.WhichOneof("type")
            proto = getattr(el, ek)
            self.nodes[path] = (ek, proto, delta.fragment_id)
            self._touched.add(path)
            # like the front end: a value set from Python wins; a widget seen before keeps its state
            if ek in WIDGET_KINDS and (getattr(proto, "set_value", False) or proto.id not in self.values):
                self.values[proto.id] = shown_value(ek, proto)
            if ek == "exception":
                return f"exception on the page: {el.exception.type}: {el.exception.message}"[:300]
        elif kind == "add_block":
            block = delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.id:  # a stateful expander: a widget
                self.nodes[path] = ("expander", block.expandable, delta.fragment_id)
                self.values.setdefault(block.expandable.id, block.expandable.expanded)  # the front end keeps its own
            else:
                self.nodes[path] = ("block", block, delta.fragment_id)
            self._touched.add(path)
        return None

    def finish_run(self) -> None:
        """Drop what the run did not draw again (of a fragment run: only that fragment's stale elements)."""
        if self._fragments:
            self.nodes = {p: n for p, n in self.nodes.items() if p in self._touched or n[2] not in self._fragments}
        else:
            self.nodes = {p: n for p, n in self.nodes.items() if p in self._touched}
        ids = {n[1].id for n in self.nodes.values() if n[0] in WIDGET_KINDS}
        self.values = {i: v for i, v in self.values.items() if i in ids}

    def widgets(self) -> list[Widget]:
        """Every supported widget, in page order."""
        return [
            Widget(k, proto, frag, path, self.values.get(proto.id))
            for path, (k, proto, frag) in sorted(self.nodes.items())
            if k in WIDGET_KINDS
        ]

    def widget(self, label: str) -> Widget:
        """The first widget whose label is ``label`` (else the first that starts with it)."""
        ws = self.widgets()
        for match in (lambda w: w.label == label, lambda w: w.label.startswith(label)):
            found = [w for w in ws if match(w)]
            if found:
                return found[0]
        raise LookupError(f"no widget labelled {label!r} on the page; labels: {[w.label for w in ws]}")

    def texts(self) -> list[str]:
        """The text of every markdown, heading, text, alert and code element, in page order."""
        return [getattr(proto, TEXT_FIELDS[k]) for _, (k, proto, _) in sorted(self.nodes.items()) if k in TEXT_FIELDS]

    def kinds(self) -> list[str]:
        """The element kinds on the page, in page order."""
        return [k for _, (k, _, _) in sorted(self.nodes.items())]


@dataclass(frozen=True)
class RunResult:
    """What one script run cost and what came back."""

    seconds: float  # from sending the BackMsg to the script_finished ForwardMsg
    bytes: int  # protobuf bytes of the ForwardMsgs of this run (what the page decodes)
    wire_bytes: int  # bytes on the socket for them (compressed only if server.enableWebsocketCompression is on)
    messages: int  # ForwardMsgs received
    status: str  # "finished", "fragment finished", "compile error", "closed", "timeout"
    errors: tuple[str, ...]  # exception elements, compile errors, page not found, a closed socket, a timeout
    verified: bool | None  # the page that came back shows the value sent (None: nothing to verify)

    @property
    def ok(self) -> bool:
        """Finished without an error and (if there was a value to check) verified."""
        return not self.errors and self.verified is not False


class _CountingConnection(ClientConnection):
    """Counts the bytes that arrive on the socket (compressed frames and all)."""

    wire_bytes = 0

    def data_received(self, data: bytes) -> None:
        self.wire_bytes += len(data)
        super().data_received(data)


def widget_state(w: Widget, value: Any) -> WidgetState:
    """The WidgetState the front end sends for ``value`` of widget ``w`` (value types as in Streamlit 1.67)."""
    s = WidgetState(id=w.id)
    p = w.proto
    if w.kind == "slider" and p.type == Slider.SELECT_SLIDER:
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        s.string_array_value.data[:] = [str(v) for v in values]  # formatted options, not indices
    elif w.kind == "slider":
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        s.double_array_value.data[:] = [float(v) for v in values]
    elif w.kind in ("checkbox", "expander"):
        s.bool_value = bool(value)
    elif w.kind == "number_input":
        if p.data_type == NumberInput.INT:
            s.int_value = int(value)
        else:
            s.double_value = float(value)
    elif w.kind in ("selectbox", "radio", "text_input", "text_area"):
        s.string_value = str(value)
    elif w.kind == "button":
        s.trigger_value = bool(value)
    else:
        raise ValueError(
            f"widget kind {w.kind!r} is not supported; supported: slider, select_slider, checkbox, "
            "toggle, number_input, selectbox, radio, text_input, text_area, button, expander"
        )
    return s


class StreamlitClient:
    """One browser session without a browser: a websocket, the page it shows, and its URL.

    Args:
        base: the server's address, e.g. ``http://127.0.0.1:8501`` (a path prefix such as ``/app`` is kept).
        path: the page and query string as in a link, e.g. ``Compare?seq_len=16`` ("" is the home page).
        timeout: seconds to wait for one run before counting a timeout.
    """

    def __init__(self, base: str, path: str = "", timeout: float = 60.0):
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base={base!r} must be an http(s) address such as http://127.0.0.1:8501")
        if timeout <= 0:
            raise ValueError(f"timeout={timeout} must be positive")
        page, _, query = path.lstrip("/").partition("?")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        scheme = "wss" if parts.scheme == "https" else "ws"
        self.ws_url = f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"
        self.page_name, self.query_string, self.timeout = page, query, timeout
        self.page = Page()
        self.page_script_hash = ""
        self.app_pages: list[tuple[str, str]] = []  # (page name, url path) of every page, from the server
        self.ws: _CountingConnection | None = None
        self._cache: dict[str, tuple[ForwardMsg, int]] = {}  # forward-message cache: hash -> (message, last run seen)
        self._runs = 0
        self._max_age = 2

    async def __aenter__(self) -> StreamlitClient:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def open(self, timeout: float | None = None) -> RunResult:
        """Connect and run the page once, like opening the link in a new tab (``timeout`` overrides the client's)."""
        wait = timeout or self.timeout
        await self._connect(wait)
        return await self._run(ClientState(query_string=self.query_string, page_name=self.page_name), wait)

    async def _connect(self, wait: float, headers: dict[str, str] | None = None) -> None:
        """Open the websocket within ``wait`` seconds, sending ``headers`` with the handshake (a subclass that
        carries what a browser would, e.g. a cookie, overrides this and calls it with them)."""
        # no client pings (a browser sends none): a server too busy to answer a ping in time is slow, not gone
        self.ws = await connect(
            self.ws_url,
            subprotocols=["streamlit"],
            origin=self.origin,
            proxy=None,
            max_size=None,
            max_queue=None,
            open_timeout=wait,
            ping_interval=None,
            create_connection=_CountingConnection,
            additional_headers=headers,
        )

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    @property
    def query_params(self) -> dict[str, str]:
        """The page's URL parameters as the app last wrote them."""
        return dict(parse_qsl(self.query_string, keep_blank_values=True))

    async def change(
        self, label: str, value: Any, *, param: str | None = None, state: WidgetState | None = None
    ) -> RunResult:
        """Set the widget called ``label`` to ``value`` and wait for the rerun.

        The change is verified when the returned page draws a widget with that label showing ``value`` and (if
        ``param`` is given) the URL parameter ``param`` names it too. ``state`` replaces the WidgetState that is
        sent (to send values no real widget would), which skips the verification.
        """
        cs = self.client_state(label, value, state)
        result = await self._run(cs)
        if state is not None or result.status in ("closed", "timeout"):
            return result
        verified = self.shows(label, value, param)
        return RunResult(
            result.seconds, result.bytes, result.wire_bytes, result.messages, result.status, result.errors, verified
        )

    def client_state(self, label: str, value: Any, state: WidgetState | None = None) -> ClientState:
        """The ClientState the front end sends when the widget called ``label`` is set to ``value``: every widget's
        state with the new one (``state`` replaces the new one's WidgetState). The page shows the value at once."""
        w = self.page.widget(label)
        sent = state if state is not None else widget_state(w, value)
        cs = ClientState(
            query_string=self.query_string, page_script_hash=self.page_script_hash, fragment_id=w.fragment_id
        )
        for other in self.page.widgets():
            if other.id != w.id and other.kind != "button" and not other.disabled and other.value is not None:
                cs.widget_states.widgets.append(widget_state(other, other.value))
        cs.widget_states.widgets.append(sent)
        if state is None:
            self.page.values[w.id] = value  # the front end shows the new value at once
        return cs

    def shows(self, label: str, value: Any, param: str | None = None) -> bool:
        """Whether the page's widget ``label`` shows ``value`` (and the URL parameter ``param`` names it)."""
        try:
            shown = self.page.widget(label).value
        except LookupError:
            return False
        same = _same(shown, value)
        if param is not None:
            got = self.query_params.get(param)
            same = same and got is not None and _same(got, value)
        return same

    # ---- the live maps (ui/live): their own controls are drawn by the browser, not widgets of the page's

    def live_maps_id(self) -> str:
        """The widget id of the page's live maps (the component that reports a release)."""
        for kind, proto, _ in self.page.nodes.values():
            if kind == "bidi_component" and proto.component_name == LIVE_COMPONENTS + "maps":
                return proto.id
        raise LookupError("no live maps on the page")

    def live_settings(self) -> dict[str, dict]:
        """The live maps' settings by panel ("" on the Playground, "A" and "B" on Compare), as the newest of their
        feeds states them (the full run's, or a body rerun's)."""
        newest: dict = {}
        for kind, proto, _ in self.page.nodes.values():
            if kind != "bidi_component" or proto.component_name != LIVE_COMPONENTS + "sync":
                continue
            data = proto.bytes
            if data[:4] == b"AEL1":  # "AEL1", the header's length, the header (ui.live.pack)
                header = json.loads(data[8 : 8 + struct.unpack("<I", data[4:8])[0]])
                if header.get("rev", 0) >= newest.get("rev", 0):
                    newest = header
        if not newest:
            raise LookupError("no live maps' feed on the page")
        return newest["panels"]

    def release_state(self, panels: dict[str, dict]) -> ClientState:
        """The ClientState the browser sends when the learner lets go of a live control: every widget's state and the
        maps component's ``setting`` (``panels``: each panel's whole setting, as ``live_settings`` gives it)."""
        cs = ClientState(query_string=self.query_string, page_script_hash=self.page_script_hash)
        for w in self.page.widgets():
            if w.kind != "button" and not w.disabled and w.value is not None:
                cs.widget_states.widgets.append(widget_state(w, w.value))
        value = {"setting": {"panels": panels, "changed": "temperature"}}
        cs.widget_states.widgets.append(WidgetState(id=self.live_maps_id(), json_value=json.dumps(value)))
        return cs

    async def release(self, panel: str, temperature: float, param: str) -> RunResult:
        """Let go of panel ``panel``'s live temperature at ``temperature`` and wait for the rerun; verified when the
        URL parameter ``param`` names the new value (the maps draw it in the browser; the page states it). As the
        browser does, the release reports every panel's setting, the others as they are."""
        panels = self.live_settings()
        panels[panel] = dict(panels[panel], temperature=temperature)
        result = await self._run(self.release_state(panels))
        if result.status in ("closed", "timeout"):
            return result
        got = self.query_params.get(param)
        verified = got is not None and _same(got, temperature)
        return RunResult(
            result.seconds, result.bytes, result.wire_bytes, result.messages, result.status, result.errors, verified
        )

    def rerun_message(self, cs: ClientState) -> bytes:
        """The serialized ``BackMsg.rerun_script`` for ``cs``, naming the messages this client has cached."""
        cs.cached_message_hashes[:] = list(self._cache)
        return BackMsg(rerun_script=cs).SerializeToString()

    async def _run(self, cs: ClientState, timeout: float | None = None) -> RunResult:
        assert self.ws is not None, "open() first"
        ws, t0 = self.ws, time.perf_counter()
        wire0, nbytes, count, errors = ws.wire_bytes, 0, 0, []
        status = "timeout"
        try:
            await ws.send(self.rerun_message(cs))  # raises if the socket closed since the last run
            async with asyncio.timeout(timeout or self.timeout):
                while True:
                    raw = await ws.recv(decode=False)
                    nbytes, count = nbytes + len(raw), count + 1
                    msg = ForwardMsg()
                    msg.ParseFromString(raw)
                    done = self.handle(msg, errors)
                    if done:
                        status = done
                        break
        except TimeoutError:
            errors.append(f"no script_finished within {timeout or self.timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - a closed socket is a result, not a crash of the benchmark
            status = "closed"
            errors.append(f"socket closed: {type(exc).__name__}: {exc}"[:300])
        return RunResult(time.perf_counter() - t0, nbytes, ws.wire_bytes - wire0, count, status, tuple(errors), None)

    def handle(self, msg: ForwardMsg, errors: list[str]) -> str | None:
        """Apply one ForwardMsg to the page; return the status when it ends the run."""
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":  # the server says: you have this one in your cache
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                errors.append(f"unknown ref_hash {msg.ref_hash}")
                return None
            path = list(msg.metadata.delta_path)
            msg = ForwardMsg()
            msg.CopyFrom(cached[0])
            msg.metadata.delta_path[:] = path
            kind = "delta"
        if msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = (msg, self._runs)
        if kind == "new_session":
            ns = msg.new_session
            self.page_script_hash = ns.page_script_hash
            self._max_age = ns.config.max_cached_message_age or self._max_age
            self.page.start_run(tuple(msg.metadata.run.fragment_ids))
        elif kind == "delta":
            text = self.page.apply(msg.delta, tuple(msg.metadata.delta_path))
            if text is not None:
                errors.append(text)
        elif kind == "navigation":  # pages/ runs through st.navigation: this names the page that ran
            self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
            self.app_pages = [(p.page_name, p.url_pathname) for p in msg.navigation.app_pages]
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            errors.append(f"page not found: {msg.page_not_found.page_name!r}")
        elif kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
            errors.append(f"compile error: {msg.session_event.script_compilation_exception.message}"[:300])
        elif kind == "script_finished" and msg.script_finished in FINISHED:
            self.page.finish_run()
            self._runs += 1
            self._cache = {h: v for h, v in self._cache.items() if self._runs - v[1] <= self._max_age}
            return FINISHED[msg.script_finished]
        return None


def _same(shown: Any, sent: Any) -> bool:
    if isinstance(sent, (list, tuple)) or isinstance(shown, (list, tuple)):
        a = shown if isinstance(shown, (list, tuple)) else [shown]
        b = sent if isinstance(sent, (list, tuple)) else [sent]
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return abs(float(shown) - float(sent)) < 1e-9
    except (TypeError, ValueError):
        return str(shown) == str(sent)


# ---- the server process: start it, read its CPU time and memory


@dataclass(frozen=True)
class Server:
    """A running ``streamlit run``."""

    url: str  # http://127.0.0.1:<port>
    pid: int  # the server's process id (taskset execs into it)


@contextlib.contextmanager
def start_server(
    cores: str | None = None,
    flags: tuple[str, ...] = (),
    script: str = "streamlit_app.py",
    timeout: float = 90.0,
    log: Path | None = None,
    app_dir: Path = ROOT,
) -> Iterator[Server]:
    """Run ``streamlit run script`` on 127.0.0.1 and a free port, optionally pinned with ``taskset -c cores``.

    Args:
        cores: CPU list for taskset, e.g. "0,1"; None runs unpinned.
        flags: extra ``streamlit run`` flags, e.g. ("--runner.postScriptGC", "false").
        log: file for the server's output (default: discarded).
        app_dir: the folder to run it in (another checkout of the app, e.g. an older commit, for before/after).
    """
    if cores is not None and not shutil.which("taskset"):
        raise ValueError("cores needs the taskset command (util-linux), which is not installed")
    port = free_port()
    cmd = streamlit_command(script, port, *flags)
    if cores is not None:
        cmd = ["taskset", "-c", cores, *cmd]
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        cmd,
        cwd=app_dir,
        stdout=out,
        stderr=subprocess.STDOUT,
        env=dict(
            os.environ
        ),  # as deployed: the app caps NumPy's and torch's thread pools itself (ui/server/runtime.py)
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout, lambda: f"see {log or 'its output'}")
        yield Server(url, proc.pid)
    finally:
        stop(proc)
        if log:
            out.close()


def machine() -> str:
    """The CPU model, its clock and the core count, for the footers: server CPU per change moves by 2x or more
    between machines of the same kind, so a table is only comparable with one measured on the same CPU."""
    model, mhz = "unknown CPU", ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
            elif key.strip() == "cpu MHz" and not mhz:
                mhz = f" at {float(value):.0f} MHz"
    return f"{model}{mhz}, {os.cpu_count()} cores"


def ws_frame_bytes(response: dict) -> int:
    """The bytes of a websocket frame as DevTools' Network.webSocketFrameReceived reports it: a binary frame
    (opcode 2, every Streamlit message) comes as base64 text, 4/3 of its bytes; a text frame as its text."""
    data = response["payloadData"]
    if response.get("opcode") == 1:
        return len(data.encode())
    return len(data) * 3 // 4 - data[-2:].count("=")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` and its exited threads, in seconds.

    Reads the process CPU clock (nanosecond resolution, like clock_getcpuclockid); falls back to the
    utime + stime ticks of /proc/<pid>/stat (10 ms resolution).
    """
    try:
        return time.clock_gettime((~pid << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    except OSError:
        rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in task.read_text().split())
    return pids


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants (VmRSS), in bytes."""
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


class PeakRSS(threading.Thread):
    """Polls :func:`rss_bytes` every ``interval`` seconds and keeps the peak; use as a context manager."""

    def __init__(self, pid: int, interval: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak = pid, interval, rss_bytes(pid)
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, rss_bytes(self.pid))

    def __enter__(self) -> PeakRSS:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop_event.set()
        self.join()
        with contextlib.suppress(OSError):
            self.peak = max(self.peak, rss_bytes(self.pid))
