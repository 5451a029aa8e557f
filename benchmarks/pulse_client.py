"""benchmarks/protocol.py's client for the class pulse: it follows ``run_every`` fragments as the front end does
and performs a class's actions (start a class, send a prediction, reveal), for tests/test_pulse_live.py and
benchmarks/pulse.py.

The front end runs a fragment with ``run_every`` by a timer: every interval it sends ``rerun_script`` with the
fragment's id, ``is_auto_rerun`` and every widget's state. :meth:`PulseClient.tick` sends the same (the caller
decides when); the fragments and their intervals come from the ``auto_rerun`` messages of the last full run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import urllib.request
from urllib.parse import parse_qsl, urlencode

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.protocol import Page, RunResult, StreamlitClient, widget_state
from ui.classroom import follow

HEADER = re.compile(r"Class (\w+)\*\* · (\d+) answers? to (\d+) questions?")
# what a class compares of two pages: ui/classroom/follow.py's place, less classroom mode (a students' link locks it)
NOT_A_PLACE = follow.NOT_A_PLACE | {"classroom", "lead"}
SHARE_BOX = "Share this experiment"  # the sidebar's share box: the class's links are in it, drawn while it is open
TALLY_LINE = re.compile(r"^(?:✓ )?\*\*(#\d+ .+?)\*\* · (\d+) answers?")  # ui.classroom.pulse_panel.tally_lines


def first_cookie(origin: str) -> str:
    """GET the page without cookies, as a new browser; return the cookie nginx set ("aexp_route=...")."""
    with urllib.request.urlopen(origin + "/", timeout=60) as r:
        return r.headers["Set-Cookie"].split(";", 1)[0]


class PulseClient(StreamlitClient):
    """One browser tab of a class: a teacher or a student.

    Args:
        base, path, timeout: see :class:`benchmarks.protocol.StreamlitClient`.
        cookie: first GET the page and carry nginx's sticky cookie, as a browser does behind deploy/nginx.conf.
    """

    def __init__(self, base: str, path: str = "", timeout: float = 60.0, cookie: bool = False):
        super().__init__(base, path, timeout)
        self.cookie = cookie
        self.jar = ""  # nginx's cookie once it is set: a browser keeps it for every later request and reconnect
        self.upstream = ""  # nginx's X-Upstream: the replica holding this session
        self.kept: dict[str, str] = {}  # cookies the page asked the browser to keep (student id, teacher token)
        self.auto_reruns: dict[str, float] = {}  # fragment id -> run_every seconds, from the last full run
        self.full_runs = 0  # runs of the whole page that finished
        self._full = False
        self.on_run_end = None  # called as each run ends (a run this client asked for, or one the server pushed)

    async def _connect(self, wait: float, headers: dict[str, str] | None = None) -> None:
        extra = dict(headers or {})
        if self.cookie:
            self.jar = self.jar or await asyncio.to_thread(first_cookie, self.origin)
        kept = "; ".join(f"{k}={v}" for k, v in sorted(self.kept.items()))
        jar = "; ".join(c for c in (self.jar, kept) if c)
        if jar:
            extra["Cookie"] = jar
        await super()._connect(wait, extra or None)
        self.upstream = self.ws.response.headers.get("X-Upstream", "")

    def handle(self, msg, errors):
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._full = not msg.metadata.run.fragment_ids
            if self._full:
                self.auto_reruns = {}  # a full run: the front end drops its timers and takes the run's new ones
        elif kind == "auto_rerun":
            self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            if el.WhichOneof("type") == "bidi_component" and el.bidi_component.json:
                with contextlib.suppress(ValueError, TypeError, AttributeError):  # the class pulse's keepsakes
                    data = json.loads(el.bidi_component.json)  # (ui/classroom/pulse_device.js writes them as cookies)
                    data = json.loads(data) if isinstance(data, str) else data
                    for name, value, _ in data.get("cookies", []):
                        self.kept[name] = value
        done = super().handle(msg, errors)
        self.full_runs += bool(done and self._full)
        if kind == "script_finished" and self.on_run_end is not None:  # also a run ended early for the next one
            self.on_run_end(self)
        return done

    async def reconnect(self, timeout: float | None = None) -> RunResult:
        """What the front end does when its websocket closed (its server stopped): connect again, with the same
        cookie, and run the page of the URL it shows, in a new session if the server does not know the old one."""
        await self.close()
        self.page, self.page_script_hash, self._cache = Page(), "", {}
        return await self.open(timeout)

    async def tick(self, interval: float | None = None) -> RunResult:
        """Run the page's ``run_every`` fragment (the one with ``interval`` when there are several)."""
        ids = [f for f, every in self.auto_reruns.items() if interval is None or every == interval]
        if len(ids) != 1:
            raise LookupError(f"no single run_every fragment of interval {interval}: {self.auto_reruns}")
        cs = ClientState(
            query_string=self.query_string,
            page_script_hash=self.page_script_hash,
            fragment_id=ids[0],
            is_auto_rerun=True,
        )
        for w in self.page.widgets():
            if w.kind != "button" and not w.disabled and w.value is not None:
                cs.widget_states.widgets.append(widget_state(w, w.value))
        return await self._run(cs)

    async def listen(self, seconds: float, until=None) -> tuple[int, float | None]:
        """Read what the server sends unasked for up to ``seconds`` (a reveal pushed to this page: ui/classroom/pulse_push.py),
        applying it to the page as the front end does. Returns the runs that finished meanwhile and, when
        ``until(self)`` became true after a message, the time.monotonic() of that message (then it returns)."""
        assert self.ws is not None, "open() first"
        runs, errors, end = 0, [], time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                async with asyncio.timeout(left):
                    raw = await self.ws.recv(decode=False)
            except TimeoutError:
                break
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            runs += self.handle(msg, errors) is not None
            if until is not None and until(self):
                return runs, time.monotonic()
        return runs, None

    async def click(self, label: str) -> RunResult:
        """Click the button called ``label``."""
        return await self.change(label, True, state=widget_state(self.page.widget(label), True))

    async def start_class(self) -> RunResult:
        """Open the share box and press "Start a class" in it, as a teacher does: the open box then shows the class's
        links (closed, it draws nothing)."""
        r = await self.change(SHARE_BOX, True)
        if not r.ok:
            return r
        return await self.click("Start a class")

    async def predict(self, choice: str) -> RunResult:
        """Pick ``choice`` (a key's label) as the prediction and send it to the class."""
        r = await self.change("Your prediction", choice)
        if not r.ok:
            return r
        return await self.click("Send my prediction" if self.has("Send my prediction") else "Change my prediction")

    def has(self, label: str) -> bool:
        return any(w.label == label for w in self.page.widgets())

    def text(self) -> str:
        return "\n".join(self.page.texts())

    def student_path(self) -> str:
        """The students' link of the teacher's class (from the open share box), as a page path with its query."""
        links = [t for t in self.page.texts() if "class=" in t and "teacher=" not in t and "classroom=lock" in t]
        if not links:
            raise LookupError("no student link on the page: start a class first")
        query = dict(parse_qsl(links[0].split("?", 1)[1]))
        return f"{self.page_name}?{urlencode(query)}"

    def answers(self) -> int | None:
        """The teacher's count of answers (its view's header), or None when the view shows none."""
        found = HEADER.search(self.text())
        return int(found.group(2)) if found else None

    def counts(self) -> dict[str, int]:
        """The teacher's bars: choice ("#3 t3") -> answers (each bar's line says its count)."""
        return {m.group(1): int(m.group(2)) for m in map(TALLY_LINE.match, self.page.texts()) if m}

    async def switch_page(self, page_name: str) -> RunResult:
        """Open another page of the app in this session, as a click in the sidebar's page list does (its settings
        and the class come along in the query)."""
        return await self._run(ClientState(query_string=self.query_string, page_name=page_name))

    def place(self) -> tuple[str, dict[str, str]]:
        """What the page shows, as the class compares it: its page and its query without the parameters that say
        who looks (the teacher's token, the projector view, classroom mode, which a students' link locks)."""
        return self.page_script_hash, {k: v for k, v in self.query_params.items() if k not in NOT_A_PLACE}

    async def teacher_link(self) -> str:
        """The teacher's link of the class (the share box shows it behind a switch)."""
        if not self.has("Show my teacher link"):
            raise LookupError("no teacher link on the page: start a class first")
        r = await self.change("Show my teacher link", True)
        if not r.ok:
            raise AssertionError(r.errors)
        return next(t for t in self.page.texts() if "teacher=" in t)


