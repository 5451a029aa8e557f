"""Several replicas behind deploy/nginx.conf: every request of a student reaches the replica holding its session.

Two `streamlit run` processes on loopback ports and Debian's nginx running the same deploy/nginx.conf that
compose and systemd use (harness/local_cluster.py renders only the listen address and the temp paths). The
students are websocket clients speaking Streamlit's protocol with a cookie jar of one cookie, all from
127.0.0.1 with the same User-Agent, as thirty laptops behind one school NAT address look to the proxy.
nginx names the replica that answered in the X-Upstream header. A real Chromium checks the same in a browser.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest
import yaml
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import ConnectionClosed

from harness.local_cluster import (
    ROOT,
    SERVER_PARAMS,
    Tls,
    check_nginx_conf,
    local_cluster,
    nginx_binary,
    nginx_server,
    render_nginx_conf,
)
from harness.server import free_port, stop, streamlit_command, wait_for_address, wait_healthy

DEPLOY = ROOT / "deploy"
COOKIE = "aexp_route"
PNG = b"\x89PNG\r\n\x1a\n"

try:
    nginx_binary()
    HAVE_NGINX = True
except FileNotFoundError:
    HAVE_NGINX = False
needs_nginx = pytest.mark.skipif(
    not HAVE_NGINX,
    reason="nginx is not installed and could not be installed (scripts/test.sh installs Debian's nginx with apt-get)",
)


def self_signed(folder, port: int) -> Tls:
    """A certificate for 127.0.0.1 made here with openssl (valid one day), for site.https.conf on ``port``."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed (Debian: apt-get install -y openssl)")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return Tls(cert, key, port)


# ---- a student: HTTP requests and one websocket, all with the student's cookie


@dataclass(frozen=True)
class Reply:
    status: int
    upstream: str  # nginx's X-Upstream: "addr" or "addr1, addr2" when it moved on to another replica
    headers: dict
    body: bytes


def get(url: str, cookie: str | None = None) -> Reply:
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return Reply(r.status, r.headers.get("X-Upstream", ""), dict(r.headers), r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers.get("X-Upstream", ""), dict(e.headers), e.read())


@dataclass(frozen=True)
class Run:
    session_id: str  # Streamlit's session (new_session.initialize.session_id)
    images: tuple[str, ...]  # st.image URLs, "/media/<id>.png"
    texts: tuple[str, ...]  # markdown bodies (the formula names the setting)
    errors: tuple[str, ...]  # exception elements on the page
    finished: bool  # script_finished FINISHED_SUCCESSFULLY


class Student:
    """One browser: its aexp_route cookie (from its first visit) and a websocket through nginx."""

    def __init__(self, url: str, cookie: str, query: str):
        self.url, self.cookie, self.query = url, cookie, query
        self.ws, self.upstream, self.session_id = None, "", ""

    def connect(self) -> str:
        """Open /_stcore/stream (resuming the last session, as the front end does); return X-Upstream."""
        from websockets.sync.client import connect

        protocols = ["streamlit", "xsrf", self.session_id] if self.session_id else ["streamlit"]
        self.ws = connect(
            re.sub("^http", "ws", self.url) + "/_stcore/stream",
            subprotocols=protocols,
            additional_headers={"Cookie": self.cookie},
            max_size=None,
            open_timeout=60,
        )
        self.upstream = self.ws.response.headers.get("X-Upstream", "")
        return self.upstream

    def run(self, page: str = "Playground", timeout: float = 120) -> Run:
        """Run ``page`` with the student's URL query string; collect what the page shows."""
        msg = BackMsg()
        msg.rerun_script.query_string, msg.rerun_script.page_name = self.query, page
        self.ws.send(msg.SerializeToString())
        images, texts, errors = [], [], []
        while True:
            fwd = ForwardMsg.FromString(self.ws.recv(timeout=timeout))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.session_id = fwd.new_session.initialize.session_id
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                el = fwd.delta.new_element
                if el.WhichOneof("type") == "imgs":
                    images += [i.url for i in el.imgs.imgs]
                elif el.WhichOneof("type") == "markdown":
                    texts.append(el.markdown.body)
                elif el.WhichOneof("type") == "exception":
                    errors.append(f"{el.exception.type}: {el.exception.message}")
            elif kind == "script_finished":
                return Run(
                    self.session_id,
                    tuple(images),
                    tuple(texts),
                    tuple(errors),
                    fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY,
                )

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


