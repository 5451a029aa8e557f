"""N app replicas behind deploy/nginx.conf on 127.0.0.1, without containers: for the tests and for measuring.

Each replica is ``streamlit run streamlit_app.py`` on a free loopback port (tests/server_util.py starts it),
and nginx runs this folder's nginx.conf with only the lines a loopback run needs changed: the listen
address, and nginx's temporary files and pid in a private folder (so it runs as any user). The upstream
servers are written to upstream.conf beside the rendered configuration, as compose and systemd do.

    python deploy/local_cluster.py --replicas 2 [--port 8080]   # prints the URL, stops on Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.server_util import free_port, streamlit_server  # noqa: E402

NGINX_CONF = ROOT / "deploy" / "nginx.conf"
LISTEN_LINE = "        listen 80;\n"
HTTP_LINE = "http {\n"
# the server parameters of the shipped upstream files (weight, max_fails, fail_timeout), so that the loopback
# run tests them too
SERVER_PARAMS = re.search(
    r"^server 127\.0\.0\.1:\d+ (.+);$", (ROOT / "deploy" / "upstream.systemd.conf").read_text(), re.M
).group(1)


@dataclass(frozen=True)
class Replica:
    """One running app process."""

    address: str  # "127.0.0.1:<port>", as nginx reports it in the X-Upstream header
    base: str  # "http://127.0.0.1:<port>", to talk to the replica directly
    proc: subprocess.Popen  # the `streamlit run` process (kill it to simulate a crash)


@dataclass(frozen=True)
class Cluster:
    """Replicas behind one nginx."""

    url: str  # "http://127.0.0.1:<port>": nginx, what the students open
    replicas: tuple[Replica, ...]  # in the order of upstream.conf
    conf_dir: Path  # the rendered nginx.conf, upstream.conf and nginx's logs and temp files


def nginx_binary() -> str:
    """The nginx executable (Debian installs it in /usr/sbin, often not on a user's PATH)."""
    candidates = (shutil.which("nginx"), "/usr/sbin/nginx", "/usr/local/sbin/nginx")
    path = next((p for p in candidates if p and Path(p).exists()), None)
    if not path:
        raise FileNotFoundError("nginx is not installed: `apt-get install -y nginx` (scripts/test.sh does it)")
    return path


def render_nginx_conf(conf_dir: Path, port: int, servers: list[str]) -> Path:
    """Write deploy/nginx.conf for a loopback run into ``conf_dir`` with an upstream.conf listing ``servers``.

    Args:
        conf_dir: an existing, empty folder; receives nginx.conf, upstream.conf, temp/ and logs.
        port: the loopback port nginx listens on.
        servers: upstream addresses, "host:port" each.

    Returns:
        The path of the rendered nginx.conf.
    """
    if not servers:
        raise ValueError("servers is empty: nginx needs at least one replica address")
    if not 0 < port < 65536:
        raise ValueError(f"port={port} is not a TCP port (1-65535)")
    text = NGINX_CONF.read_text()
    for line in (LISTEN_LINE, HTTP_LINE):
        if text.count(line) != 1:
            raise ValueError(f"deploy/nginx.conf must contain the line {line.strip()!r} exactly once")
    text = text.replace(LISTEN_LINE, f"        listen 127.0.0.1:{port};\n")
    temp = conf_dir / "temp"
    temp.mkdir(exist_ok=True)
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    paths = "".join(f"    {kind}_temp_path {temp / kind};\n" for kind in kinds)
    text = text.replace(HTTP_LINE, HTTP_LINE + paths)
    conf_dir.chmod(0o755)  # nginx's workers drop root privileges (to "nobody") and must reach temp/
    (conf_dir / "nginx.conf").write_text(text)
    (conf_dir / "upstream.conf").write_text("".join(f"server {s} {SERVER_PARAMS};\n" for s in servers))
    return conf_dir / "nginx.conf"


def nginx_command(conf: Path, *extra: str) -> list[str]:
    """nginx in the foreground on ``conf``, its pid and error log beside it (Debian's compiled-in paths need root)."""
    d = conf.parent
    return [
        nginx_binary(),
        "-c",
        str(conf),
        "-p",
        str(d),
        "-e",
        str(d / "error.log"),
        "-g",
        f"daemon off; pid {d / 'nginx.pid'}; error_log {d / 'error.log'} warn;",
        *extra,
    ]


def check_nginx_conf(conf: Path) -> None:
    """Run `nginx -t` on ``conf``; raise RuntimeError with nginx's message if it is rejected."""
    r = subprocess.run(nginx_command(conf, "-t"), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nginx -t rejected {conf}:\n{r.stderr}")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def nginx_server(conf: Path, port: int, timeout: float = 20):
    """Run nginx in the foreground on ``conf``; yield its process once /nginx-health answers; stop it after."""
    check_nginx_conf(conf)
    proc = subprocess.Popen(nginx_command(conf), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not _answers(f"http://127.0.0.1:{port}/nginx-health"):
            if proc.poll() is not None:
                raise RuntimeError(
                    f"nginx exited: {proc.stdout.read().decode(errors='replace')}"
                    f"{(conf.parent / 'error.log').read_text(errors='replace')[-2000:]}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError("nginx did not answer /nginx-health in time")
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()  # fast shutdown: open websockets are cut, as when the server stops
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        proc.kill()  # a no-op once it has exited (Popen does not signal a reaped process)
        proc.wait()


@contextlib.contextmanager
def local_cluster(replicas: int = 2, port: int | None = None, env: dict | None = None):
    """Start ``replicas`` app processes and nginx in front of them; yield a Cluster; stop everything after."""
    if replicas < 1:
        raise ValueError(f"replicas={replicas}: at least 1 is needed")
    port = port or free_port()
    with contextlib.ExitStack() as stack:
        reps = []
        for _ in range(replicas):
            base, proc = stack.enter_context(streamlit_server(env=env))
            reps.append(Replica(address=base.removeprefix("http://"), base=base, proc=proc))
        conf_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aexp-nginx-")))
        conf = render_nginx_conf(conf_dir, port, [r.address for r in reps])
        stack.enter_context(nginx_server(conf, port))
        yield Cluster(url=f"http://127.0.0.1:{port}", replicas=tuple(reps), conf_dir=conf_dir)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--port", type=int, default=None, help="nginx's port on 127.0.0.1 (default: a free one)")
    args = ap.parse_args()
    with local_cluster(args.replicas, args.port) as c:
        print(f"{c.url}  ->  {', '.join(r.address for r in c.replicas)}   (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while all(r.proc.poll() is None for r in c.replicas):
                time.sleep(1)


if __name__ == "__main__":
    main()
