"""Browser journey: a quote saved on Fleet & Quote with its customer reopens from the Saved page into Fleet & Quote
and is exported again as a PDF that still names the customer. Screenshots go to tests/artifacts/ (ignored by git)."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from planner.scenario import Scenario
from tests.core.reports.pdf_pages import page_texts
from tests.e2e.conftest import REPO
from tests.e2e.steps import choose_in, download, settled

ARTIFACTS = REPO / "tests" / "artifacts"
#: Generous: the machine may be running other suites; every wait is on something visible, never a sleep.
WAIT_MS = 300_000
CUSTOMER = "Northwind Traders"
PREPARED_BY = "Journey Architect"
#: A small quote (an 8B model on one node type) so that the journey spends its time in the browser.
QUOTE = Scenario(
    target="meta-llama/Llama-3.1-8B",
    draft="meta-llama/Llama-3.2-1B",
    fleet_requests_per_s=5.0,
    fleet_nodes=("1x-h100-sxm-80gb",),
)


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"saved_quote_journey_{name}.png"), full_page=True)


def _settled(page) -> None:
    settled(page, WAIT_MS)


def _plan_shown(page) -> None:
    """The Fleet page has drawn its plan (computed in the background under a progress bar)."""
    expect(page.get_by_role("heading", name="Export the quote")).to_be_visible(timeout=WAIT_MS)
    _settled(page)


def _type(page, label: str, text: str) -> None:
    box = page.locator("[data-testid=stMain]").get_by_label(label, exact=True)
    box.fill(text)
    box.press("Enter" if box.evaluate("e => e.tagName") == "INPUT" else "Control+Enter")
    _settled(page)


def _open_expander(page, title: str) -> None:
    page.locator("[data-testid=stExpander]").filter(has_text=title).locator("summary").first.click()


@pytest.mark.e2e
def test_a_saved_quote_reopens_and_exports_again_as_pdf_with_its_customer(page, app_url):
    name = f"Journey quote {time.time_ns()}"  # unique in whatever store the server uses
    page.goto(f"{app_url}/fleet?{urlencode(QUOTE.to_query())}")
    expect(page.get_by_role("heading", name="Fleet & Quote", exact=True)).to_be_visible(timeout=WAIT_MS)
    _plan_shown(page)
    _open_expander(page, "Document details")
    _type(page, "Customer", CUSTOMER)
    _type(page, "Prepared by", PREPARED_BY)
    _open_expander(page, "Save this quote")
    _type(page, "Quote name", name)
    page.get_by_role("button", name="Save this quote", exact=True).click()
    expect(page.get_by_text(f"Saved the quote as “{name}”")).to_be_visible(timeout=WAIT_MS)
    _shot(page, "1_saved_on_fleet")

    page.goto(f"{app_url}/saved")  # a new session: the quote comes back from the store
    expect(page.get_by_role("heading", name="Saved quotes")).to_be_visible(timeout=WAIT_MS)
    _settled(page)
    choose_in(page, page.get_by_label("Saved quote", exact=True), name, WAIT_MS)
    expect(page.locator("[data-testid=stMain]").get_by_text(CUSTOMER).first).to_be_visible(timeout=WAIT_MS)
    _shot(page, "2_found_on_saved")
    page.get_by_role("button", name="Open in Fleet & Quote", exact=True).click()

    expect(page.get_by_role("heading", name="Fleet & Quote", exact=True)).to_be_visible(timeout=WAIT_MS)
    _plan_shown(page)
    _open_expander(page, "Document details")
    main = page.locator("[data-testid=stMain]")
    expect(main.get_by_label("Customer", exact=True)).to_have_value(CUSTOMER, timeout=WAIT_MS)
    expect(main.get_by_label("Prepared by", exact=True)).to_have_value(PREPARED_BY, timeout=WAIT_MS)
    _shot(page, "3_reopened_in_fleet")

    page.get_by_role("heading", name="Export the quote").scroll_into_view_if_needed()
    button = page.locator("[data-testid=stDownloadButton]").get_by_role("button", name="PDF", exact=True).first
    pdf = download(page, button, 2 * WAIT_MS, tries=2).path().read_bytes()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "saved_quote_journey_reexported.pdf").write_bytes(pdf)
    assert pdf[:5] == b"%PDF-"
    text = " ".join(" ".join(page_texts(pdf)).split())
    assert CUSTOMER in text and PREPARED_BY in text
