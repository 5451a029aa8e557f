"""Start the app with `streamlit run` on 127.0.0.1 and a free port, for browser tests and benchmarks."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Debian's Chromium, headless, with nothing that would reach the network or download anything
CHROMIUM_FLAGS = (
    "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
    "--no-first-run --disable-sync --disable-quic"
).split()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_command(script: str, port: int, *flags: str) -> list[str]:
    """`streamlit run script` on 127.0.0.1:port, headless, no usage statistics, no file watcher, plus ``flags``."""
    return [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port), "--server.address",
            "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none", *flags]  # fmt: skip


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float, output=lambda: "its output") -> None:
    """Poll ``base``/_stcore/health until it answers 200; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}: {output()}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not answer {base}/_stcore/health within {timeout:g} s")
        time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def streamlit_server(script: str = "streamlit_app.py", cwd: Path = ROOT, timeout: float = 60, env: dict | None = None):
    """Yield the base URL of a running `streamlit run script`; stop it afterwards."""
    port = free_port()
    proc = subprocess.Popen(streamlit_command(script, port), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, timeout, lambda: proc.stdout.read().decode(errors="replace")[-2000:])
        yield base, proc
    finally:
        stop(proc)


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("Chromium is not installed: run `apt-get install -y chromium` (see .ci/run)")
    return path


def wait_for_app(page, timeout_ms: int = 90000) -> None:
    """Wait until the page's script has finished and every element has drawn (no skeletons left)."""
    page.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=timeout_ms)
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid="stSkeleton"]')
                && !document.querySelector('[data-testid="stStatusWidget"]');
        }""",
        timeout=timeout_ms,
        polling=100,
    )
    page.wait_for_timeout(200)


def _address_matches(url: str, match) -> bool:
    if callable(match):
        return bool(match(url))
    if isinstance(match, str):  # a glob as Playwright writes them: ** any characters, * any but a slash
        pattern = re.escape(match).replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        return re.fullmatch(pattern, url) is not None
    return match.search(url) is not None  # a compiled pattern


def wait_for_address(page, match, timeout: float = 30000) -> str:
    """Wait until the page's address (as the browser has it now) matches ``match``: a glob (``"**seq_len=6**"``), a
    compiled pattern or a predicate of the address; returns the address. Streamlit writes a setting into the address
    with ``history.replaceState``. Playwright's ``wait_for_url`` compares its last known address and then waits for
    a navigation event; in the pinned client an event that arrives as the wait begins is missed, and the wait runs
    out although the address matches. Asking the browser each time has no such window. Running out raises
    Playwright's own TimeoutError, as its waits do."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    while True:
        try:
            url = page.evaluate("() => location.href")
        except PlaywrightError:  # a document being replaced: ask the next one
            url = page.url
        if _address_matches(url, match):
            return url
        if time.monotonic() > deadline:
            raise PlaywrightTimeout(f"the address never matched {match!r} in {timeout / 1000:g} s; it is {url}")
        page.wait_for_timeout(100)
