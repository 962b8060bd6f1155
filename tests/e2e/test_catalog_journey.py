"""Browser journey: open the app, search the catalog, import a config.json."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from planner.catalog.lookup import list_models
from tests.conftest import TINY_GPT_NEOX, TINY_GPT_NEOX_PARAMS


@pytest.mark.e2e
def test_catalog_search_and_import(page, app_url, tmp_path):
    page.goto(app_url)
    page.get_by_role("link", name="Catalog").click()
    page.get_by_role("heading", name="Catalog", exact=True).wait_for()
    page.get_by_label("Search models").fill("qwen3")
    page.keyboard.press("Enter")
    models = list_models()
    qwen3 = sum("qwen3" in m.id.lower() or "qwen3" in m.config["model_type"] for m in models)
    page.get_by_text(f"{qwen3} of {len(models)} models.").wait_for()
    page.get_by_role("tab", name="Import config.json").click()
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY_GPT_NEOX))
    page.locator("input[type=file]").set_input_files(str(cfg))
    expect(page.get_by_text(f"{TINY_GPT_NEOX_PARAMS:,} parameters")).to_be_visible()
