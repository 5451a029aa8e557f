"""The container layout as a school runs it: deploy/Dockerfile built with podman, deploy/compose.yaml brought up with
podman-compose (two app replicas, Redis with its append-only file, nginx), a class of thirty protocol-level students
through nginx with a replica crashed and Redis restarted mid-class, a replica killed at its memory limit and
replaced, and the Kubernetes Deployment run with ``podman kube play``.

The base image is Debian 12 from Debian's archive (harness/containers.py says why and how); compose's three images
are set by its APP_IMAGE, NGINX_IMAGE and REDIS_IMAGE settings, as a school with its own registry would. Podman on
these machines schedules no health checks by itself (they need systemd), so the tests run the image's HEALTHCHECK with
``podman healthcheck run`` and wait for it, where compose waits for ``service_healthy``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import threading
import time

import pytest
import yaml

from benchmarks.classroom import pick, q
from benchmarks.pulse_client import PulseClient
from harness import containers as cu
from harness.server import ROOT, free_port
from tests.test_pulse_live import RIGHT, WRONG, join, ok, start

MISSING = cu.missing_tools()
COST_SECONDS = 200  # the image built, compose up and down, thirty students: tests/conftest.py runs it first
pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=MISSING or "-")]
DEPLOY = ROOT / "deploy"
STUDENTS = 30
PROJECT = f"aexp-test-{os.getpid()}"


@pytest.fixture(scope="module")
def app_image():
    return cu.build_app_image(cu.base_image())


# ---- the image alone


@contextlib.contextmanager
def container(image: str, *args: str, name: str):
    cu.podman("rm", "-f", name, check=False)
    cu.podman("run", "-d", "--name", name, *args, image)
    try:
        yield name
    finally:
        cu.podman("rm", "-f", "-t", "2", name, check=False)


async def page_text(base: str, path: str) -> str:
    c = PulseClient(base, path, timeout=180)
    try:
        r = ok(await c.open())
        assert r.status == "finished"
        return c.text()
    finally:
        await c.close()


async def start_a_class(base: str) -> str:
    """A teacher's click on "Start a class"; what the page says after it."""
    teacher = PulseClient(base, "Playground")
    try:
        ok(await teacher.open())
        ok(await teacher.start_class())
        return teacher.text()
    finally:
        await teacher.close()


def test_the_image_runs_as_a_non_root_user_on_a_read_only_root_and_reports_its_health(app_image):
    port = free_port()
    with container(app_image, "--read-only", "-p", f"127.0.0.1:{port}:8501", name=f"{PROJECT}-image"):
        cu.wait_until("the image's HEALTHCHECK", lambda: cu.healthy(f"{PROJECT}-image"), timeout=120)
        assert cu.podman("exec", f"{PROJECT}-image", "id", "-u").stdout.strip() == "10001"
        wrote = cu.podman("exec", f"{PROJECT}-image", "touch", "/app/x", check=False)
        assert wrote.returncode != 0 and "Read-only file system" in wrote.stderr
        base = f"http://127.0.0.1:{port}"
        # the pages that read files of their own: the shipped training runs, the embedded model (checked, loaded,
        # and its weights recomputed by attention_core)
        assert "Parity at step" in asyncio.run(page_text(base, "Train"))
        assert "Parity with attention_core" in asyncio.run(page_text(base, "Real_model"))
        assert "compared with every key" in asyncio.run(page_text(base, "Playground"))


class PeakMemory(threading.Thread):
    """The highest memory a container's cgroup reported, sampled every 20 ms until the container is gone."""

    def __init__(self, name: str):
        super().__init__(daemon=True)
        self.path, self.peak, self.done = cu.cgroup_file(name, "memory", "memory.max_usage_in_bytes"), 0, False

    def run(self) -> None:
        while not self.done:
            with contextlib.suppress(OSError, ValueError):
                self.peak = max(self.peak, int(self.path.read_text()))
            time.sleep(0.02)


