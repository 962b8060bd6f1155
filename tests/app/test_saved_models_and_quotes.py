"""Imported models and quotes saved in the store: the Catalog import names a model by its config (two uploads both
called config.json do not collide), a duplicate config is reported with its saved name, a different config under
a taken name is refused; saved models are in the sidebar after a reload and on the Saved page (delete after
confirming); the Fleet page saves a quote, the Saved page lists it, downloads it in every format and deletes it."""

from __future__ import annotations

import json
import sqlite3

import pytest

from planner import Scenario
from planner.validation import list_custom_models, list_quotes, save_custom_model, save_quote
from tests.app.conftest import page

TINY = {
    "_name_or_path": "acme/tiny-falcon",
    "model_type": "falcon",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "vocab_size": 500,
}
OTHER = {**TINY, "_name_or_path": "acme/other-falcon", "num_hidden_layers": 3}


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PLANNER_STORE_PATH", str(path))
    return path


def rows(path, table: str) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table} WHERE deleted_at IS NULL").fetchone()[0]
    finally:
        conn.close()


def _upload(at, config: dict, name: str | None = None):
    at.file_uploader(key="catalog_upload").set_value(("config.json", json.dumps(config).encode(), "application/json"))
    at.run()
    if name is not None:
        at.text_input(key="catalog_import_name").input(name).run()
    return at


def _table(at, column: str):
    """The last table on the page with ``column`` (the quotes come after the scenarios and the models)."""
    return [d.value for d in at.dataframe if column in d.value.columns][-1]


def _messages(at) -> str:
    return " | ".join(m.value for m in [*at.success, *at.info, *at.error])


def test_two_config_json_uploads_are_saved_under_their_own_names_and_selectable(store):
    at = _upload(page("catalog.py").run(), TINY)
    at.button(key="catalog_use_import").click().run()
    assert not at.exception and "Saved “acme/tiny-falcon”" in _messages(at)
    at = _upload(at, OTHER)
    at.button(key="catalog_use_import").click().run()
    assert "Saved “acme/other-falcon”" in _messages(at)
    assert [m.name for m in list_custom_models().models] == ["acme/other-falcon", "acme/tiny-falcon"]
    options = at.sidebar.selectbox(key="scenario_draft").options
    assert "acme/tiny-falcon" in options and "acme/other-falcon" in options and "config.json" not in options


def test_a_duplicate_config_is_reported_with_its_saved_name_and_not_saved_again(store):
    save_custom_model(TINY, "My falcon")
    at = _upload(page("catalog.py").run(), dict(reversed(list(TINY.items()))), "another name")
    assert not at.exception and "already saved as “My falcon”" in _messages(at)
    assert at.button(key="catalog_use_import").disabled and rows(store, "custom_models") == 1


def test_a_different_config_under_a_taken_name_is_refused_in_any_case(store):
    save_custom_model(TINY, "My falcon")
    at = _upload(page("catalog.py").run(), OTHER, "MY FALCON")
    at.button(key="catalog_use_import").click().run()
    assert not at.exception and "already named 'MY FALCON'" in _messages(at)
    assert rows(store, "custom_models") == 1


def test_a_catalog_models_name_is_refused_before_saving(store):
    at = _upload(page("catalog.py").run(), {**TINY, "_name_or_path": "meta-llama/Llama-3.1-8B"})
    assert not at.exception and any("type another name" in e.value for e in at.error)
    assert at.button(key="catalog_use_import").disabled and rows(store, "custom_models") == 0


def test_saved_models_are_in_the_sidebar_after_a_reload_and_deleted_after_confirming(store):
    save_custom_model(TINY)
    at = page("saved.py").run()  # a new session: what a reload opens
    assert not at.exception
    assert "acme/tiny-falcon" in at.sidebar.selectbox(key="scenario_target").options
    assert _table(at, "Layers")["Name"].tolist() == ["acme/tiny-falcon"]
    at.button(key="saved_model_delete").click().run()
    assert any("restore it for 30 days" in w.value for w in at.warning) and rows(store, "custom_models") == 1
    at.button(key="saved_confirm_delete_model_yes").click().run()
    assert not at.exception and rows(store, "custom_models") == 0
    assert "acme/tiny-falcon" not in at.sidebar.selectbox(key="scenario_target").options


def test_a_link_to_a_saved_model_opens_in_a_new_session(store):
    save_custom_model(TINY)
    at = page("sizing.py")
    at.query_params["d"] = "acme/tiny-falcon"
    at.run()
    assert not at.exception and at.sidebar.selectbox(key="scenario_draft").value == "acme/tiny-falcon"


def test_the_fleet_page_saves_a_quote_and_the_saved_page_lists_downloads_and_deletes_it(store):
    at = page("fleet.py").run()
    assert not at.exception
    at.text_input(key="quote_save_name").input("Q1 renewal").run()
    at.text_area(key="quote_save_notes").input("for the customer").run()
    at.button(key="quote_save").click().run()
    assert not at.exception and any("Saved the quote" in s.value for s in at.success)
    saved = list_quotes().quotes
    assert [q.name for q in saved] == ["Q1 renewal"] and saved[0].result and saved[0].notes == "for the customer"
    at.text_input(key="quote_save_name").input("q1 RENEWAL").run()
    at.button(key="quote_save").click().run()
    assert any("already named" in e.value for e in at.error) and rows(store, "quotes") == 1
    at.switch_page("ui/saved.py").run()
    assert not at.exception
    assert _table(at, "Target")["Name"].tolist() == ["Q1 renewal"]
    assert at.get("download_button")
    at.button(key="saved_quote_delete").click().run()
    assert rows(store, "quotes") == 1
    at.button(key="saved_confirm_delete_quote_no").click().run()
    assert rows(store, "quotes") == 1
    at.button(key="saved_quote_delete").click().run()
    at.button(key="saved_confirm_delete_quote_yes").click().run()
    assert not at.exception and rows(store, "quotes") == 0


def test_a_saved_quote_is_listed_with_a_download_per_format(store):
    save_quote("Q2", {"title": "Fleet quote", "nodes": 2}, Scenario())
    at = page("saved.py").run()
    assert not at.exception and _table(at, "Target")["Name"].tolist() == ["Q2"]
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"HTML", "XLSX", "Markdown", "JSON"} <= set(labels)  # each built from the saved document on click