def first_visit(url: str) -> str:
    """GET the page without cookies, like a new browser; return the cookie nginx sets ("aexp_route=...")."""
    r = get(url + "/")
    assert r.status == 200
    cookie = r.headers.get("Set-Cookie", "")
    m = re.fullmatch(rf"({COOKIE}=[0-9a-f]{{32}}); Path=/; HttpOnly; SameSite=Lax", cookie)
    assert m, f"first visit got no {COOKIE} cookie: {cookie!r}"
    return m.group(1)


def students_on_each_replica(cluster, per_replica: int = 1) -> dict[str, list[str]]:
    """New browsers visit until every replica has ``per_replica`` cookies hashed to it; replica address -> cookies."""
    found: dict[str, list[str]] = {r.address: [] for r in cluster.replicas}
    for _ in range(200):  # each visit lands on one of two replicas at random: 2**-100 odds of missing one
        cookie = first_visit(cluster.url)
        where = get(cluster.url + "/_stcore/health", cookie).upstream
        if len(found[where]) < per_replica:
            found[where].append(cookie)
        if all(len(v) == per_replica for v in found.values()):
            return found
    raise AssertionError(f"200 cookies never spread over every replica: {found}")


def playground(seed: int) -> str:
    # 128 tokens: the Playground draws X and Z as st.image PNGs (media files; its head maps are live maps)
    return f"seq_len=128&d_model=64&heads=4&seed={seed}"


@contextlib.contextmanager
def session(url: str, cookie: str, query: str):
    s = Student(url, cookie, query)
    try:
        s.connect()
        yield s
    finally:
        s.close()


def assert_page_works(run: Run, query: str) -> None:
    assert run.finished and not run.errors, run.errors
    assert run.images, "the Playground at 128 tokens shows its maps as images"
    assert any("T = 128" in t for t in run.texts), "the formula names the URL's setting"


def served_by(upstream: str, replica: str, dead: str | None = None) -> bool:
    """X-Upstream says ``replica`` answered, after at most a try of the ``dead`` one (nginx retries a failed
    replica once its fail_timeout of 10 s has passed, gets a refused connection and moves on)."""
    return upstream == replica or (dead is not None and upstream == f"{dead}, {replica}")


def assert_media_from(url: str, cookie: str, images, replica: str, dead: str | None = None) -> None:
    """Every image of the page loads through nginx, served by ``replica`` alone."""
    for path in images:
        r = get(url + path, cookie)
        assert r.status == 200 and r.body.startswith(PNG), (path, r.status)
        assert served_by(r.upstream, replica, dead), f"{path} served by {r.upstream}, the session lives on {replica}"


# ---- the configuration files


