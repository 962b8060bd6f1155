"""Browser journey: size the default scenario, break it (70B on one H100), read the suggestions."""

from __future__ import annotations

import pytest


def _choose(page, label: str, option: str) -> None:
    box = page.get_by_label(label)
    box.click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option).first.click()


@pytest.mark.e2e
def test_sizing_fit_then_not_fit(page, app_url):
    page.goto(app_url)  # Sizing is the default page
    page.get_by_role("heading", name="Sizing", exact=True).wait_for()
    page.get_by_text("Fits:").wait_for()
    page.get_by_text("One GPU's memory by component").wait_for()
    _choose(page, "Node type", "1x-h100-sxm-80gb")
    tp = page.get_by_label("Tensor parallel (target)")
    tp.fill("1")
    tp.press("Enter")
    page.get_by_text("Does not fit:").wait_for()
    page.get_by_text("What would make it fit").wait_for()
    assert page.locator("[data-testid=stDataFrame]").count() >= 2  # suggestions and the component table
