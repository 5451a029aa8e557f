"""Class pulse against running servers (and the deployment files that give the replicas their Redis): protocol clients (benchmarks/pulse_client.py) that tick the pages'
run_every fragments as a browser's timers do, on one server with the embedded store, and on two replicas behind
deploy/nginx.conf sharing Debian's redis-server on loopback (one tally; Redis stopped mid-class and started again).
A real Chromium shows the teacher's projector view counting answers as they arrive and a student's page revealing
the weights on the teacher's reveal, neither reloaded.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import threading

import pytest
import yaml

from benchmarks.pulse_client import PulseClient, follow_step
from harness.redis_server import redis_binary, redis_server
from harness.server import streamlit_server
from tests.test_browser import CHART_WARNINGS, assert_no_errors, opened
from tests.test_deploy import DEPLOY, needs_nginx
from ui.classroom.pulse_panel import STUDENT_IDLE

PAGE = "Playground?seq_len=6&d_model=16&heads=2&seed=3"
CHOICES = ("sharper", "softer", "the same")  # the Playground's question: head 1 with the scaling flipped
ANSWER = 0  # scaled now with d_k = 8: unscaled, the rows get sharper
RIGHT, WRONG = CHOICES[ANSWER], CHOICES[1]
needs_redis = pytest.mark.skipif(redis_binary() is None, reason="redis-server is not installed (scripts/test.sh)")


def test_compose_gives_every_replica_the_redis_service():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    app, redis = compose["services"]["app"], compose["services"]["redis"]
    url = app["environment"]["AEXP_REDIS_URL"]
    assert url == "${AEXP_REDIS_URL:-redis://redis:6379/0}", "one setting, defaulting to the compose service"
    assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "ports" not in redis and redis["expose"] == ["6379"], "only the replicas reach Redis"
    assert "--appendonly" in redis["command"] and "noeviction" in redis["command"]
    assert any(v.endswith(":/data") for v in redis["volumes"]) and "pulse" in compose["volumes"]
    assert re.search(r"^COPY classpulse/ classpulse/$", (DEPLOY / "Dockerfile").read_text(), re.M)


def test_systemd_replicas_use_the_redis_unit():
    app = (DEPLOY / "attention-explorer@.service").read_text()
    unit = (DEPLOY / "attention-explorer-redis.service").read_text()
    assert "Environment=AEXP_REDIS_URL=redis://127.0.0.1:6379/0" in app
    assert re.search(r"^(After|Wants)=.*attention-explorer-redis\.service", app, re.M)
    start = re.search(r"^ExecStart=(.+)$", unit, re.M).group(1)
    assert "--bind 127.0.0.1" in start and "--port 6379" in start and "--appendonly yes" in start
    if shutil.which("systemd-analyze"):
        r = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", str(DEPLOY / "attention-explorer-redis.service")],
            capture_output=True,
            text=True,
        )
        assert not [ln for ln in r.stderr.splitlines() if "Unknown" in ln or "Invalid" in ln], r.stderr


def ok(r):
    assert r.ok, r.errors
    return r


async def start(base: str, cookie: bool = False) -> PulseClient:
    teacher = PulseClient(base, PAGE, cookie=cookie)
    ok(await teacher.open())
    ok(await teacher.start_class())
    assert "class=" in teacher.query_string and "teacher=" not in teacher.query_string, "the token left the URL"
    assert list(teacher.auto_reruns.values()) == [0.5]
    ok(await teacher.tick())  # the tally lists the question the teacher's page asks
    assert teacher.answers() == 0 and set(teacher.counts()) == {f"#{i + 1} {c}" for i, c in enumerate(CHOICES)}
    return teacher


async def join(base: str, path: str, cookie: bool = False) -> PulseClient:
    student = PulseClient(base, path, cookie=cookie)
    ok(await student.open())
    assert "You are in class" in student.text()
    assert list(student.auto_reruns.values()) == [STUDENT_IDLE], "the reveal is pushed: the watcher is a safety net"
    return student


def revealed_text(student: PulseClient) -> str:
    return next((t for t in student.page.texts() if "Right: you predicted" in t or "Not this time" in t), "")


async def answer_and_reveal(teacher: PulseClient, students: list[PulseClient]) -> None:
    """Every student predicts (the first two wrong, then one changes their mind), the tally counts them, the
    teacher reveals, and the reveal is pushed to every student's page (ui/classroom/pulse_push.py): unasked, the page shows
    the student's verdict in the question's box, then runs whole and shows the weights."""
    for i, s in enumerate(students):
        ok(await s.predict(WRONG if i < 2 else RIGHT))
        assert "Sent: you chose" in s.text()
        ok(await s.tick())  # not revealed yet: the watcher's tick redraws nothing else
        assert "Attention weights" not in s.text()
    ok(await teacher.tick())
    n = len(students)
    assert teacher.answers() == n
    assert teacher.counts()[f"#{ANSWER + 1} {RIGHT}"] == n - 2
    ok(await students[0].predict(RIGHT))  # a change of mind replaces the answer
    ok(await teacher.tick())
    assert teacher.answers() == n and teacher.counts()[f"#{ANSWER + 1} {RIGHT}"] == n - 1
    runs = [s.full_runs for s in students]
    ok(await teacher.click("Reveal to the class"))
    assert f"Revealed: **{n - 1} of {n}**" in teacher.text()
    for i, s in enumerate(students):
        _, verdict = await s.listen(15, until=revealed_text)
        assert verdict is not None, f"student {i}: no verdict was pushed within 15 s"
        assert ("Right: you predicted" if i != 1 else "Not this time") in revealed_text(s)
        assert "Attention weights" not in s.text(), "the verdict comes first, in the question's box"
        _, whole = await s.listen(15, until=lambda c, k=runs[i]: c.full_runs > k)
        assert whole is not None, f"student {i}: the page's full run did not follow the verdict"
        assert list(s.auto_reruns.values()) == [STUDENT_IDLE], "nothing waits now: the watcher checks rarely"
        assert any(t.startswith("Attention weights") for t in s.page.texts()), s.page.texts()
        assert ("Right: you predicted" if i != 1 else "Not this time") in revealed_text(s)


@pytest.mark.slow
def test_a_class_on_one_server_with_the_embedded_store():
    async def lesson(base):
        teacher = await start(base)
        students = [await join(base, teacher.student_path()) for _ in range(3)]
        await answer_and_reveal(teacher, students)
        for c in [teacher, *students]:
            await c.close()

    with streamlit_server() as (base, _):
        asyncio.run(lesson(base))


@pytest.mark.slow
def test_a_class_of_thirty_follows_the_teachers_steps_and_a_student_who_explores_alone_stays():
    """The teacher's change of setting and of page reaches thirty students' pages unasked (ui/classroom/follow.py,
    pushed by ui/classroom/pulse_push.py); one who chose to explore alone is never moved and rejoins with one tap;
    the teacher's "explore freely" moves nobody until it is off again."""

    async def lesson(base):
        teacher = await start(base)
        students = [await join(base, teacher.student_path()) for _ in range(31)]
        loner, followers = students[0], students[1:]
        ok(await loner.click("Explore alone"))
        assert "You explore alone" in loner.text() and loner.has("Follow my teacher")
        for act in (
            lambda: teacher.change("seq_len", 9, param="seq_len"),
            lambda: teacher.switch_page("Compare"),
        ):
            result, times = await follow_step(teacher, followers, act, timeout=60)
            ok(result)
            assert all(drawn is not None for _, drawn in times), f"not at the teacher's page: {times}"
            for s in followers:
                assert s.place() == teacher.place() and "You are in class" in s.text()
                assert s.query_params["classroom"] == "lock" and "teacher" not in s.query_params
            await loner.listen(0.5)
            assert loner.place() != teacher.place() and loner.query_params["seq_len"] == "6", "alone: never moved"
        assert all("Compare" in s.text() and "now Compare" in s.text() for s in followers)
        ok(await loner.click("Follow my teacher"))
        assert loner.place() == teacher.place(), "one tap: at the teacher's page"

        ok(await teacher.change("Students explore freely", True))
        ok(await teacher.switch_page("Masks"))
        await asyncio.gather(*(s.listen(30, until=lambda c: "explore freely" in c.text()) for s in followers[:5]))
        assert all(s.place() != teacher.place() and "explore freely" in s.text() for s in followers[:5])
        result, times = await follow_step(
            teacher, followers[:5], lambda: teacher.change("Students explore freely", False), timeout=60
        )
        ok(result)
        assert all(drawn is not None for _, drawn in times), "following again: at the teacher's page"
        for c in [teacher, *students]:
            await c.close()

    with streamlit_server() as (base, _):
        asyncio.run(lesson(base))