def test_compose_file_runs_replicas_behind_nginx_with_this_config():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    app, proxy = compose["services"]["app"], compose["services"]["nginx"]
    assert app["deploy"]["replicas"] == "${REPLICAS:-2}" and app["deploy"]["mode"] == "replicated"
    assert app["read_only"] is True and app["tmpfs"] == ["/tmp"], "the root filesystem read-only, /tmp writable"
    assert "ports" not in app, "replicas are reached through nginx only"
    assert "/_stcore/health" in " ".join(app["healthcheck"]["test"])
    assert (DEPLOY / app["build"]["context"]).resolve() == ROOT
    assert (ROOT / app["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    defaults = {"${SITE:-http}": "http", "${TLS_DIR:-./tls}": "./tls"}  # compose's defaults, for the paths
    volumes = [functools.reduce(lambda v, kv: v.replace(*kv), defaults.items(), v) for v in proxy["volumes"]]
    mounts = {v.split(":")[1]: DEPLOY / v.split(":")[0] for v in volumes}
    assert {k: v.resolve() for k, v in mounts.items()} == {
        "/etc/nginx/nginx.conf": DEPLOY / "nginx.conf",
        "/etc/nginx/app.conf": DEPLOY / "app.conf",
        "/etc/nginx/site.conf": DEPLOY / "site.http.conf",
        "/etc/nginx/upstream.conf": DEPLOY / "upstream.compose.conf",
        "/etc/nginx/tls": DEPLOY / "tls",
    }
    assert (DEPLOY / "site.https.conf").exists(), "SITE=https mounts site.https.conf"
    assert {p.split(":")[-1] for p in proxy["ports"]} == {"80", "443"}
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"


def test_dockerfile_copies_what_exists_and_its_default_base_takes_the_cpu_torch_wheel():
    text = (DEPLOY / "Dockerfile").read_text()
    for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.M):
        *sources, _dest = line.split()
        for src in sources:
            assert (ROOT / src).exists(), f"Dockerfile copies {src}, which is not in the repository"
    # requirements.txt as it is: on the default base's Python it names PyTorch's CPU wheel itself (a build on
    # Python 3.11 is handed the wheel, see the Dockerfile and tests/test_containers.py)
    assert re.search(r"pip install .*-r requirements\.txt", text)
    python = re.search(r"^ARG BASE=python:(3\.\d+)-slim$", text, re.M).group(1)
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    assert any(
        f'python_version == "{python}"' in x and x.startswith("torch @ https://download.pytorch.org/whl/cpu/")
        for x in lines
    )
    assert re.search(r"^USER app$", text, re.M) and "/_stcore/health" in text.split("HEALTHCHECK", 1)[1]


@needs_nginx
@pytest.mark.parametrize("upstream", ["upstream.compose.conf", "upstream.systemd.conf"])
@pytest.mark.parametrize("site", ["http", "https"])
def test_nginx_accepts_the_config_with_each_upstream_and_site_file(tmp_path, upstream, site):
    tls = self_signed(tmp_path, 8443) if site == "https" else None
    conf = render_nginx_conf(tmp_path, 8080, ["127.0.0.1:1"], tls=tls)
    # compose's "app" resolves only inside Docker's network; "localhost" resolves here, to one or more addresses
    (tmp_path / "upstream.conf").write_text((DEPLOY / upstream).read_text().replace("server app:", "server localhost:"))
    check_nginx_conf(conf)


def test_systemd_unit_starts_one_replica_per_port():
    unit = (DEPLOY / "attention-explorer@.service").read_text()
    assert "--server.port %i" in unit and "--server.address 127.0.0.1" in unit
    ports = re.findall(r"server 127\.0\.0\.1:(\d+)", (DEPLOY / "upstream.systemd.conf").read_text())
    assert len(ports) >= 2 and len(set(ports)) == len(ports)
    # compose, systemd and the loopback test give the replicas the same parameters (weight, failure rule)
    params = {
        re.search(r"^server \S+ (.+);$", (DEPLOY / f).read_text(), re.M).group(1)
        for f in ("upstream.compose.conf", "upstream.systemd.conf")
    }
    assert params == {SERVER_PARAMS}, params
    if shutil.which("systemd-analyze"):
        r = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", str(DEPLOY / "attention-explorer@.service")],
            capture_output=True,
            text=True,
        )
        syntax = [ln for ln in r.stderr.splitlines() if "Unknown" in ln or "Invalid" in ln or "Missing" in ln]
        assert not syntax, syntax


# ---- two replicas behind nginx, for real


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


@needs_nginx
@pytest.mark.slow
def test_first_visit_gets_a_cookie_and_cookieless_clients_stay_on_one_replica(cluster):
    cookie = first_visit(cluster.url)
    again = get(cluster.url + "/", cookie)
    assert again.status == 200 and "Set-Cookie" not in again.headers, "a browser with a cookie keeps it"
    assert get(cluster.url + "/nginx-health").status == 200
    # without a cookie the key is address + User-Agent: the same client always reaches the same replica
    seen = {get(cluster.url + "/_stcore/health").upstream for _ in range(12)}
    assert len(seen) == 1 and seen <= {r.address for r in cluster.replicas}, seen


