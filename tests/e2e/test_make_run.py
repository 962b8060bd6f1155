"""`make run` serves the app: started headless on a free port, it answers /_stcore/health."""

from __future__ import annotations

import shutil
import urllib.request

import pytest

from tests.e2e.conftest import free_port, start_server, stop_server, wait_healthy


@pytest.mark.e2e
def test_make_run_serves_health():
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    port = free_port()
    proc = start_server(["make", "run", f"PORT={port}", "ADDRESS=127.0.0.1"])
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout_s=300)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as response:
            assert response.read().decode().strip() == "ok"
    finally:
        stop_server(proc)
