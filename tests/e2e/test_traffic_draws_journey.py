"""A solution architect asks how much the quoted counts owe to one draw of the traffic: on Fleet & Quote the button
sizes every option again in the background, the answer replaces the progress bar, and the quote document carries it.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.steps import WAIT_MS, download, settled


@pytest.mark.e2e
def test_the_counts_are_sized_on_other_draws_and_the_document_carries_them(page, app_url):
    page.goto(f"{app_url}/fleet")
    page.get_by_role("heading", name="Fleet & Quote", exact=True).wait_for()
    expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
    settled(page)
    expect(page.get_by_text(re.compile("Sized on 3 draws of the same traffic"))).to_have_count(0)
    page.get_by_role("button", name="Size every option on 3 draws of the traffic").click()
    said = page.get_by_text(re.compile(r"Sized on 3 draws of the same traffic \(400 simulated requests each\)"))
    said.wait_for(timeout=WAIT_MS)
    settled(page)
    page.get_by_role("heading", name="Export the quote").scroll_into_view_if_needed()
    button = page.locator("[data-testid=stDownloadButton]").get_by_role("button", name="Markdown", exact=True).first
    document = download(page, button).path().read_text(encoding="utf-8")
    assert "How much each count owes to one draw of the traffic" in document
    assert re.search(r"\| [\d,]+, [\d,]+, [\d,]+ \|", document), "each option's count in each draw"
