#!/usr/bin/env bash
# Set up everything the tests need, check the tree with ruff, and run every test (core, AppTest pages,
# protocol client, deployment, training, real browser).
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

# The browser test drives Debian's Chromium (never a browser downloaded by a tool); the deployment
# test runs deploy/nginx.conf with Debian's nginx (in /usr/sbin, often not on a user's PATH), and the
# class pulse's tests Debian's redis-server.
APT_PACKAGES=()
if ! command -v chromium >/dev/null 2>&1; then APT_PACKAGES+=(chromium); fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then APT_PACKAGES+=(nginx); fi
# the class pulse's tests run Debian's redis-server on a loopback port (harness/redis_server.py)
if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ]; then APT_PACKAGES+=(redis-server); fi
# the container tests (tests/test_containers.py) build the image with podman on a Debian base made by mmdebstrap;
# runc, not crun, is podman's runtime on these machines (harness/containers.conf)
if ! command -v podman >/dev/null 2>&1; then APT_PACKAGES+=(podman); fi
if ! command -v runc >/dev/null 2>&1 && [ ! -x /usr/sbin/runc ]; then APT_PACKAGES+=(runc); fi
if ! command -v mmdebstrap >/dev/null 2>&1; then APT_PACKAGES+=(mmdebstrap); fi
if [ "${#APT_PACKAGES[@]}" -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PACKAGES[@]}" >/dev/null
fi

# Lint and format (ruff.toml): the tree must be clean before the tests run.
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# Two workers (pytest-xdist), a module's tests on one of them (--dist loadfile: its browser, servers and images are
# made once), the longest modules first (tests/conftest.py). TEST_WORKERS=0 runs everything in this process.
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile "$@"
