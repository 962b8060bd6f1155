"""The store suite on both back ends: a SQLite file and a PostgreSQL server (``store_at`` runs each test on both).

Every kind of row round-trips, names are unique regardless of case, a failed transaction leaves the previous
state, damaged rows are listed and deleted, and two processes saving 200 scenarios each at once lose nothing.
"""

from __future__ import annotations

import multiprocessing

import pytest

from planner import Scenario
from planner.store import database_url, text, transaction
from planner.store.engine import _engine
from planner.store.migrate import HEAD, current_revision
from planner.validation import (
    Actor,
    StoreError,
    delete_custom_model,
    delete_quote,
    delete_scenario,
    delete_unreadable_row,
    duplicate_scenario,
    find_custom_model,
    list_custom_models,
    list_measurements,
    list_quotes,
    list_scenarios,
    load_measurement,
    load_quote,
    load_scenario,
    save_custom_model,
    save_measurement,
    save_quote,
    save_scenario,
    unreadable_rows,
)

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


def test_the_schema_is_at_the_newest_revision(store_at):
    save_scenario("a", Scenario(), path=store_at)
    assert current_revision(_engine(database_url(store_at))) == HEAD


def test_measurements_round_trip_replace_and_list_newest_first(store_at):
    save_measurement("a", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"v": 1}', path=store_at)
    save_measurement("b", "2026-02-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"v": 2}', path=store_at)
    save_measurement("a", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"v": 3}', path=store_at)
    assert [m.id for m in list_measurements(path=store_at)] == ["b", "a"]
    assert load_measurement("a", path=store_at) == {"v": 3}


def test_scenarios_are_unique_regardless_of_case_and_duplicate_and_delete(store_at):
    save_scenario("Prod 70B", Scenario(tp=4), "notes", path=store_at)
    with pytest.raises(StoreError, match="already named"):
        save_scenario("prod 70b", Scenario(), path=store_at)
    save_scenario("PROD 70B", Scenario(tp=2), path=store_at, replace=True)
    assert [s.name for s in list_scenarios(path=store_at).scenarios] == ["PROD 70B"]
    assert load_scenario("prod 70B", path=store_at).scenario.tp == 2
    copy = duplicate_scenario("prod 70b", path=store_at)
    assert copy.name == "PROD 70B (copy)"
    delete_scenario("prod 70b (COPY)", path=store_at)
    assert [s.name for s in list_scenarios(path=store_at).scenarios] == ["PROD 70B"]


def test_models_are_one_row_per_config_and_quotes_round_trip(store_at):
    assert save_custom_model(TINY, path=store_at).duplicate is False
    again = save_custom_model(dict(TINY), "other name", path=store_at)
    assert again.duplicate and again.name == "acme/tiny-mistral"
    assert find_custom_model(TINY, path=store_at) == "acme/tiny-mistral"
    assert [m.name for m in list_custom_models(path=store_at).models] == ["acme/tiny-mistral"]
    delete_custom_model("ACME/tiny-mistral", path=store_at)
    save_quote("Q1", {"title": "quote", "customer": "Acme", "nodes": 3}, Scenario(), "for Acme", path=store_at)
    quote = load_quote("q1", path=store_at)
    assert (quote.result["nodes"], quote.customer, quote.notes) == (3, "Acme", "for Acme")
    delete_quote("Q1", path=store_at)
    assert list_quotes(path=store_at).quotes == []


def test_a_failed_transaction_leaves_the_previous_state(store_at):
    save_scenario("keep", Scenario(), path=store_at)
    with pytest.raises(RuntimeError), transaction(store_at) as conn:
        conn.execute(text("INSERT INTO scenarios (name, notes, created_at, json) VALUES ('half', '', 't', '{}')"))
        raise RuntimeError("crash in the middle of a write")
    assert [s.name for s in list_scenarios(path=store_at).scenarios] == ["keep"]


def test_damaged_rows_are_listed_not_fatal_and_deleted(store_at):
    save_scenario("good", Scenario(), path=store_at)
    with transaction(store_at) as conn:
        conn.execute(text("INSERT INTO scenarios (name, notes, created_at, json) VALUES ('bad', '', 't', '[1]')"))
        conn.execute(
            text(
                "INSERT INTO custom_models (name, config_sha256, created_at, json) "
                "VALUES ('broken', 'x', 't', '{\"model_type\": 7}')"
            )
        )
    listed = list_scenarios(path=store_at)
    assert [s.name for s in listed.scenarios] == ["good"] and len(listed.problems) == 1
    assert {(r.kind, r.key) for r in unreadable_rows(path=store_at)} == {("scenario", "bad"), ("model", "broken")}
    delete_unreadable_row("model", "broken", path=store_at)
    assert [(r.kind, r.key) for r in unreadable_rows(path=store_at)] == [("scenario", "bad")]


def _save_many(args: tuple[str, str, int]) -> int:
    """``n`` saves by one person (named ``prefix``), shared with the team, each with its audit row."""
    where, prefix, n = args
    actor = Actor(id=prefix, name=prefix)
    for i in range(n):
        save_scenario(f"{prefix}-{i}", Scenario(tp=1 + i % 8), notes=prefix, path=where, actor=actor, visibility="team")
    return n


@pytest.mark.slow
def test_two_processes_saving_200_each_at_once_lose_nothing(store_at):
    jobs = [(store_at, "p1", 200), (store_at, "p2", 200)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_save_many, jobs) == [200, 200]
    names = {s.name for s in list_scenarios(path=store_at).scenarios}
    assert names == {f"{p}-{i}" for p in ("p1", "p2") for i in range(200)}
    with transaction(store_at) as conn:
        audited = conn.execute(text("SELECT COUNT(*) FROM audit_trail WHERE action = 'created'")).scalar()
    assert audited == 400
