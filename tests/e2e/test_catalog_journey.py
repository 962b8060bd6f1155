"""Browser journey: open the app, search the catalog, import a config.json."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from planner.catalog.lookup import list_models


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
    cfg.write_text(
        json.dumps(
            {
                "model_type": "gpt_neox",
                "num_hidden_layers": 2,
                "hidden_size": 64,
                "num_attention_heads": 4,
                "intermediate_size": 256,
                "vocab_size": 1000,
            }
        )
    )
    page.locator("input[type=file]").set_input_files(str(cfg))
    expect(page.get_by_text("228,096 parameters")).to_be_visible()
