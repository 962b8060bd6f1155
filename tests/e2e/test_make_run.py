"""`make run` serves the app: started headless on a free port, it answers /_stcore/health; with no database URL
and no sign-in set up it is the single-user app, as always (the Sizing page at once, the sidebar saying so)."""

from __future__ import annotations

import shutil
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import REPO, free_port, start_server, stop_server, wait_healthy
from ui._identity import SINGLE_USER_LINE


@pytest.mark.e2e
def test_make_run_serves_health(browser):
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    port = free_port()
    proc = start_server(["make", "run", f"PORT={port}", "ADDRESS=127.0.0.1"])
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout_s=300)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as response:
            assert response.read().decode().strip() == "ok"
        if (REPO / ".streamlit" / "secrets.toml").exists():
            return  # this checkout has its own sign-in set up: not the default any more
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible(timeout=120_000)
        expect(page.locator("[data-testid=stSidebar]").get_by_text(SINGLE_USER_LINE)).to_be_visible(timeout=120_000)
        assert page.get_by_role("button", name="Sign in", exact=True).count() == 0
        page.close()
    finally:
        stop_server(proc)
