"""Podman for tests/test_containers.py: a Debian base image made from Debian's archive, the app's image built from
deploy/Dockerfile on it, and the helpers that run, inspect and crash containers.

Docker Hub is out of reach on the project's machines, so ``python:3.12-slim`` (the Dockerfile's default base) cannot
be pulled: the base is Debian 12 from its archive (``mmdebstrap``, then ``podman import``) with Debian's python3.11,
nginx and redis-server, one image for the app, nginx and Redis. It is built once per recipe: its tag is a hash of
what goes into it, and a machine that has it reuses it. The app's image is rebuilt on every run; podman's layer
cache keeps the pip install (keyed by requirements.txt and the base) and only copies the code again. PyTorch's
index is out of reach too: the build is handed the CPU wheel where this machine's pip configuration finds it, and
pip's CA bundle (the machine reaches PyPI through a proxy that inspects TLS).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from harness.server import ROOT, free_port

CONTAINERS_CONF = ROOT / "harness" / "containers.conf"
# podman runs in a scratch folder: conmon writes a file named "oom" into its working folder when the kernel kills a
# container at its memory limit (tests/test_containers.py does), which was the repository's top level
SCRATCH = tempfile.gettempdir()
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates", "wget", "nginx-light", "redis-server")
MMDEBSTRAP = ["mmdebstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
              "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
              "--dpkgopt=path-exclude=/usr/share/locale/*", SUITE]  # fmt: skip
APP_IMAGE = "localhost/attention-explorer:test"


def podman_binary() -> str | None:
    return shutil.which("podman")


def missing_tools() -> str:
    """Why the container tests cannot run here ("" when they can)."""
    absent = [t for t in ("podman", "mmdebstrap", "runc") if not (shutil.which(t) or Path(f"/usr/sbin/{t}").exists())]
    if absent:
        return f"{', '.join(absent)} not installed (scripts/test.sh installs podman, runc and mmdebstrap with apt-get)"
    if not cpu_torch_wheel():
        return "no CPU torch wheel in pip's find-links folders (`pip config list`): the image's torch comes from there"
    return ""


def podman(
    *args: str, timeout: float = 120, check: bool = True, cwd: str | Path = SCRATCH
) -> subprocess.CompletedProcess:
    """Run ``podman args`` with the tests' containers.conf; raise with podman's message if it fails and ``check``."""
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    r = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    if check and r.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def pip_setting(name: str) -> str:
    """A setting of this machine's pip configuration ("global.find-links"), "" when unset."""
    r = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.split(".", 1)[-1] == name.split(".", 1)[-1]:
            return value.strip().strip("'")
    return ""


def cpu_torch_wheel() -> Path | None:
    """The pinned torch's CPU wheel for this Python in a find-links folder of pip's configuration, if any."""
    folders = pip_setting("global.find-links").split() + os.environ.get("PIP_FIND_LINKS", "").split()
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    for folder in folders:
        wheels = sorted(Path(folder).glob(f"torch-2.13.0+cpu-{tag}-*.whl")) if Path(folder).is_dir() else []
        if wheels:
            return wheels[0]
    return None


def image_exists(tag: str) -> bool:
    return podman("image", "exists", tag, check=False).returncode == 0


def base_image() -> str:
    """Debian 12 with python3, nginx and redis-server as a podman image; built once per recipe."""
    key = hashlib.sha256(json.dumps([MMDEBSTRAP, MIRROR]).encode()).hexdigest()[:12]
    tag = f"localhost/aexp-debian-base:{key}"
    if image_exists(tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="aexp-base-") as d:
        tar = Path(d) / "base.tar"
        r = subprocess.run([*MMDEBSTRAP, str(tar), MIRROR], capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"mmdebstrap failed:\n{r.stderr[-3000:]}")
        podman("import", "--change", 'CMD ["/bin/bash"]', str(tar), tag, timeout=300)
    return tag


def build_app_image(base: str) -> str:
    """deploy/Dockerfile on ``base``, handed this machine's CPU torch wheel and pip's CA bundle; the image's tag."""
    wheel = cpu_torch_wheel()
    # docker's image format: the OCI format has no HEALTHCHECK, and podman drops it with a warning
    args = ["build", "--format", "docker", "-f", "deploy/Dockerfile", "--ignorefile", "deploy/Dockerfile.dockerignore", "-t", APP_IMAGE,
            "--build-arg", f"BASE={base}", "--build-arg", "WHEELS=/wheels", "-v", f"{wheel.parent}:/wheels:ro"]  # fmt: skip
    ca = pip_setting("global.cert") or os.environ.get("PIP_CERT", "")
    if ca and Path(ca).is_file():
        args += ["--build-arg", "PIP_CA=/pip-ca.pem", "-v", f"{ca}:/pip-ca.pem:ro"]
    podman(*args, ".", timeout=1800, cwd=ROOT)  # the build context is the repository, as in compose.yaml
    return APP_IMAGE


def answers(url: str, timeout: float = 3) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def wait_until(what: str, ok, timeout: float, every: float = 0.5) -> float:
    """Poll ``ok()`` until it is true; return the seconds it took; raise naming ``what`` after ``timeout``."""
    t0 = time.monotonic()
    while not ok():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(every)
    return time.monotonic() - t0