@needs_nginx
@pytest.mark.slow
def test_students_behind_one_address_spread_and_keep_their_replica(cluster):
    """Same IP, same browser, different cookies: one student per replica, and every request stays there."""
    spread = students_on_each_replica(cluster)
    (a_addr, [a_cookie]), (b_addr, [b_cookie]) = spread.items()
    replicas = {r.address: r for r in cluster.replicas}
    for seed, (addr, cookie) in enumerate([(a_addr, a_cookie), (b_addr, b_cookie)], start=11):
        other = replicas[next(x for x in replicas if x != addr)]
        with session(cluster.url, cookie, playground(seed)) as s:
            assert s.upstream == addr
            first = s.run()
            assert_page_works(first, s.query)
            assert_media_from(cluster.url, cookie, first.images, addr)
            # the other replica never drew this student's seeded maps: a proxy without stickiness would 404 them
            # (a map that is the same for every seed has the same id on both: media ids are content hashes)
            assert any(get(other.base + path).status == 404 for path in first.images)
            # the page's other requests go to the same replica
            for path in ("/", "/_stcore/health", "/_stcore/host-config", "/Playground"):
                assert get(cluster.url + path, cookie).upstream == addr, path
            # reconnect (a laptop waking up): same replica, and Streamlit resumes the same session
            s.close()
            assert s.connect() == addr
            again = s.run()
            assert again.session_id == first.session_id
            assert_page_works(again, s.query)
            assert_media_from(cluster.url, cookie, again.images, addr)


@needs_nginx
@pytest.mark.slow
def test_media_file_found_on_another_replica_when_the_ring_changed(cluster):
    """If a student's cookie hashes elsewhere under an open page (replica added or restarted), nginx asks on."""
    spread = students_on_each_replica(cluster)
    (a_addr, [a_cookie]), (b_addr, [b_cookie]) = spread.items()
    b_base = next(r.base for r in cluster.replicas if r.address == b_addr)
    with session(cluster.url, a_cookie, playground(21)) as s:
        run = s.run()
        assert_page_works(run, s.query)
        only_on_a = [path for path in run.images if get(b_base + path).status == 404]
        assert only_on_a, "the seeded maps of this page exist on A alone"
        r = get(cluster.url + only_on_a[0], b_cookie)  # the cookie points at B, the file lives on A
        assert r.status == 200 and r.body.startswith(PNG)
        assert r.upstream == f"{b_addr}, {a_addr}", r.upstream
    missing = get(cluster.url + "/media/" + "0" * 32 + ".png", a_cookie)
    assert missing.status == 404 and missing.upstream.count(",") == 1, "a file no replica has: both asked, then 404"


@needs_nginx
@pytest.mark.slow
def test_a_replica_dies_its_students_move_and_the_others_notice_nothing():
    with local_cluster(2) as cluster:
        spread = students_on_each_replica(cluster)
        (a_addr, [a_cookie]), (b_addr, [b_cookie]) = spread.items()
        dying = next(r for r in cluster.replicas if r.address == a_addr)
        with session(cluster.url, a_cookie, playground(31)) as a, session(cluster.url, b_cookie, playground(32)) as b:
            a_before, b_before = a.run(), b.run()
            assert_page_works(a_before, a.query)
            assert_page_works(b_before, b.query)

            dying.proc.kill()  # a crash: no goodbye to the open websockets
            dying.proc.wait(10)

            # A's student: the websocket drops, the page reconnects through nginx and lands on B
            with pytest.raises(ConnectionClosed):
                while True:  # what the run left in flight, then the close
                    a.ws.recv(timeout=30)
            a.close()
            assert served_by(a.connect(), b_addr, dead=a_addr)
            a_after = a.run()
            assert a_after.session_id != a_before.session_id, "the session state died with its replica"
            assert_page_works(a_after, a.query)
            # the URL restored the setting: the same images (media ids are content hashes), now from B
            assert a_after.images == a_before.images
            assert_media_from(cluster.url, a_cookie, a_after.images, b_addr, dead=a_addr)

            # B's student: same websocket, same session, same replica, nothing to notice
            b_after = b.run()
            assert b_after.session_id == b_before.session_id and b.upstream == b_addr  # its websocket never moved
            assert_page_works(b_after, b.query)
            assert_media_from(cluster.url, b_cookie, b_after.images, b_addr)


