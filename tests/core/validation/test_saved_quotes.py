"""Saved quotes: round trip of the scenario and the quote's JSON, names unique in any case, failed saves change no
row, damaged rows reported."""

from __future__ import annotations

import json
import sqlite3

import pytest

from planner import Scenario
from planner.errors import PlannerError
from planner.validation import StoreError, delete_quote, list_quotes, load_quote, save_quote

QUOTE = {"title": "Fleet quote", "sections": [{"nodes": 3, "usd_per_month": 61234.5}]}
H200 = Scenario(node="8x-h200-sxm-141gb")


def rows(path) -> int:
    """Quotes not deleted (a deleted one stays restorable for 30 days)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM quotes WHERE deleted_at IS NULL").fetchone()[0]
    finally:
        conn.close()


def test_round_trip_of_the_scenario_notes_and_the_quote_json(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_quote(" Q1 ", json.dumps(QUOTE).encode(), H200, notes="renewal", path=path)
    loaded = load_quote("q1", path=path)
    assert loaded.name == "Q1" and loaded.scenario == H200 and loaded.result == QUOTE and loaded.notes == "renewal"
    assert json.loads(loaded.result_json()) == QUOTE
    assert [q.name for q in list_quotes(path=path).quotes] == ["Q1"]


@pytest.mark.parametrize(
    ("name", "result"),
    [("q1", QUOTE), ("Q1", QUOTE), ("", QUOTE), ("x\u0000", QUOTE), ("ok", b"[1]"), ("ok", b"{bad"), ("ok", 3)],
)
def test_a_refused_save_leaves_the_row_count_unchanged(tmp_path, name, result):
    path = tmp_path / "s.sqlite3"
    save_quote("Q1", QUOTE, Scenario(), path=path)
    with pytest.raises(PlannerError):
        save_quote(name, result, Scenario(), path=path)
    assert rows(path) == 1


def test_replace_and_delete(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_quote("Q1", QUOTE, Scenario(), path=path)
    save_quote("q1", {"title": "new"}, H200, replace=True, path=path)
    assert load_quote("Q1", path=path).result == {"title": "new"} and rows(path) == 1
    delete_quote("Q1", path=path)
    with pytest.raises(StoreError, match="no saved quote"):
        delete_quote("Q1", path=path)
    assert rows(path) == 0


def test_a_damaged_row_is_reported_not_fatal(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_quote("good", QUOTE, Scenario(), path=path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO quotes (name, notes, created_at, scenario, json) VALUES ('bad', '', '2026', '{}', 'not json')"
        )
    conn.close()
    listed = list_quotes(path=path)
    assert [q.name for q in listed.quotes] == ["good"] and "'bad' skipped" in listed.problems[0]
