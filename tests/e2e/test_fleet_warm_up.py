"""A server plans the Fleet page's default scenario in the background after its first page is drawn, on any
address (127.0.0.1 included), so a visitor who opens Fleet & Quote next finds the plan in the core's cache."""

from __future__ import annotations

import time

from playwright.sync_api import expect

from tests.e2e.conftest import logged_page
from tests.e2e.steps import WAIT_MS, render_log, settled

#: The background plan starts 3 s after the first page (ui/_warm_up.py) and takes a few seconds more; on a loaded
#: machine, longer.
WARM_UP_WAIT_S = 240


def test_the_fleet_default_is_planned_in_the_background_after_the_first_page(browser, tmp_path):
    log = tmp_path / "runs.jsonl"
    with logged_page(browser, log) as (page, url):
        page.goto(url)
        expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible(timeout=WAIT_MS)
        settled(page)
        deadline = time.monotonic() + WARM_UP_WAIT_S
        while not render_log(log, "warm-up") and time.monotonic() < deadline:
            time.sleep(0.5)
        warmed = [e["name"] for e in render_log(log, "warm-up")]
        assert warmed == ["fleet"], "no background plan after the first page"
        page.get_by_role("link", name="Fleet & Quote").first.click()
        expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