@needs_nginx
@pytest.mark.slow
def test_a_student_sent_back_to_its_replica_just_restarted_gets_the_page_of_its_link():
    """Its replica crashes and comes back on the same address before the student's page reconnects: nginx sends the
    student to it by the cookie, as before the crash; the session died with the old process, so the page is a new
    session that runs the settings of its link (the same images, served by the restarted replica)."""
    with local_cluster(2) as cluster:
        spread = students_on_each_replica(cluster)
        (a_addr, [a_cookie]), (b_addr, _) = spread.items()
        dying = next(r for r in cluster.replicas if r.address == a_addr)
        with session(cluster.url, a_cookie, playground(33)) as a:
            before = a.run()
            assert_page_works(before, a.query)

            dying.proc.kill()  # a crash, as the OOM killer does; the supervisor (compose, systemd) starts it again
            dying.proc.wait(10)
            port = int(a_addr.rsplit(":", 1)[1])
            back = subprocess.Popen(
                streamlit_command("streamlit_app.py", port),
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_healthy(dying.base, back, 60)
                with pytest.raises(ConnectionClosed):
                    while True:  # what the run left in flight, then the close
                        a.ws.recv(timeout=30)
                a.close()
                # the student's next requests go by the cookie to the restarted replica (a request that reached the
                # dead process would have been retried on the other replica: then the cookie's replica is asked
                # again once nginx's fail_timeout of 10 s has passed)
                deadline = time.monotonic() + 60
                while get(cluster.url + "/_stcore/health", a_cookie).upstream != a_addr:
                    assert time.monotonic() < deadline, "nginx never sent the student back to the restarted replica"
                    time.sleep(1)
                assert a.connect() == a_addr, "the websocket reaches the restarted replica"
                after = a.run()
                assert after.session_id != before.session_id, "a new process: the session is new"
                assert_page_works(after, a.query)
                assert after.images == before.images, "the page of the link: the same settings, the same maps"
                assert_media_from(cluster.url, a_cookie, after.images, a_addr)
            finally:
                stop(back)


IMAGES_LOADED = (
    "() => { const imgs = [...document.querySelectorAll('[data-testid=\"stImage\"] img')];"
    " return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0); }"
)


@needs_nginx
@pytest.mark.slow
@pytest.mark.browser
def test_chromium_through_nginx_keeps_its_replica_and_survives_losing_it():
    """A real browser: cookie, images from its replica; its replica dies, the page comes back from the other."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    from harness.server import CHROMIUM_FLAGS, chromium_path, wait_for_app

    with local_cluster(2) as cluster, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            seen, console = [], []
            page.on("response", lambda r: seen.append((r.url, r.status, r.headers.get("x-upstream", ""))))
            # the content security policy blocks nothing the app needs: Chromium reports every violation here
            page.on("console", lambda m: console.append(m.text))
            page.on("pageerror", lambda e: console.append(str(e)))
            first = page.goto(cluster.url + "/Playground?" + playground(41))
            assert "frame-ancestors 'self'" in first.headers["content-security-policy"]
            wait_for_app(page)
            page.wait_for_function(IMAGES_LOADED, timeout=120000)
            assert page.locator('[data-testid="stException"]').count() == 0
            cookies = {c["name"]: c["value"] for c in ctx.cookies()}
            assert re.fullmatch(r"[0-9a-f]{32}", cookies[COOKIE])
            health = [u for url, _, u in seen if url.endswith("/_stcore/health")]
            media = [(url, s, u) for url, s, u in seen if "/media/" in url]
            assert health and media, (health, media)
            mine = health[-1]
            assert all(s == 200 and u == mine for _, s, u in media), (mine, media)
            images = sorted(page.locator('[data-testid="stImage"] img').evaluate_all("l => l.map(i => i.src)"))

            # its replica crashes: the front end reconnects through nginx, which sends it to the other replica
            other = next(r.address for r in cluster.replicas if r.address != mine)
            next(r for r in cluster.replicas if r.address == mine).proc.kill()
            seen.clear()
            deadline = time.monotonic() + 120
            while not any(url.endswith("/_stcore/health") and served_by(u, other, mine) for url, _, u in seen):
                assert time.monotonic() < deadline, f"no reconnect to {other}: {seen}"
                page.wait_for_timeout(200)
            wait_for_app(page)
            # Streamlit's front end does not rerun on a reconnect while idle: the page stays as drawn until the
            # student's next change, which runs on the new replica. This app's controls then take the URL's
            # setting over the change (a fresh session seeds its controls from the URL), so it may take a
            # second click for the change itself to show.
            clicks = 0
            # a sidebar control that reruns the page (the scaling is the live maps' own control now)
            toggle = page.locator('[data-testid="stSidebar"] label').filter(has_text="add positional encoding").first
            while "pe=1" not in page.url:
                assert clicks < 2, f"two clicks on the toggle did not turn positional encoding on: {page.url}"
                # Streamlit disables its widgets until the websocket is back: a click before that is lost
                expect(toggle.locator("input")).to_be_enabled(timeout=60000)
                toggle.click()
                clicks += 1
                with contextlib.suppress(PlaywrightTimeout):  # a run may start and end between two polls
                    page.wait_for_function(
                        "() => document.querySelector('[data-testid=\"stApp\"]')"
                        ".getAttribute('data-test-script-state') === 'running'",
                        timeout=10000,
                        polling=20,
                    )
                wait_for_app(page)
                page.wait_for_function(IMAGES_LOADED, timeout=120000)
                assert page.locator('[data-testid="stException"]').count() == 0
                assert "seq_len=128" in page.url, "the URL's setting came back (at 128 tokens the maps are images)"
                for src in page.locator('[data-testid="stImage"] img').evaluate_all("l => l.map(i => i.src)"):
                    r = ctx.request.get(src)  # with the browser's cookie, through nginx
                    assert r.status == 200 and served_by(r.headers["x-upstream"], other, mine), (src, r.headers)
            print(f"clicks after the failover until the change showed: {clicks}")
            after = page.locator('[data-testid="stImage"] img').evaluate_all("l => l.map(i => i.src)")
            assert set(after) != set(images), "positional encoding is on now, so the maps changed"
            media = [(s, u) for url, s, u in seen if "/media/" in url]
            assert media and all(s == 200 and served_by(u, other, mine) for s, u in media), media
            # the live maps came back with the page (a new session on the other replica): a key on their temperature
            # redraws them in the browser, and its release reaches the new replica, which writes the URL
            page.wait_for_selector(".ae-live", timeout=60000)
            frames = int(page.locator(".ae-live").first.get_attribute("data-frames"))
            page.locator('.ae-live input[aria-label^="temperature"]').first.focus()
            page.keyboard.press("ArrowLeft")
            wait_for_address(page, lambda url: "temperature=1.0" not in url and "temperature=" in url, timeout=60000)
            assert int(page.locator(".ae-live").first.get_attribute("data-frames")) > frames
            wait_for_app(page)
            assert page.locator('[data-testid="stException"]').count() == 0
            # a page of Vega charts, metrics and tables under the same policy
            page.goto(cluster.url + "/Softmax_saturation")
            wait_for_app(page)
            assert page.locator('[data-testid="stVegaLiteChart"]').count() > 0
            assert page.locator('[data-testid="stException"]').count() == 0
            blocked = [m for m in console if "Content Security Policy" in m or "Refused to" in m]
            assert not blocked, blocked
        finally:
            browser.close()


# ---- nginx as shipped (no X-Upstream) in front of the same two replicas: headers, limits, HTTPS


@pytest.fixture(scope="module")
def shipped(cluster, tmp_path_factory):
    """A second nginx on the module's replicas, rendered without the harness's X-Upstream: what a school runs."""
    port = free_port()
    conf = render_nginx_conf(tmp_path_factory.mktemp("shipped"), port, [r.address for r in cluster.replicas])
    with nginx_server(conf, port):
        yield f"http://127.0.0.1:{port}"


def csp_of(headers: dict) -> dict[str, list[str]]:
    policy = headers.get("Content-Security-Policy", "")
    return {d.split()[0]: d.split()[1:] for d in (x.strip() for x in policy.split(";")) if d}


def streamlit_inline_script_hashes() -> set[str]:
    """The sha256 of every inline <script> in the installed Streamlit's index.html, as CSP writes them."""
    import base64
    import hashlib
    from pathlib import Path

    import streamlit

    html = (Path(streamlit.__file__).parent / "static" / "index.html").read_text()
    scripts = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)
    return {"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in scripts}


@needs_nginx
@pytest.mark.slow
def test_security_headers_on_every_answer_and_no_replica_address(cluster, shipped):
    cookie = first_visit(shipped)
    addresses = [r.address for r in cluster.replicas] + [r.address.split(":")[1] for r in cluster.replicas]
    for path in ("/", "/Playground", "/_stcore/health", "/_stcore/host-config", "/media/" + "0" * 32 + ".png"):
        r = get(shipped + path, cookie)
        assert r.status == (404 if path.startswith("/media/") else 200), (path, r.status)
        h = r.headers
        assert "X-Upstream" not in h and not any(a in f"{k}: {v}" for k, v in h.items() for a in addresses), h
        assert h.get("Server") == "nginx", "neither nginx's version nor the replica's server is named"
        assert h["X-Content-Type-Options"] == "nosniff" and h["Referrer-Policy"] == "same-origin"
        csp = csp_of(h)
        assert csp["default-src"] == ["'self'"] and csp["frame-ancestors"] == ["'self'"], csp
        assert csp["object-src"] == ["'none'"] and csp["connect-src"] == ["'self'"]
        assert set(csp["img-src"]) == {"'self'", "data:", "blob:"}
        # every source is this site, a data:/blob: URL or a hash: nothing from another origin
        sources = {s for v in csp.values() for s in v}
        assert all(
            s in ("'self'", "'none'", "'unsafe-inline'", "data:", "blob:") or s.startswith("'sha256-") for s in sources
        )
        assert "'unsafe-inline'" not in csp["script-src"] and "'unsafe-eval'" not in csp["script-src"]
        assert streamlit_inline_script_hashes() <= set(csp["script-src"]), "Streamlit's inline script changed"
    # the harness's nginx (the tests above) says which replica answered; nginx as shipped never does
    assert get(cluster.url + "/_stcore/health").upstream in {r.address for r in cluster.replicas}


@needs_nginx
@pytest.mark.slow
def test_a_burst_beyond_the_limits_is_refused_and_another_browser_is_not(cluster, shipped):
    """One browser sends 400 requests at once and opens 30 websockets in a row: nginx refuses what is beyond
    its limits with 429; another browser behind the same address loads its page and opens its websocket."""
    from concurrent.futures import ThreadPoolExecutor

    from websockets.exceptions import InvalidStatus

    greedy, polite = first_visit(shipped), first_visit(shipped)
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda _: get(shipped + "/_stcore/health", greedy).status, range(400)))
    assert codes.count(429) > 0 and set(codes) <= {200, 429}, sorted(set(codes))
    refused, opened = 0, []
    try:
        for _ in range(30):
            s = Student(shipped, greedy, "")
            try:
                s.connect()
                opened.append(s)
            except InvalidStatus as e:
                assert e.response.status_code == 429
                refused += 1
        assert refused > 0 and len(opened) <= 11, (refused, len(opened))
        assert get(shipped + "/", polite).status == 200 and get(shipped + "/_stcore/health", polite).status == 200
        with session(shipped, polite, playground(51)) as s:
            assert_page_works(s.run(), s.query)
    finally:
        for s in opened:
            s.close()


