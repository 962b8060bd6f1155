"""Browser journey: save the sidebar's scenario, reload, find it on the Saved page, save a second one, compare
the two side by side. Screenshots of each step go to tests/artifacts/ (ignored by git)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import REPO

ARTIFACTS = REPO / "tests" / "artifacts"
#: Generous: the machine may be running other suites; every wait is on something visible, never a sleep.
WAIT_MS = 120_000


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"saved_journey_{name}.png"), full_page=True)


def _settled(page) -> None:
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=WAIT_MS)


def _save(page, name: str, notes: str) -> None:
    box = page.get_by_label("Name", exact=True)
    box.fill(name)
    box.press("Enter")
    _settled(page)
    page.get_by_label("Notes", exact=True).fill(notes)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text(f"Saved “{name}”.")).to_be_visible(timeout=WAIT_MS)
    _settled(page)


def _choose(page, label: str, option: str) -> None:
    box = page.locator("[data-testid=stSidebar]").get_by_label(label)
    box.click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option).first.click()
    _settled(page)


@pytest.mark.e2e
def test_save_reload_find_save_another_and_compare(page, app_url):
    page.goto(f"{app_url}/saved")
    expect(page.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
    _settled(page)
    _save(page, "Journey H100", "the default node")
    _shot(page, "1_saved_first")

    page.reload()
    expect(page.get_by_role("heading", name="Saved", exact=True)).to_be_visible(timeout=WAIT_MS)
    _settled(page)
    picker = page.get_by_label("Saved scenario", exact=True)
    expect(picker).to_have_value("Journey H100", timeout=WAIT_MS)
    _shot(page, "2_found_after_reload")

    _choose(page, "Node type", "8x-h200-sxm-141gb")
    _save(page, "Journey H200", "same model, bigger memory")
    expect(page.get_by_label("A", exact=True)).to_have_value("Journey H100", timeout=WAIT_MS)
    expect(page.get_by_label("B", exact=True)).to_have_value("Journey H200", timeout=WAIT_MS)
    expect(page.get_by_text("Inputs that differ")).to_be_visible(timeout=WAIT_MS)
    # the comparison is recomputed after the save: on a busy machine that takes longer than expect's 5 s default
    expect(page.get_by_text("None: the two scenarios have the same inputs.")).to_have_count(0, timeout=WAIT_MS)
    assert page.locator("[data-testid=stException]").count() == 0
    _shot(page, "3_compared")
