"""Browser journey: load the worked example from the first screen, visit every page, reload, share the link.

The scenario lives in the link: switching pages keeps it (the sidebar is not reset), a reload shows the same
numbers, and the link opened in a new browser context shows the same KV cache tokens. Screenshots of each
step go to tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import REPO

ARTIFACTS = REPO / "tests" / "artifacts"
PAGES = ["Catalog", "Performance", "Draft Selection", "Fleet & Quote", "Validation", "Sizing"]


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"scenario_journey_{name}.png"), full_page=True)


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid=stMetric]").filter(has_text=label).first
    box.wait_for()
    return box.locator("[data-testid=stMetricValue]").inner_text().strip()


def _sidebar_value(page, label: str) -> str:
    return page.locator("[data-testid=stSidebar]").get_by_label(label, exact=True).input_value()


def _settled(page) -> None:
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=120_000)


def _go(page, title: str) -> None:
    page.locator("[data-testid=stSidebarNav]").get_by_text(title, exact=True).click()
    page.get_by_role("heading", name=title, exact=True).wait_for()
    _settled(page)


@pytest.mark.e2e
def test_worked_example_survives_pages_reload_and_a_new_browser(browser, page, app_url):
    page.goto(app_url)
    page.get_by_role("heading", name="Sizing", exact=True).wait_for()
    page.get_by_text("What this app answers").wait_for()
    page.get_by_role("button", name="70B + 3B on 8x H100").click()
    page.wait_for_url(re.compile(r"d=meta-llama"))
    _settled(page)
    page.get_by_text("Fits:").wait_for()
    _shot(page, "1_example_loaded")
    kv_tokens = _metric(page, "KV cache tokens")
    requests = _metric(page, "Concurrent requests")
    assert requests.replace(",", "").isdigit()
    link = page.url
    assert "len=32768" in link and "Llama-3.2-3B" in link

    for title in PAGES:
        _go(page, title)
        assert page.locator("[data-testid=stException]").count() == 0, title
        assert _sidebar_value(page, "Draft model, head or method") == "meta-llama/Llama-3.2-3B", title
        assert _sidebar_value(page, "Max model length (tokens)") == "32768", title
        assert "len=32768" in page.url, title
        _shot(page, f"2_{title.split()[0].lower()}")
    assert _metric(page, "KV cache tokens") == kv_tokens

    page.reload()
    page.get_by_role("heading", name="Sizing", exact=True).wait_for()
    _settled(page)
    assert _metric(page, "KV cache tokens") == kv_tokens
    assert _metric(page, "Concurrent requests") == requests
    _shot(page, "3_reloaded")

    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        shared = other.new_page()
        shared.set_default_timeout(60_000)
        shared.goto(link)
        shared.get_by_role("heading", name="Sizing", exact=True).wait_for()
        _settled(shared)
        assert _metric(shared, "KV cache tokens") == kv_tokens
        assert _sidebar_value(shared, "Draft model, head or method") == "meta-llama/Llama-3.2-3B"
        _shot(shared, "4_shared_link")
    finally:
        other.close()


@pytest.mark.e2e
def test_a_tampered_link_shows_a_banner_not_a_traceback(page, app_url):
    page.goto(f"{app_url}/?tp=abc&zz=1&n=8x-h100-sxm-80gb")
    page.get_by_text("Parts of this link were not used").wait_for()
    page.get_by_text("Fits:").wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    _shot(page, "5_tampered_link")