def test_a_replica_over_its_memory_limit_is_killed_and_replaced(app_image):
    """250 MiB, below what the Real model page needs with its embedded model: the kernel kills the replica at its
    limit (exit 137), the restart policy brings it back, and it serves again."""
    port, name, limit = free_port(), f"{PROJECT}-memory", 250 * 2**20
    args = ["--read-only", "--memory", str(limit), "--memory-swap", str(limit), "--restart", "unless-stopped"]
    with container(app_image, *args, "-p", f"127.0.0.1:{port}:8501", name=name):
        cu.wait_until("the replica's health", lambda: cu.answers(f"http://127.0.0.1:{port}/_stcore/health"), 120)
        sampler = PeakMemory(name)
        sampler.start()
        page = PulseClient(f"http://127.0.0.1:{port}", "Real_model", timeout=120)
        r = asyncio.run(page.open())
        sampler.done = True
        assert r.status == "closed", "the page's server went away mid-run"
        cu.wait_until("the replica replaced", lambda: cu.inspect(name)["RestartCount"] >= 1, 60)
        cu.wait_until("the replacement's health", lambda: cu.answers(f"http://127.0.0.1:{port}/_stcore/health"), 120)
        assert "compared with every key" in asyncio.run(page_text(f"http://127.0.0.1:{port}", "Playground"))
        print(
            f"\nover its limit: peak {sampler.peak / 2**20:.0f} MiB of a {limit / 2**20:.0f} MiB limit, killed, replaced"
        )
        assert sampler.peak >= 0.9 * limit, "it was killed at its limit"


# ---- compose: two replicas, Redis and nginx, and a class with faults


@pytest.fixture(scope="module")
def compose(app_image):
    with cu.compose_up(PROJECT, app_image, cu.base_image()) as c:
        yield c


def settings(s: PulseClient) -> dict[str, str]:
    return {k: v for k, v in s.query_params.items() if k != "class"}


async def move(s: PulseClient, rng: random.Random, log: list) -> None:
    """One change of the temperature, verified in the widget and the URL."""
    r = await s.change("temperature", pick(s.page.widget("temperature"), rng), param="temperature")
    log.append(r)
    assert r.ok and r.verified, (r.status, r.errors)


async def class_with_faults(c: cu.Compose) -> dict:
    rng, log, seen = random.Random(7), [], {}
    teacher = await start(c.url, cookie=True)
    path = teacher.student_path()

    async def arrive(i: int) -> PulseClient:
        await asyncio.sleep(rng.uniform(0, 5))  # the class opens the link over a few seconds
        return await join(c.url, path, cookie=True)

    students = await asyncio.gather(*(arrive(i) for i in range(STUDENTS)))

    async def lesson(i: int, s: PulseClient) -> None:  # a prediction, then a few changes of the setting
        r = ok(await s.predict(WRONG if i % 3 == 0 else RIGHT))
        log.append(r)
        assert "Sent: you chose" in s.text(), s.text()
        for _ in range(3):
            await asyncio.sleep(rng.uniform(1, 3))
            await move(s, rng, log)

    await asyncio.gather(*(lesson(i, s) for i, s in enumerate(students)))
    ok(await teacher.tick())
    right = sum(1 for i in range(STUDENTS) if i % 3)
    assert teacher.answers() == STUDENTS and teacher.counts()[f"#1 {RIGHT}"] == right, teacher.text()
    seen["peak"] = {name: cu.memory_peak(name) for name in c.apps}
    seen["held"] = {name: cu.connections(name) for name in c.apps}  # websockets (and nginx's keep-alives)
    seen["limit"] = cu.inspect(c.apps[0])["HostConfig"]["Memory"]

    # a replica crashes: its students' websockets close; they reconnect (same cookie) to the other replica
    old_pid, t0 = cu.crash(c.apps[0]), time.monotonic()
    moved = []
    for s in [teacher, *students]:
        before = settings(s)
        r = await s.tick() if s is teacher else await s.change("temperature", s.page.widget("temperature").value)
        if r.status == "closed":
            ok(await s.reconnect())
            assert settings(s) == before, "the page came back with the settings of its link"
            moved.append(s)
        if s is not teacher:
            await move(s, rng, log)
    seen["moved"] = len([s for s in moved if s is not teacher])
    # by their cookies, over both replicas (the connections each held before the crash, nginx's kept-alive included)
    assert 0 < seen["moved"] < STUDENTS, f"{seen['moved']} of {STUDENTS} moved; connections held: {seen['held']}"
    ok(await teacher.tick())
    assert teacher.answers() == STUDENTS, "the answers of the crashed replica's students are kept (Redis)"
    cu.wait_until("the crashed replica replaced", lambda: cu.inspect(c.apps[0])["State"]["Pid"] not in (0, old_pid), 60)
    cu.wait_until("the replaced replica healthy", lambda: cu.healthy(c.apps[0]), 120)
    seen["replaced"] = time.monotonic() - t0

    # Redis restarts: every answer acknowledged before it stopped is there after; meanwhile the tally is unavailable.
    # Two students who were wrong send again first, on their replica still (a moved student's session is new, and so
    # is its anonymous voter id); their setting has moved since, so the answer may count for that setting's question.
    for s in [s for i, s in enumerate(students) if i % 3 == 0 and s not in moved][:2]:
        ok(await s.predict(RIGHT))
        assert "Sent: you chose" in s.text()
    ok(await teacher.tick())
    acknowledged, bars = teacher.answers(), teacher.counts()
    assert acknowledged >= STUDENTS
    cu.podman("stop", "-t", "5", c.redis)
    ok(await teacher.tick())
    assert "the class tally is unavailable" in teacher.text()
    for s in students[:3]:
        await move(s, rng, log)  # the students' pages keep working
    cu.podman("start", c.redis)
    cu.wait_until("Redis healthy again", lambda: cu.healthy(c.redis), 60)
    await asyncio.sleep(2.5)  # a replica asks Redis again 2 s after it failed
    ok(await teacher.tick())
    assert (teacher.answers(), teacher.counts()) == (acknowledged, bars), teacher.text()

    # a moved student reloads once the crashed replica is back: the page comes back with its settings
    for s in moved[-3:]:
        if s is not teacher:
            before = settings(s)
            ok(await s.reconnect())
            assert settings(s) == before
            await move(s, rng, log)
    for s in [teacher, *students]:
        await s.close()
    seen["changes"] = log
    return seen