@needs_nginx
@pytest.mark.slow
def test_https_with_a_self_signed_certificate_and_http_redirected(cluster, tmp_path, monkeypatch):
    import http.client

    port, tls = free_port(), self_signed(tmp_path, free_port())
    (tmp_path / "conf").mkdir()
    conf = render_nginx_conf(tmp_path / "conf", port, [r.address for r in cluster.replicas], tls=tls)
    monkeypatch.setenv("SSL_CERT_FILE", str(tls.cert))  # urllib and websockets trust the certificate made above
    with nginx_server(conf, port):
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        plain.request("GET", "/Playground?seq_len=5")
        r = plain.getresponse()
        assert r.status == 301 and r.getheader("Location") == f"https://127.0.0.1:{tls.port}/Playground?seq_len=5"
        assert r.getheader("Set-Cookie") is None, "nothing but the redirect over plain HTTP"
        url = f"https://127.0.0.1:{tls.port}"
        page = get(url + "/")
        assert page.status == 200 and page.headers["Strict-Transport-Security"] == "max-age=31536000"
        assert csp_of(page.headers)["frame-ancestors"] == ["'self'"]
        cookie = page.headers["Set-Cookie"]
        assert cookie.endswith("; Secure") and "HttpOnly" in cookie, cookie
        with session(url, cookie.split(";")[0], playground(61)) as s:  # the websocket over wss://
            assert_page_works(s.run(), s.query)