@pytest.fixture(scope="module")
def redis_cluster():
    if redis_binary() is None:
        pytest.skip("redis-server is not installed (scripts/test.sh installs it)")
    from harness.local_cluster import local_cluster

    with redis_server() as redis, local_cluster(2, env={"AEXP_REDIS_URL": redis.url}) as cluster:
        yield redis, cluster


async def class_on_both_replicas(cluster, per_replica: int = 2) -> tuple[PulseClient, list[PulseClient]]:
    teacher = await start(cluster.url, cookie=True)
    path, students, landed = teacher.student_path(), [], {r.address: 0 for r in cluster.replicas}
    for _ in range(40):  # each new browser lands on either replica: 2**-40 odds of never reaching one
        s = await join(cluster.url, path, cookie=True)
        if landed[s.upstream] < per_replica:
            landed[s.upstream] += 1
            students.append(s)
        else:
            await s.close()
        if all(n == per_replica for n in landed.values()):
            return teacher, students
    raise AssertionError(f"students never spread over both replicas: {landed}")


@needs_nginx
@needs_redis
@pytest.mark.slow
def test_students_on_two_replicas_see_one_tally_and_follow_the_teacher(redis_cluster):
    _, cluster = redis_cluster

    async def lesson():
        teacher, students = await class_on_both_replicas(cluster)
        assert len({s.upstream for s in students}) == 2
        await answer_and_reveal(teacher, students)
        # the teacher's next page reaches the students of the other replica too (its listener asks Redis)
        result, times = await follow_step(teacher, students, lambda: teacher.switch_page("Masks"), timeout=60)
        ok(result)
        assert all(drawn is not None for _, drawn in times), times
        assert all(s.place() == teacher.place() for s in students)
        for c in [teacher, *students]:
            await c.close()

    asyncio.run(lesson())


