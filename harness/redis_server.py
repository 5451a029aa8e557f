"""Debian's redis-server on 127.0.0.1 and a free port, for the class pulse's tests and benchmark.

The server keeps its data in a private temporary folder with an append-only file, so that a test can stop it
mid-class and start it again on the same port with the class still there, as a restarted Redis with a volume
does in deploy/compose.yaml.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from harness.server import free_port


def redis_binary() -> str | None:
    return shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).exists()), None
    )


def _pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process on a loopback port; ``stop()`` and ``start()`` it again on the same port."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = Path(tempfile.mkdtemp(prefix="aexp-redis-"))
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20) -> RedisServer:
        binary = redis_binary()
        if binary is None:
            raise FileNotFoundError("redis-server is not installed: `apt-get install -y redis-server`")
        cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir), "--save", "",
               "--appendonly", "yes", "--maxmemory", "64mb", "--maxmemory-policy", "noeviction"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not _pings(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not answer on port {self.port}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop the server (SIGTERM: it writes its append-only file and exits), as Redis going away does."""
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@contextlib.contextmanager
def redis_server():
    """Yield a started RedisServer; stop it and remove its folder afterwards."""
    server = RedisServer()
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)
