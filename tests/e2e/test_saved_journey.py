"""Browser journey: save the sidebar's scenario, reload, find it on the Saved page, save a second one, compare
the two side by side. Screenshots of each step go to tests/artifacts/ (ignored by git)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import REPO
from tests.e2e.steps import WAIT_MS, choose, settled

ARTIFACTS = REPO / "tests" / "artifacts"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"saved_journey_{name}.png"), full_page=True)


def _save(page, name: str, notes: str) -> None:
    box = page.get_by_label("Name", exact=True)
    box.fill(name)
    box.press("Enter")
    settled(page)
    page.get_by_label("Notes", exact=True).fill(notes)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text(f"Saved “{name}”.")).to_be_visible(timeout=WAIT_MS)
    settled(page)


@pytest.mark.e2e
def test_save_reload_find_save_another_and_compare(page, app_url):
    page.goto(f"{app_url}/saved")
    expect(page.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
    settled(page)
    _save(page, "Journey H100", "the default node")
    _shot(page, "1_saved_first")

    page.reload()
    expect(page.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
    settled(page)
    picker = page.get_by_label("Saved scenario", exact=True)
    expect(picker).to_have_value("Journey H100", timeout=WAIT_MS)
    _shot(page, "2_found_after_reload")

    choose(page, "Node type", "8x-h200-sxm-141gb")
    _save(page, "Journey H200", "same model, bigger memory")
    expect(page.get_by_label("A", exact=True)).to_have_value("Journey H100", timeout=WAIT_MS)
    expect(page.get_by_label("B", exact=True)).to_have_value("Journey H200", timeout=WAIT_MS)
    expect(page.get_by_text("Inputs that differ")).to_be_visible(timeout=WAIT_MS)
    # the comparison is recomputed after the save: on a busy machine that takes longer than expect's 5 s default
    expect(page.get_by_text("None: the two scenarios have the same inputs.")).to_have_count(0, timeout=WAIT_MS)
    assert page.locator("[data-testid=stException]").count() == 0
    _shot(page, "3_compared")
