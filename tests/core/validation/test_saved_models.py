"""Imported custom models in the store: named by the config (never the file), duplicates found by content,
a different config under a taken name refused in any case, failed saves change no row, v2 stores upgrade."""

from __future__ import annotations

import json
import sqlite3

import pytest

from planner import Scenario
from planner.errors import PlannerError
from planner.store.migrate import HEAD
from planner.validation import (
    StoreError,
    custom_model_specs,
    delete_custom_model,
    list_custom_models,
    list_scenarios,
    save_custom_model,
)
from tests.legacy_store import alembic_revision, write_legacy_store

TINY = {
    "_name_or_path": "acme/tiny-mistral",
    "model_type": "mistral",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 100,
}
OTHER = {**TINY, "_name_or_path": "acme/other", "num_hidden_layers": 4}


def rows(path, table: str = "custom_models") -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def test_two_uploads_named_config_json_are_two_models_named_by_their_configs(tmp_path):
    path = tmp_path / "s.sqlite3"
    first = save_custom_model(json.dumps(TINY).encode(), path=path)
    second = save_custom_model(json.dumps(OTHER).encode(), path=path)
    assert (first.name, second.name) == ("acme/tiny-mistral", "acme/other")
    assert not first.duplicate and not second.duplicate and rows(path) == 2
    specs = {s.id: s for s in custom_model_specs(path=path)}
    assert specs["acme/other"].architecture.num_layers == 4 and specs["acme/tiny-mistral"].origin == "imported"


def test_the_same_config_again_is_a_duplicate_reported_with_the_saved_name(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_custom_model(TINY, "My draft", path=path)
    reordered = dict(reversed(list(TINY.items())))
    again = save_custom_model(json.dumps(reordered, indent=4).encode(), "something else", path=path)
    assert again.duplicate and again.name == "My draft" and again.requested == "something else"
    assert rows(path) == 1


def test_a_different_config_under_a_taken_name_is_refused_in_any_case(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_custom_model(TINY, "My draft", path=path)
    with pytest.raises(StoreError, match="different saved model is already named") as err:
        save_custom_model(OTHER, "MY DRAFT", path=path)
    assert err.value.field == "model_name" and rows(path) == 1


@pytest.mark.parametrize(
    ("source", "name"),
    [
        (TINY, "meta-llama/Llama-3.1-8B"),
        (TINY, "a\u0007b"),
        ({**TINY, "num_hidden_layers": -1}, None),
        (b"{not json", None),
        (b"[1, 2]", None),
    ],
)
def test_a_refused_save_leaves_the_row_count_unchanged(tmp_path, source, name):
    path = tmp_path / "s.sqlite3"
    save_custom_model(OTHER, path=path)
    before = rows(path)
    with pytest.raises(PlannerError):
        save_custom_model(source, name, path=path)
    assert rows(path) == before


def test_delete_by_name_in_any_case_and_refuse_an_unknown_one(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_custom_model(TINY, path=path)
    delete_custom_model("ACME/Tiny-Mistral", path=path)
    assert list_custom_models(path=path).models == []
    with pytest.raises(StoreError, match="no saved model"):
        delete_custom_model("acme/tiny-mistral", path=path)


def test_a_damaged_row_is_reported_not_fatal(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_custom_model(TINY, path=path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO custom_models (name, config_sha256, created_at, json) VALUES ('bad', 'x', '2026', 'not json')"
        )
    conn.close()
    listed = list_custom_models(path=path)
    assert [m.name for m in listed.models] == ["acme/tiny-mistral"] and "'bad' skipped" in listed.problems[0]
    assert [s.id for s in custom_model_specs(path=path)] == ["acme/tiny-mistral"]


def test_a_version_two_store_upgrades_keeping_its_scenarios_in_wal_mode(tmp_path):
    path = tmp_path / "s.sqlite3"
    conn = write_legacy_store(path, version=2)
    row = ("kept", "n", "2026-01-01T00:00:00Z", Scenario().model_dump_json())
    conn.execute("INSERT INTO scenarios (name, notes, created_at, json) VALUES (?, ?, ?, ?)", row)
    conn.commit()
    conn.close()
    save_custom_model(TINY, path=path)  # opening the store migrates it
    assert alembic_revision(path) == HEAD
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    assert [s.name for s in list_scenarios(path=path).scenarios] == ["kept"] and rows(path) == 1