@needs_nginx
@needs_redis
@pytest.mark.slow
def test_redis_stopped_mid_class_degrades_and_comes_back(redis_cluster):
    redis, cluster = redis_cluster

    async def lesson():
        teacher, students = await class_on_both_replicas(cluster, per_replica=1)
        ok(await students[0].predict(RIGHT))
        redis.stop()
        try:
            ok(await teacher.tick())
            assert "the class tally is unavailable" in teacher.text()
            for s in students:  # on both replicas the page keeps working, without the class
                ok(await s.tick())
                r = ok(await s.change("query token", "t2 (#2)"))  # any change reruns the page
                assert r.status == "finished" and "predict and reveal on your own" in s.text()
                ok(await s.change("Your prediction", WRONG))  # nothing is chosen for a student who had not sent
                ok(await s.click("Reveal the answer"))
                assert revealed_text(s), "the student revealed on their own"
            newcomer = PulseClient(cluster.url, teacher.student_path(), cookie=True)
            ok(await newcomer.open())  # a student who opens the class link now still gets the page
            assert "Predict first" in newcomer.text()
            await newcomer.close()
        finally:
            redis.start()  # same port, its append-only file: the class comes back
        await asyncio.sleep(2.5)  # the replicas' stores ask Redis again after retry_after (2 s)
        ok(await teacher.tick())
        assert teacher.answers() == 1, teacher.text()
        for c in [teacher, *students]:
            await c.close()

    asyncio.run(lesson())


