"""Browser journey: size the default scenario, break it (70B on one H100), read the suggestions.

Every step waits on something visible (a heading, a text, the run indicator going away) with a generous timeout,
never on a fixed sleep: under load a rerun can take many seconds, and the next action must not start before it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

WAIT_MS = 120_000


def _settled(page) -> None:
    """Wait until the app's current run has finished (the status widget goes away)."""
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=WAIT_MS)


def _choose(page, label: str, option: str) -> None:
    box = page.locator("[data-testid=stSidebar]").get_by_label(label)
    expect(box).to_be_enabled(timeout=WAIT_MS)
    box.click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option).first.click()
    expect(box).to_have_value(option, timeout=WAIT_MS)
    _settled(page)


@pytest.mark.e2e
def test_sizing_fit_then_not_fit(page, app_url):
    page.goto(app_url)  # Sizing is the default page
    expect(page.get_by_role("heading", name="Sizing", exact=True)).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("Fits:").first).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("One GPU's memory by component")).to_be_visible(timeout=WAIT_MS)
    _settled(page)
    _choose(page, "Node type", "1x-h100-sxm-80gb")
    tp = page.locator("[data-testid=stSidebar]").get_by_label("Tensor parallel (target)")
    tp.fill("1")
    tp.press("Enter")
    expect(tp).to_have_value("1", timeout=WAIT_MS)
    expect(page.get_by_text("Does not fit:").first).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("Changes that fit and start, best first")).to_be_visible(timeout=WAIT_MS)
    _settled(page)
    # suggestions and the component table (waited for: under load a table can be drawn after the run ends)
    expect(page.locator("[data-testid=stDataFrame]").nth(1)).to_be_attached(timeout=WAIT_MS)
