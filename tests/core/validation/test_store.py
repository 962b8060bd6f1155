"""The SQLite store: round trip, versioned schema, transactions that leave no half-written row."""

from __future__ import annotations

import sqlite3

import pytest
from alembic.script import ScriptDirectory

from planner.store import text
from planner.store.migrate import HEAD, alembic_config
from planner.validation import store
from planner.validation.store import StoreError, list_measurements, load_measurement, save_measurement


def test_round_trip_and_newest_first(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_measurement("a", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t1", "d1", '{"x": 1}', path=path)
    save_measurement("b", "2026-02-01T00:00:00Z", "cpu", "t2", "d2", '{"x": 2}', path=path)
    assert [m.id for m in list_measurements(path=path)] == ["b", "a"]
    assert load_measurement("a", path=path) == {"x": 1}
    assert [r["x"] for r in store.load_all_measurements(path=path)] == [2, 1]


def test_replacing_an_id_keeps_one_row(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_measurement("a", "2026-01-01", "g", "t", "d", '{"v": 1}', path=path)
    save_measurement("a", "2026-01-01", "g", "t", "d", '{"v": 2}', path=path)
    assert len(list_measurements(path=path)) == 1 and load_measurement("a", path=path) == {"v": 2}


def test_env_var_points_the_store_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setenv(store.STORE_ENV, str(tmp_path / "env.sqlite3"))
    save_measurement("e", "2026-01-01", "g", "t", "d", "{}")
    assert (tmp_path / "env.sqlite3").exists() and [m.id for m in list_measurements()] == ["e"]


def test_the_schema_revision_is_recorded_once_at_alembics_head(tmp_path):
    path = tmp_path / "s.sqlite3"
    for n in range(3):
        save_measurement(f"r{n}", "2026", "g", "t", "d", "{}", path=path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
    conn.close()
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD


def test_text_that_is_not_json_is_refused_before_writing(tmp_path):
    path = tmp_path / "s.sqlite3"
    with pytest.raises(ValueError):
        save_measurement("bad", "2026", "g", "t", "d", "{not json", path=path)
    assert list_measurements(path=path) == []


def test_a_failed_transaction_leaves_the_previous_state(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite3"
    save_measurement("keep", "2026", "g", "t", "d", "{}", path=path)
    with pytest.raises(RuntimeError), store.transaction(path) as conn:
        conn.execute(text("INSERT INTO measurements VALUES ('half', '2026', 'g', 't', 'd', '{}')"))
        raise RuntimeError("crash in the middle of a write")
    assert [m.id for m in list_measurements(path=path)] == ["keep"]


def test_missing_record_and_broken_file_are_store_errors(tmp_path):
    path = tmp_path / "s.sqlite3"
    with pytest.raises(StoreError):
        load_measurement("nope", path=path)
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError):
        list_measurements(path=broken)


def test_reading_never_creates_a_store(tmp_path):
    path = tmp_path / "never.sqlite3"
    assert list_measurements(path=path) == [] and store.load_all_measurements(path=path) == []
    with pytest.raises(StoreError):
        load_measurement("x", path=path)
    assert not path.exists()
