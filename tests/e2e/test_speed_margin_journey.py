"""A solution architect asks how much slower than estimated the quoted fleets may be: on Fleet & Quote the button
finds every option's speed margin in the background, the answer replaces the progress bar beside the planner's own
measured error, and the quote document carries it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.steps import WAIT_MS, download, settled


@pytest.mark.e2e
def test_each_options_speed_margin_is_found_and_the_document_carries_it(page, app_url):
    page.goto(f"{app_url}/fleet")
    page.get_by_role("heading", name="Fleet & Quote", exact=True).wait_for()
    expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
    settled(page)
    said = re.compile(r"the quoted [\d,]+ replicas? (still )?meets? the objectives")
    expect(page.get_by_text(said)).to_have_count(0)
    page.get_by_role("button", name="Find each option's speed margin").click()
    page.get_by_text(said).first.wait_for(timeout=WAIT_MS)
    expect(
        page.get_by_text(
            re.compile(r"median throughput error on published runs( priced on the roofline)? \([\d.]+%\)")
        ).first
    ).to_be_visible()
    settled(page)
    page.get_by_role("heading", name="Export the quote").scroll_into_view_if_needed()
    button = page.locator("[data-testid=stDownloadButton]").get_by_role("button", name="Markdown", exact=True).first
    document = download(page, button).path().read_text(encoding="utf-8")
    assert "How much slower than estimated each option may be" in document
    assert re.search(r"\| \d+(\.\d)?% \|", document), "each option's margin"
