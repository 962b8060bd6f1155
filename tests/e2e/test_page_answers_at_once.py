"""A page whose result takes seconds (the Fleet plan) answers at once: its script run draws a progress bar and ends
while the plan is computed in the background, and the page draws the plan by itself once it is in."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import logged_page
from tests.e2e.steps import WAIT_MS, render_log


def test_the_fleet_page_draws_a_progress_bar_then_its_plan_without_a_click(browser, tmp_path):
    log = tmp_path / "runs.jsonl"
    with logged_page(browser, log) as (page, url):
        page.goto(url + "/fleet")
        expect(page.get_by_role("heading", name="Fleet & Quote", exact=True)).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("[data-testid=stProgress]")).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("[data-testid=stProgress]")).to_have_count(0)
    plan = next(job for job in render_log(log, "job") if job["name"] == "fleet plan")
    runs = [run for run in render_log(log, "run") if run["name"] == "fleet"]
    first, last = runs[0], runs[-1]
    assert first["start"] + first["seconds"] < plan["start"] + plan["seconds"], "the page's run waited for the plan"
    assert last["start"] >= plan["start"] + plan["seconds"], "no run drew the plan once it was in"
