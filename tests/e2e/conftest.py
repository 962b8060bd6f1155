"""A real Streamlit server on 127.0.0.1 (a free port, stopped by itself) and headless Chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parents[2]
SERVER_LIFETIME_S = 900  # the server exits by itself even if the test run is killed

# Playwright's assertions wait 5 s by default; a loaded machine redraws a page more slowly than
# that, so every assertion waits as long as a page action does.
expect.set_options(timeout=60_000)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("server did not become healthy")


#: Test servers' output files older than this are removed when a new server starts.
SERVER_LOG_KEEP_S = 24 * 3600


def _prune_server_logs() -> None:
    cutoff = time.time() - SERVER_LOG_KEEP_S
    for old in Path(tempfile.gettempdir()).glob("planner-e2e-server-*.log"):
        with suppress(OSError):
            if old.stat().st_mtime < cutoff:
                old.unlink()


def start_server(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``command`` in its own process group (stopped by :func:`stop_server`, or by itself after
    ``SERVER_LIFETIME_S``); its output goes to a ``planner-e2e-server-*.log`` file in the temporary folder, kept a
    day."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    _prune_server_logs()
    log = tempfile.NamedTemporaryFile(prefix="planner-e2e-server-", suffix=".log", delete=False)  # noqa: SIM115
    with log:  # the server's own output, for a failing journey's post-mortem (the Popen keeps its own handle)
        return subprocess.Popen(
            ["timeout", str(SERVER_LIFETIME_S), *command],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def streamlit_command(port: int, secrets_file: Path | None = None) -> list[str]:
    """``streamlit run app.py`` on 127.0.0.1:``port``, headless, through ``python -m ui._server`` (as ``make run``),
    reading its secrets (sign-in) only from ``secrets_file``: never a developer's own ``.streamlit/secrets.toml``
    (None: no secrets, single-user)."""
    server = ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true"]
    secrets = str(secrets_file or Path(tempfile.gettempdir()) / "planner-no-secrets" / "secrets.toml")
    return [sys.executable, "-m", "ui._server", *server, "--secrets.files", secrets]


def stop_server(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


@contextmanager
def running_app(
    port: int | None = None, *, secrets_file: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """A fresh app server on 127.0.0.1 at ``port`` (a free one by default), healthy on entry, stopped on exit;
    yields its URL. ``secrets_file`` sets up sign-in; ``env`` adds to its environment (a database URL)."""
    port = port or free_port()
    proc = start_server(streamlit_command(port, secrets_file), env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        stop_server(proc)


@contextmanager
def logged_page(browser, log: Path) -> Iterator[tuple[object, str]]:
    """A fresh app server that logs its script runs and jobs to ``log`` (``PLANNER_RENDER_LOG``) and a page of a
    new browser context on it: yields (page, the server's URL); both closed on exit."""
    with running_app(env={"PLANNER_RENDER_LOG": str(log)}) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            yield context.new_page(), url
        finally:
            context.close()


@pytest.fixture(scope="session")
def app_url():
    # the journeys' server quotes node types side by side in worker processes forked from its threads, as a server
    # on a machine of several CPUs does (the other tests quote them one after another: tests/conftest.py)
    with running_app(env={"PLANNER_WORKERS": "2"}) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("Debian chromium is not installed (make test installs it as root)")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--headless",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    context.close()
