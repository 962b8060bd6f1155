"""Browser journey: size the default scenario, break it (70B on one H100), read the suggestions.

Every step waits on something visible (a heading, a text, the run indicator going away) with a generous timeout,
never on a fixed sleep: under load a rerun can take many seconds, and the next action must not start before it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.steps import WAIT_MS, choose, settled


@pytest.mark.e2e
def test_sizing_fit_then_not_fit(page, app_url):
    page.goto(app_url)  # Sizing is the default page
    expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("Fits:").first).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("One GPU's memory by component")).to_be_visible(timeout=WAIT_MS)
    settled(page)
    choose(page, "Node type", "1x-h100-sxm-80gb")
    tp = page.locator("[data-testid=stSidebar]").get_by_label("Tensor parallel (target)")
    tp.fill("1")
    tp.press("Enter")
    expect(tp).to_have_value("1", timeout=WAIT_MS)
    expect(page.get_by_text("Does not fit:").first).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("Changes that fit and start, best first")).to_be_visible(timeout=WAIT_MS)
    settled(page)
    # suggestions and the component table (waited for: under load a table can be drawn after the run ends)
    expect(page.locator("[data-testid=stDataFrame]").nth(1)).to_be_attached(timeout=WAIT_MS)
