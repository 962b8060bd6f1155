"""Saved scenarios: round trip, names unique regardless of case, failed saves change nothing, concurrent saves lose
nothing, the version-1 store upgrades with its measurements, and the comparison's results are the planner's."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import Scenario, estimate_speed, plan_memory
from planner.errors import PlannerError
from planner.store.migrate import HEAD
from planner.units import bytes_to_gib
from planner.validation import (
    StoreError,
    compare_scenarios,
    delete_scenario,
    duplicate_scenario,
    list_measurements,
    list_scenarios,
    load_measurement,
    load_scenario,
    save_scenario,
)
from planner.validation import saved as saved_module
from tests.legacy_store import alembic_revision, write_legacy_store

H200 = Scenario(node="8x-h200-sxm-141gb", max_model_len=32768)


def count(path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM scenarios").fetchone()[0]
    finally:
        conn.close()


def test_round_trip_keeps_the_typed_scenario_and_notes(tmp_path):
    path = tmp_path / "s.sqlite3"
    saved = save_scenario("  H200 32k ", H200, notes="for the customer\nsecond line", path=path)
    assert saved.name == "H200 32k"
    loaded = load_scenario("h200 32K", path=path)
    assert loaded.scenario == H200 and loaded.notes == "for the customer\nsecond line"
    assert loaded.scenario.to_query() == H200.to_query()
    assert [s.name for s in list_scenarios(path=path).scenarios] == ["H200 32k"]


def test_a_taken_name_is_refused_in_any_case_and_changes_nothing(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("Prod", Scenario(), path=path)
    with pytest.raises(StoreError, match="already named") as err:
        save_scenario("PROD", H200, path=path)
    assert err.value.field == "name"
    assert count(path) == 1 and load_scenario("prod", path=path).scenario == Scenario()
    save_scenario("prod", H200, notes="new", replace=True, path=path)
    assert count(path) == 1 and load_scenario("Prod", path=path).scenario == H200


@pytest.mark.parametrize(
    ("name", "notes"),
    [("", ""), ("   ", ""), ("x" * 121, ""), ("tab\there", ""), (None, ""), ("ok", "n" * 4001), ("ok", 5)],
)
def test_a_failed_save_never_changes_the_row_count(tmp_path, name, notes):
    path = tmp_path / "s.sqlite3"
    save_scenario("kept", Scenario(), path=path)
    with pytest.raises(PlannerError):
        save_scenario(name, Scenario(), notes=notes, path=path)
    assert count(path) == 1


@settings(max_examples=60, deadline=None)
@given(name=st.text(max_size=130))
def test_any_name_is_saved_once_or_refused(tmp_path_factory, name):
    path = tmp_path_factory.mktemp("p") / "s.sqlite3"
    try:
        saved = save_scenario(name, Scenario(), path=path)
    except PlannerError as exc:
        assert exc.field == "name" and count(path) == 0
    else:
        assert count(path) == 1 and load_scenario(saved.name, path=path).scenario == Scenario()


def test_duplicate_takes_the_first_free_copy_name_or_the_given_one(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("base", H200, notes="n", path=path)
    assert duplicate_scenario("base", path=path).name == "base (copy)"
    assert duplicate_scenario("base", path=path).name == "base (copy 2)"
    assert duplicate_scenario("base", "mine", path=path).scenario == H200
    with pytest.raises(StoreError, match="already named"):
        duplicate_scenario("base", "MINE", path=path)
    with pytest.raises(StoreError, match="no saved scenario"):
        duplicate_scenario("absent", path=path)
    assert count(path) == 4


def test_delete_removes_one_and_refuses_an_unknown_name(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("a", Scenario(), path=path)
    save_scenario("b", H200, path=path)
    delete_scenario("A", path=path)
    assert [s.name for s in list_scenarios(path=path).scenarios] == ["b"]
    with pytest.raises(StoreError, match="no saved scenario"):
        delete_scenario("a", path=path)
    with pytest.raises(StoreError, match="no saved scenario"):
        load_scenario("a", path=path)


def test_reading_never_creates_the_store(tmp_path):
    path = tmp_path / "none.sqlite3"
    assert list_scenarios(path=path).scenarios == []
    with pytest.raises(StoreError):
        load_scenario("x", path=path)
    with pytest.raises(StoreError):
        delete_scenario("x", path=path)
    assert not path.exists()


def test_a_row_that_is_no_longer_a_scenario_is_skipped_and_reported(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("good", Scenario(), path=path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO scenarios (name, notes, created_at, json) VALUES ('bad', '', '2026', '{\"tp\": \"many\"}')"
        )
        conn.execute(
            "INSERT INTO scenarios (name, notes, created_at, json) VALUES ('gone', '', '2026', '{\"old_field\": 1}')"
        )
    conn.close()
    listed = list_scenarios(path=path)
    assert [s.name for s in listed.scenarios] == ["good"]
    assert len(listed.problems) == 2 and "'bad' skipped" in listed.problems[0]
    with pytest.raises(StoreError, match="no longer reads"):
        load_scenario("bad", path=path)


def test_a_version_one_store_upgrades_and_keeps_its_measurements(tmp_path):
    path = tmp_path / "s.sqlite3"
    conn = write_legacy_store(path, version=1)
    conn.execute("INSERT INTO measurements VALUES ('m1', '2026-01-01', 'g', 't', 'd', '{\"v\": 1}')")
    conn.commit()
    conn.close()
    save_scenario("s", Scenario(), path=path)
    assert [m.id for m in list_measurements(path=path)] == ["m1"] and load_measurement("m1", path=path) == {"v": 1}
    assert alembic_revision(path) == HEAD


def _save_many(args: tuple[str, str, int]) -> int:
    path, prefix, n = args
    for i in range(n):
        save_scenario(f"{prefix}-{i}", Scenario(tp=1 + i % 8), notes=prefix, path=path)
    return n


def test_two_processes_saving_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "s.sqlite3")
    jobs = [(path, "p1", 25), (path, "p2", 25)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_save_many, jobs) == [25, 25]
    names = {s.name for s in list_scenarios(path=path).scenarios}
    assert names == {f"{p}-{i}" for p in ("p1", "p2") for i in range(25)}


def test_comparison_marks_differing_inputs_and_computes_results_through_the_planner(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("h100", Scenario(max_model_len=32768), path=path)
    save_scenario("h200", H200, path=path)
    cmp = compare_scenarios("h100", "h200", path=path)
    assert [r.field for r in cmp.inputs] == list(Scenario.model_fields)
    assert [r.label for r in cmp.inputs if r.differs] == ["node type"]
    results = {r.label: (r.a, r.b) for r in cmp.results}
    plan = plan_memory(H200.deployment(), with_suggestions=False)
    assert results["KV cache tokens"][1] == f"{plan.kv_cache_tokens:,}"
    assert results["weights, GiB (per GPU)"][1] == f"{bytes_to_gib(plan.per_gpu.weights_bytes):.1f}"
    speed = estimate_speed(H200.deployment(), saved_module._workload(H200, H200.deployment()))
    assert results["speedup with the draft"][1] == f"{speed.speedup:.2f}x"
    assert int(results["KV cache tokens"][1].replace(",", "")) > int(results["KV cache tokens"][0].replace(",", ""))
    assert cmp.problems_a == cmp.problems_b == []


def test_comparison_says_what_failed_and_handles_no_draft(tmp_path):
    path = tmp_path / "s.sqlite3"
    save_scenario("alone", Scenario(draft=None), path=path)
    save_scenario("too long", Scenario(max_model_len=1_048_576), path=path)
    cmp = compare_scenarios("alone", "too long", path=path)
    results = {r.label: (r.a, r.b) for r in cmp.results}
    assert results["speedup with the draft"][0] == "no draft"
    assert results["fits in GPU memory"][1] == "-" and "context window" in cmp.problems_b[0]
    assert cmp.problems_a == []