def test_compose_class_of_thirty_through_nginx_survives_a_crashed_replica_and_a_restarted_redis(compose):
    t0 = time.monotonic()
    seen = asyncio.run(class_with_faults(compose))
    lat = [r.seconds for r in seen["changes"]]
    assert not [r for r in seen["changes"] if r.errors], "0 errors"
    peak = max(seen["peak"].values())
    assert peak < seen["limit"]
    print(
        f"\ncompose class: {STUDENTS} students, {len(lat)} runs (predictions and changes), 0 errors, "
        f"p50 {statistics.median(lat):.2f} s, p95 {q(lat, 0.95):.2f} s, max {max(lat):.2f} s; "
        f"connections held {' / '.join(str(n) for n in seen['held'].values())}; "
        f"{seen['moved']} students moved off the crashed replica, replaced and healthy after {seen['replaced']:.0f} s; "
        f"memory peak {' / '.join(f'{p / 2**20:.0f}' for p in seen['peak'].values())} MiB of a "
        f"{seen['limit'] / 2**20:.0f} MiB limit; {time.monotonic() - t0:.0f} s"
    )


# ---- Kubernetes: the app's Deployment, as podman runs it


def test_the_kubernetes_deployment_runs_with_podman_kube_play_and_works_without_its_redis(app_image, tmp_path):
    docs = list(yaml.safe_load_all((DEPLOY / "kubernetes" / "app.yaml").read_text()))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    (app,) = deployment["spec"]["template"]["spec"]["containers"]
    app["image"] = app_image
    deployment["spec"]["replicas"] = 1  # podman runs one Pod of it
    port = free_port()  # podman publishes a containerPort on the host: here on a free loopback port only
    app["ports"][0] |= {"hostPort": port, "hostIP": "127.0.0.1"}
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(yaml.safe_dump(deployment))
    name = f"{deployment['metadata']['name']}-pod-0-{app['name']}"
    base = f"http://127.0.0.1:{port}"
    cu.podman("kube", "play", str(manifest))
    try:
        health = app["readinessProbe"]["httpGet"]
        cu.wait_until("the Pod's /_stcore/health", lambda: cu.answers(f"{base}{health['path']}"), timeout=120)
        running = cu.inspect(name)
        assert running["HostConfig"]["Memory"] == 1536 * 2**20 and running["HostConfig"]["ReadonlyRootfs"]
        assert running["Config"]["User"].split(":")[0] == "10001"
        # Redis unreachable from the start (redis.yaml is not played): students work alone, the teacher is told
        student = asyncio.run(page_text(base, "Playground?classroom=lock&class=ABCDE"))
        assert "the class tally is unavailable right now, so you predict and reveal on your own" in student
        assert "Could not start a class: the class tally is unavailable" in asyncio.run(start_a_class(base))
    finally:
        cu.podman("kube", "down", str(manifest), check=False)