def inspect(name: str) -> dict:
    return json.loads(podman("inspect", name).stdout)[0]


def crash(name: str) -> int:
    """Kill container ``name``'s main process with SIGKILL from the host, as the kernel's OOM killer does (podman's
    own stop or kill would count as stopped by the user, which a restart policy leaves stopped); its old pid."""
    pid = inspect(name)["State"]["Pid"]
    os.kill(pid, 9)
    return pid


def healthy(name: str) -> bool:
    """The image's HEALTHCHECK (or compose's healthcheck), run as the engine would run it."""
    return podman("healthcheck", "run", name, check=False, timeout=30).returncode == 0


def connections(name: str, port: int = 8501) -> int:
    """Established TCP connections to ``port`` inside container ``name`` (its /proc/net/tcp): whom it serves."""
    table = podman("exec", name, "cat", "/proc/net/tcp", "/proc/net/tcp6").stdout.splitlines()
    rows = [line.split() for line in table if ":" in line.split()[0] if line.split()]
    return sum(1 for r in rows if r[1].rsplit(":", 1)[1] == f"{port:04X}" and r[3] == "01")


def cgroup_file(name: str, controller: str, file: str) -> Path:
    """A file of container ``name``'s cgroup (v1: per controller; v2: one folder)."""
    cgroup = inspect(name)["State"].get("CgroupPath", "")
    v1 = Path(f"/sys/fs/cgroup/{controller}{cgroup}/{file}")
    return v1 if v1.parent.is_dir() else Path(f"/sys/fs/cgroup{cgroup}/{file}")


def cpu_seconds(name: str) -> float:
    """CPU seconds container ``name`` has used since it started (cgroup v1 cpuacct, or v2 cpu.stat)."""
    path = cgroup_file(name, "cpuacct", "cpuacct.usage")
    if path.exists():
        return int(path.read_text()) / 1e9
    stat = dict(line.split() for line in cgroup_file(name, "cpu", "cpu.stat").read_text().splitlines())
    return int(stat["usage_usec"]) / 1e6


def memory_peak(name: str) -> int:
    """Bytes: the most memory container ``name``'s cgroup has held since it started (cgroup v1 or v2)."""
    for path in (cgroup_file(name, "memory", "memory.max_usage_in_bytes"), cgroup_file(name, "memory", "memory.peak")):
        with contextlib.suppress(OSError, ValueError):
            return int(path.read_text())
    raise FileNotFoundError(f"no memory peak for {name} in its cgroup")


class Compose:
    """deploy/compose.yaml run by podman-compose as ``project``: the app's replicas on ``app_image``, nginx and Redis
    on ``base`` (Debian's nginx and redis-server), nginx on a free loopback port."""

    def __init__(self, project: str, app_image: str, base: str, replicas: int = 2):
        port = free_port()
        self.project, self.url = project, f"http://127.0.0.1:{port}"
        self.env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF), "APP_IMAGE": app_image,
                    "NGINX_IMAGE": base, "REDIS_IMAGE": base, "REPLICAS": str(replicas),
                    "PORT": f"127.0.0.1:{port}", "TLS_PORT": f"127.0.0.1:{free_port()}"}  # fmt: skip
        self.apps = [f"{project}_app_{i}" for i in range(1, replicas + 1)]
        self.redis, self.nginx = f"{project}_redis_1", f"{project}_nginx_1"

    def __call__(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        compose = ROOT / "deploy" / "compose.yaml"
        cmd = [sys.executable, "-m", "podman_compose", "-f", str(compose), "-p", self.project, *args]
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"podman-compose {' '.join(args)} failed:\n{r.stderr[-3000:]}")
        return r

    def wait_ready(self, timeout: float = 180) -> None:
        """compose's service_healthy, which podman-compose cannot ask podman 4.3 for: every health check passes.
        Then nginx is reloaded once the network's DNS names every replica, as deploy/README.md says to after `up`
        (nginx resolves "app" when it starts, and podman-compose may start it before the replicas answer)."""
        for name in [*self.apps, self.redis]:
            wait_until(f"{name} healthy", lambda n=name: healthy(n), timeout)
        wait_until(
            f"podman's DNS naming {len(self.apps)} replicas", lambda: len(self.resolved("app")) == len(self.apps), 30
        )
        podman("exec", self.nginx, "nginx", "-s", "reload")
        wait_until("nginx's page", lambda: answers(self.url + "/_stcore/health"), timeout)

    def resolved(self, host: str) -> set[str]:
        """The addresses ``host`` resolves to inside the nginx container."""
        r = podman("exec", self.nginx, "getent", "ahostsv4", host, check=False)
        return {line.split()[0] for line in r.stdout.splitlines() if line.strip()}


@contextlib.contextmanager
def compose_up(project: str, app_image: str, base: str, replicas: int = 2):
    """Bring deploy/compose.yaml up, yield the Compose once every service is healthy, take it down (volumes too)."""
    c = Compose(project, app_image, base, replicas)
    try:
        c("up", "-d")
        c.wait_ready()
        yield c
    finally:
        c("down", "-v", timeout=120)