def wait_text(page, pattern: str, timeout_ms: int = 30000) -> None:
    """Wait until the page's main area shows text matching ``pattern`` (a JavaScript regular expression)."""
    page.wait_for_function(
        "p => new RegExp(p).test(document.querySelector('[data-testid=\"stMain\"]').innerText)",
        arg=pattern,
        timeout=timeout_ms,
        polling=100,
    )


class Background:
    """An event loop in a thread of its own for the protocol clients (Playwright's sync API holds this thread's)."""

    def __enter__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        return self

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(120)

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_projector_view_counts_answers_and_the_reveal_reaches_a_students_page(browser_and_base):  # noqa: F811
    browser, base = browser_and_base

    async def teacher_link() -> tuple[str, str]:
        t = await start(base)
        link = await t.teacher_link()
        path = t.student_path()
        await t.close()
        return link.split("?", 1)[1], path

    with Background() as bg:
        query, student_path = bg.run(teacher_link())
        with (
            opened(browser, f"{base}/Playground?{query}&view=projector") as (projector, _),
            opened(browser, f"{base}/{student_path}") as (pupil, _),
        ):
            assert "You are in class" in pupil.inner_text('[data-testid="stMain"]')
            wait_text(projector, r"Class \w+ · 0 answers to 2 questions")  # the prediction and a check question

            async def answer(n: int) -> list[PulseClient]:
                out = []
                for i in range(n):
                    s = PulseClient(base, student_path)
                    ok(await s.open())
                    ok(await s.predict(RIGHT if i else WRONG))
                    out.append(s)
                return out

            clients = bg.run(answer(1))  # the projector, not reloaded, counts each answer as it arrives
            wait_text(projector, r"Class \w+ · 1 answer to 2 questions")
            clients += bg.run(answer(2))
            wait_text(projector, r"Class \w+ · 3 answers to 2 questions")
            projector.locator("figure.ae-hm").first.wait_for(timeout=30000)  # the maps drawn
            inside = projector.evaluate(
                """() => {
                    const maps = [];  // canvas heatmaps, in their components' shadow roots
                    const walk = (root) => root.querySelectorAll('*').forEach(e => {
                        if (e.matches('figure.ae-hm')) maps.push(e);
                        if (e.shadowRoot) walk(e.shadowRoot); });
                    walk(document);
                    const vega = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                        .map(c => c.querySelector('canvas') || c.querySelector('svg'));  // what Vega drew
                    return [...vega, ...maps].map(drawn => {
                        const host = drawn.getRootNode().host || drawn;
                        const box = host.closest('[data-testid="stVerticalBlock"]');  // the box it is drawn in
                        return drawn.getBoundingClientRect().right <= box.getBoundingClientRect().right + 1; }); }"""
            )
            assert inside and all(inside), "the charts and maps stay inside their boxes"
            assert "Attention weights, one map per head" not in pupil.inner_text('[data-testid="stMain"]')
            projector.get_by_role("button", name="Reveal to the class").click()
            wait_text(projector, r"Revealed: 1 of 3 \(33%\)")  # each batch's first student was wrong
            # the student's page was not reloaded: its watcher noticed the reveal and reran the page
            pupil.get_by_text("Attention weights, one map per head").wait_for(timeout=30000)
            assert_no_errors(projector)
            assert_no_errors(pupil)
            warnings = [t for kind, t in projector.console if kind == "warning" and any(w in t for w in CHART_WARNINGS)]
            assert not warnings, warnings
            for c in clients:
                bg.run(c.close())
