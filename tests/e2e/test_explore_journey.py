"""Browser journey: set an objective, open Explore, click a frontier point on the chart, see that configuration
on Sizing with the same KV cache, and open the link in a new browser context."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

SEARCH_TIMEOUT_MS = 240_000


def _settled(page) -> None:
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=SEARCH_TIMEOUT_MS)


def _go(page, title: str) -> None:
    page.locator("[data-testid=stSidebarNav]").get_by_text(title, exact=True).click()
    page.get_by_role("heading", name=title, exact=True).wait_for()
    _settled(page)


def _click_until_chosen(page, marker, tries: int = 6) -> None:
    """Click the frontier marker until the page says the scenario changed. A click that lands while the chart is
    still being wired up is lost (no selection event), and a second click on the selected point clears the
    selection, so the click is repeated until the message shows. A chart redrawn while the click scrolls to it
    can leave the marker outside the viewport for that attempt; the page is let settle and the click repeated."""
    chosen = page.get_by_text("The scenario is now")
    for _ in range(tries):
        try:
            marker.scroll_into_view_if_needed()
            marker.click(force=True)
        except PlaywrightError:
            _settled(page)
            continue
        try:
            chosen.wait_for(timeout=SEARCH_TIMEOUT_MS // tries)
            return
        except PlaywrightTimeoutError:
            _settled(page)
    chosen.wait_for(timeout=SEARCH_TIMEOUT_MS)


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid=stMetric]").filter(has_text=label).first
    box.wait_for()
    return box.locator("[data-testid=stMetricValue]").inner_text().strip()


@pytest.mark.e2e
def test_a_frontier_point_becomes_the_scenario_on_sizing_and_in_the_link(browser, page, app_url):
    page.goto(app_url)
    page.get_by_role("heading", name="Sizing", exact=True).wait_for()
    _go(page, "Explore")
    objective = page.get_by_label("TPOT objective (ms, 0 = none)")
    objective.fill("40")
    objective.press("Enter")
    _settled(page)
    headline = page.get_by_text("Cheapest configuration that meets every objective")
    expect(headline).to_be_visible(timeout=SEARCH_TIMEOUT_MS)
    assert page.locator("[data-testid=stException]").count() == 0
    # the frontier trace is the last one of the first chart; its markers are SVG paths
    chart = page.locator("[data-testid=stPlotlyChart]").first
    marker = chart.locator(".scatterlayer .trace").last.locator(".points path").first
    marker.wait_for()
    _click_until_chosen(page, marker)
    message = page.get_by_text("The scenario is now").inner_text()
    tokens = re.search(r"\(([\d,]+) KV cache tokens per replica\)", message).group(1)
    tp = re.search(r" TP (\d+) ", message).group(1)
    seqs = re.search(r", (\d+) seqs,", message).group(1)
    page.wait_for_url(re.compile(rf"mns={seqs}"))
    _go(page, "Sizing")
    assert _metric(page, "KV cache tokens") == tokens
    assert page.locator("[data-testid=stSidebar]").get_by_label("Tensor parallel (target)").input_value() == tp
    link = page.url

    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.set_default_timeout(60_000)
        fresh.goto(link)
        fresh.get_by_role("heading", name="Sizing", exact=True).wait_for()
        _settled(fresh)
        assert _metric(fresh, "KV cache tokens") == tokens
    finally:
        other.close()