async def follow_step(teacher: PulseClient, students: list[PulseClient], act, timeout: float = 30.0):
    """The teacher does ``act()`` (a coroutine function: a change, a page switch) while every student's page takes
    what the server sends it unasked. Returns (the act's result, per student: seconds from the act's start until
    its page was at the teacher's page and setting, and until a full run there had finished; None when not within
    ``timeout``). A student's place is compared with the teacher's after the act (:meth:`PulseClient.place`); each
    page's places are noted as its messages arrive, so a page faster than the teacher's own run is timed right."""
    t0 = time.monotonic()
    runs = [s.full_runs for s in students]
    first_at: list[dict] = [{} for _ in students]  # per student: place -> when its page first showed it
    drawn_at: list[dict] = [{} for _ in students]  # place -> when a full run there ended
    target: list = []

    keys: dict[tuple[str, str], tuple] = {}  # (page, query string) -> the place it is (parsed once per string)

    def note(i: int, c: PulseClient) -> bool:  # after every message: kept cheap (the class's clients share a core)
        raw = (c.page_script_hash, c.query_string)
        if raw not in keys:
            hash_, query = c.place()
            keys[raw] = (hash_, tuple(sorted(query.items())))
        key = keys[raw]
        now = time.monotonic() - t0
        first_at[i].setdefault(key, now)
        if c.full_runs > runs[i]:
            drawn_at[i].setdefault(key, now)
        return bool(target) and target[0] in drawn_at[i]

    async def student(i: int, c: PulseClient) -> None:
        while time.monotonic() - t0 < timeout:
            await c.listen(0.05, until=lambda page, i=i: note(i, page))
            if note(i, c):
                return

    tasks = [asyncio.create_task(student(i, c)) for i, c in enumerate(students)]
    result = await act()
    hash_, query = teacher.place()
    target.append((hash_, tuple(sorted(query.items()))))
    await asyncio.gather(*tasks)
    return result, [(first_at[i].get(target[0]), drawn_at[i].get(target[0])) for i in range(len(students))]
