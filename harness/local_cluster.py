"""N app replicas behind deploy/nginx.conf on 127.0.0.1, without containers: for the tests and for measuring.

Each replica is ``streamlit run streamlit_app.py`` on a free loopback port (harness/server.py starts it),
and nginx runs deploy/nginx.conf, app.conf and site.http.conf (or site.https.conf) with only the lines a
loopback run needs changed: the listen addresses, the certificate paths, and nginx's temporary files and pid in a
private folder (so it runs as any user). The upstream servers are written to upstream.conf beside the rendered
configuration, as compose and systemd do. The harness adds an X-Upstream header (which replica answered) that
the shipped files do not send.

    python harness/local_cluster.py --replicas 2 [--port 8080]   # prints the URL, stops on Ctrl-C
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

from harness.server import free_port, streamlit_server  # noqa: E402

DEPLOY = ROOT / "deploy"
NGINX_CONF = DEPLOY / "nginx.conf"
HTTP_LINE = "http {\n"
LISTEN_LINE = "    listen 80;\n"
TLS_LISTEN_LINE = "    listen 443 ssl;\n"
TLS_PORT_LINE = '    set $tls_port "";\n'
CERT_LINE = "    ssl_certificate /etc/nginx/tls/fullchain.pem;\n"
KEY_LINE = "    ssl_certificate_key /etc/nginx/tls/privkey.pem;\n"
# The harness's one addition to what it serves: which replica answered (tests and benchmarks need to know).
# The shipped files never send it; tests/test_deploy.py checks that nginx as shipped does not.
REVEAL_UPSTREAM = "add_header X-Upstream $upstream_addr always;\n"
# the server parameters of the shipped upstream files (weight, max_fails, fail_timeout), so that the loopback
# run tests them too
SYSTEMD_UPSTREAM = (ROOT / "deploy" / "upstream.systemd.conf").read_text()
SERVER_PARAMS = re.search(r"^server 127\.0\.0\.1:\d+ (.+);$", SYSTEMD_UPSTREAM, re.M).group(1)
# and its balancing rule: one server line per replica, as here
HASH_LINE = re.search(r"^hash .+;$", SYSTEMD_UPSTREAM, re.M).group(0)


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


@dataclass(frozen=True)
class Tls:
    """site.https.conf on loopback: the certificate and key files and the HTTPS port."""

    cert: Path
    key: Path
    port: int


def _replace_once(text: str, line: str, new: str, name: str) -> str:
    if text.count(line) != 1:
        raise ValueError(f"deploy/{name} must contain the line {line.strip()!r} exactly once")
    return text.replace(line, new)


def render_nginx_conf(
    conf_dir: Path, port: int, servers: list[str], *, tls: Tls | None = None, reveal_upstream: bool = False
) -> Path:
    """Write deploy/'s nginx configuration for a loopback run into ``conf_dir``.

    Args:
        conf_dir: an existing, empty folder; receives nginx.conf, upstream.conf, site.conf, app.conf, temp/, logs.
        port: the loopback port of plain HTTP (the app, or with ``tls`` the redirect to HTTPS).
        servers: upstream addresses, "host:port" each.
        tls: serve site.https.conf with this certificate on ``tls.port``; None serves site.http.conf.
        reveal_upstream: add the X-Upstream header (which replica answered) to every response.

    Returns:
        The path of the rendered nginx.conf. Only the listen addresses, the certificate paths, the HTTPS port of
        the redirect and nginx's temp paths differ from the shipped files (and X-Upstream if asked for).
    """
    if not servers:
        raise ValueError("servers is empty: nginx needs at least one replica address")
    for p in [port] + ([tls.port] if tls else []):
        if not 0 < p < 65536:
            raise ValueError(f"port={p} is not a TCP port (1-65535)")
    temp = conf_dir / "temp"
    temp.mkdir(exist_ok=True)
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    paths = "".join(f"    {kind}_temp_path {temp / kind};\n" for kind in kinds)
    nginx = _replace_once(NGINX_CONF.read_text(), HTTP_LINE, HTTP_LINE + paths, "nginx.conf")
    site_name = "site.https.conf" if tls else "site.http.conf"
    site = _replace_once((DEPLOY / site_name).read_text(), LISTEN_LINE, f"    listen 127.0.0.1:{port};\n", site_name)
    if tls:
        site = _replace_once(site, TLS_LISTEN_LINE, f"    listen 127.0.0.1:{tls.port} ssl;\n", site_name)
        site = _replace_once(site, TLS_PORT_LINE, f'    set $tls_port ":{tls.port}";\n', site_name)
        site = _replace_once(site, CERT_LINE, f"    ssl_certificate {tls.cert};\n", site_name)
        site = _replace_once(site, KEY_LINE, f"    ssl_certificate_key {tls.key};\n", site_name)
    app = (DEPLOY / "app.conf").read_text()
    conf_dir.chmod(0o755)  # nginx's workers drop root privileges (to "nobody") and must reach temp/
    (conf_dir / "nginx.conf").write_text(nginx)
    (conf_dir / "site.conf").write_text(site)
    (conf_dir / "app.conf").write_text((REVEAL_UPSTREAM if reveal_upstream else "") + app)
    (conf_dir / "upstream.conf").write_text(
        HASH_LINE + "\n" + "".join(f"server {s} {SERVER_PARAMS};\n" for s in servers)
    )
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
def local_cluster(
    replicas: int = 2,
    port: int | None = None,
    env: dict | None = None,
    reveal_upstream: bool = True,
    cwd: Path | None = None,
):
    """Start ``replicas`` app processes and nginx in front of them (deploy/site.http.conf, with the X-Upstream header
    unless ``reveal_upstream`` is False); yield a Cluster; stop everything after. ``cwd``: the checkout the replicas
    serve (default: this one)."""
    if replicas < 1:
        raise ValueError(f"replicas={replicas}: at least 1 is needed")
    port = port or free_port()
    with contextlib.ExitStack() as stack:
        reps = []
        for _ in range(replicas):
            base, proc = stack.enter_context(streamlit_server(env=env, cwd=cwd or ROOT))
            reps.append(Replica(address=base.removeprefix("http://"), base=base, proc=proc))
        conf_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aexp-nginx-")))
        conf = render_nginx_conf(conf_dir, port, [r.address for r in reps], reveal_upstream=reveal_upstream)
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
