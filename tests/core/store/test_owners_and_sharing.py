"""Owners and sharing on both back ends (``store_at``): a store at revision 0001 upgrades with every row intact,
people see their own and the team's items only, only the owner changes or deletes, a stale edit is refused
(also when many writers race), deletion is recoverable for 30 days, and every change leaves an audit row."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import create_engine

from planner import Scenario
from planner.store import database_url, forget_engines, text, transaction
from planner.store.migrate import alembic_config
from planner.validation import (
    LOCAL_ACTOR,
    Actor,
    EditConflictError,
    NotOwnerError,
    StoreError,
    audit_trail,
    delete_quote,
    delete_scenario,
    list_custom_models,
    list_measurements,
    list_quotes,
    list_recently_deleted,
    list_scenarios,
    load_quote,
    load_scenario,
    record_export,
    restore_deleted,
    save_custom_model,
    save_quote,
    save_scenario,
    set_visibility,
    unreadable_rows,
)
from tests.core.store.test_store_backends import TINY

ADA = Actor(id="oidc|ada", name="Ada", email="ada@example.com")
BOB = Actor(id="oidc|bob", name="Bob")
QUOTE = {"title": "quote", "customer": "Acme", "nodes": 3}


def _store_at_revision_0001(where: str) -> None:
    """A store written by the schema before owners (Alembic revision 0001) with one row of every kind."""
    engine = create_engine(database_url(where))
    with engine.begin() as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        rows = {
            "measurements": ("m1", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"v": 1}'),
            "scenarios": ("Prod 70B", "baseline", "2026-01-02T00:00:00Z", Scenario(tp=4).model_dump_json()),
            "quotes": ("Q1 Acme", "for Acme", "2026-01-03T00:00:00Z", Scenario().model_dump_json(), '{"nodes": 3}'),
        }
        for table, row in rows.items():
            marks = ", ".join(f":c{i}" for i in range(len(row)))
            conn.execute(text(f"INSERT INTO {table} VALUES ({marks})"), {f"c{i}": v for i, v in enumerate(row)})
        conn.execute(
            text("INSERT INTO scenarios VALUES ('second', '', '2026-01-04T00:00:00Z', :json)"),
            {"json": Scenario(tp=2).model_dump_json()},
        )
    engine.dispose()
    forget_engines()


def test_a_store_at_revision_0001_upgrades_with_every_row_intact(store_at):
    _store_at_revision_0001(store_at)
    scenarios = list_scenarios(path=store_at)  # the first connection migrates to the newest revision
    assert scenarios.problems == []
    assert [(s.name, s.notes, s.created_at, s.scenario.tp) for s in scenarios.scenarios] == [
        ("Prod 70B", "baseline", "2026-01-02T00:00:00Z", 4),
        ("second", "", "2026-01-04T00:00:00Z", 2),
    ]
    for saved in scenarios.scenarios:
        assert (saved.owner_id, saved.visibility, saved.version) == ("local", "team", 1)
        assert saved.changed_at == saved.created_at
    quote = load_quote("q1 acme", path=store_at)
    assert (quote.result, quote.notes, quote.owner_name) == ({"nodes": 3}, "for Acme", "this machine")
    assert [m.id for m in list_measurements(path=store_at)] == ["m1"]
    assert [e.action for e in audit_trail("scenario", "Prod 70B", path=store_at)] == ["created"]
    # shared with the team: once sign-in is configured, a signed-in person still sees the single user's work
    assert [q.name for q in list_quotes(path=store_at, actor=ADA).quotes] == ["Q1 Acme"]
    with pytest.raises(NotOwnerError, match="belongs to this machine"):
        delete_quote("Q1 Acme", path=store_at, actor=ADA)


def test_people_see_their_own_and_the_teams_never_anothers_private(store_at):
    save_quote("Private deal", QUOTE, Scenario(), path=store_at, actor=ADA, visibility="private")
    save_quote("Shared deal", QUOTE, Scenario(), path=store_at, actor=ADA, visibility="team")
    save_scenario("Ada's plan", Scenario(), path=store_at, actor=ADA)  # a signed-in person's default: private
    assert [q.name for q in list_quotes(path=store_at, actor=ADA).quotes] == ["Private deal", "Shared deal"]
    assert [q.name for q in list_quotes(path=store_at, actor=BOB).quotes] == ["Shared deal"]
    assert list_scenarios(path=store_at, actor=BOB).scenarios == []
    # a tampered name, owner or id never reaches the private one
    for attempt in (
        lambda: load_quote("private deal", path=store_at, actor=BOB),
        lambda: load_quote("Private deal", path=store_at, actor=BOB, owner_id=ADA.id),
        lambda: load_scenario("Ada's plan", path=store_at, actor=BOB),
        lambda: audit_trail("quote", load_quote("Private deal", path=store_at, actor=ADA).id, path=store_at, actor=BOB),
        lambda: record_export("quote", "Private deal", "pdf", path=store_at, actor=BOB),
    ):
        with pytest.raises(StoreError, match=r"no saved (quote|scenario)"):
            attempt()
    assert load_quote("shared deal", path=store_at, actor=BOB).owner_name == "Ada"


def test_names_are_unique_per_owner_and_a_teammates_item_is_told_apart_by_its_owner(store_at):
    save_quote("Q1", {"nodes": 1}, Scenario(), path=store_at, actor=ADA, visibility="team")
    with pytest.raises(StoreError, match="already named"):
        save_quote("q1", {"nodes": 9}, Scenario(), path=store_at, actor=ADA)
    save_quote("q1", {"nodes": 2}, Scenario(), path=store_at, actor=BOB, visibility="team")
    listed = list_quotes(path=store_at, actor=BOB).quotes
    assert sorted(q.label_for(BOB) for q in listed) == ["Q1 (Ada)", "q1"]
    assert load_quote("Q1", path=store_at, actor=BOB).result == {"nodes": 2}  # one's own first
    assert load_quote("Q1", path=store_at, actor=BOB, owner_id=ADA.id).result == {"nodes": 1}
    assert load_quote("Q1", path=store_at, actor=ADA).result == {"nodes": 1}


def test_only_the_owner_changes_shares_or_deletes(store_at):
    save_quote("Q1", QUOTE, Scenario(), path=store_at, actor=ADA, visibility="team")
    with pytest.raises(NotOwnerError, match="belongs to Ada"):
        save_quote("Q1", {"nodes": 0}, Scenario(), path=store_at, actor=BOB, replace=True)
    with pytest.raises(NotOwnerError, match="belongs to Ada"):
        delete_quote("Q1", path=store_at, actor=BOB)
    with pytest.raises(NotOwnerError, match="belongs to Ada"):
        set_visibility("quote", "Q1", "private", path=store_at, actor=BOB)
    assert load_quote("Q1", path=store_at, actor=ADA).result == QUOTE


def test_an_edit_of_an_item_changed_since_it_was_opened_is_refused_with_who_and_when(store_at):
    opened = save_scenario("Plan", Scenario(tp=1), path=store_at, actor=ADA)
    newer = save_scenario(
        "Plan", Scenario(tp=2), path=store_at, actor=ADA, replace=True, expected_version=opened.version
    )
    assert newer.version == opened.version + 1
    with pytest.raises(EditConflictError, match=rf"changed by Ada at {newer.changed_at} .*version 1, now 2"):
        save_scenario("Plan", Scenario(tp=8), path=store_at, actor=ADA, replace=True, expected_version=opened.version)
    with pytest.raises(EditConflictError, match="changed by Ada"):
        delete_scenario("Plan", path=store_at, actor=ADA, expected_version=opened.version)
    assert load_scenario("Plan", path=store_at, actor=ADA).scenario.tp == 2


def test_of_many_writers_racing_from_the_same_version_exactly_one_lands(store_at):
    opened = save_scenario("Raced", Scenario(tp=1), path=store_at, actor=ADA)
    outcomes: list[str] = []
    start = threading.Barrier(6)

    def edit(tp: int) -> None:
        start.wait()
        try:
            save_scenario("Raced", Scenario(tp=tp), path=store_at, actor=ADA, replace=True, expected_version=1)
            outcomes.append(f"saved {tp}")
        except EditConflictError:
            outcomes.append("refused")

    threads = [threading.Thread(target=edit, args=(tp,)) for tp in (2, 4, 8, 16, 32, 64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = [o for o in outcomes if o.startswith("saved")]
    assert len(saved) == 1 and outcomes.count("refused") == 5
    final = load_scenario("Raced", path=store_at, actor=ADA)
    assert (final.version, f"saved {final.scenario.tp}") == (opened.version + 1, saved[0])


def test_deletion_is_recoverable_for_30_days_then_purged(store_at):
    save_quote("Q1", QUOTE, Scenario(), path=store_at, actor=ADA)
    delete_quote("Q1", path=store_at, actor=ADA)
    assert list_quotes(path=store_at, actor=ADA).quotes == []
    assert list_recently_deleted(path=store_at, actor=BOB) == []
    (deleted,) = list_recently_deleted("quote", path=store_at, actor=ADA)
    assert (deleted.name, deleted.deleted_by) == ("Q1", "Ada")
    save_quote("Q1", {"nodes": 5}, Scenario(), path=store_at, actor=ADA)  # the name is free again
    with pytest.raises(StoreError, match="already have a saved quote named 'Q1'"):
        restore_deleted("quote", deleted.id, path=store_at, actor=ADA)
    with pytest.raises(StoreError, match="no recently deleted"):
        restore_deleted("quote", deleted.id, path=store_at, actor=BOB)
    delete_quote("Q1", path=store_at, actor=ADA)
    assert restore_deleted("quote", deleted.id, path=store_at, actor=ADA) == "Q1"
    assert load_quote("Q1", path=store_at, actor=ADA).result == QUOTE
    # a deletion older than 30 days is purged
    long_ago = (datetime.now(UTC) - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with transaction(store_at) as conn:
        conn.execute(text("UPDATE quotes SET deleted_at = :t WHERE deleted_at IS NOT NULL"), {"t": long_ago})
    assert list_recently_deleted(path=store_at, actor=ADA) == []
    with transaction(store_at) as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM quotes")).scalar() == 1


def test_every_change_is_in_the_audit_trail(store_at):
    save_scenario("Plan", Scenario(), path=store_at, actor=ADA, visibility="private")
    save_scenario("Plan", Scenario(tp=2), path=store_at, actor=ADA, replace=True)
    set_visibility("scenario", "Plan", "team", path=store_at, actor=ADA)
    record_export("scenario", "Plan", "json", path=store_at, actor=BOB)
    set_visibility("scenario", "Plan", "private", path=store_at, actor=ADA)
    delete_scenario("Plan", path=store_at, actor=ADA)
    (deleted,) = list_recently_deleted(path=store_at, actor=ADA)
    restore_deleted("scenario", deleted.id, path=store_at, actor=ADA)
    trail = audit_trail("scenario", "Plan", path=store_at, actor=ADA)
    assert [(e.action, e.actor_name) for e in trail] == [
        ("created", "Ada"),
        ("changed", "Ada"),
        ("shared", "Ada"),
        ("exported", "Bob"),
        ("unshared", "Ada"),
        ("deleted", "Ada"),
        ("restored", "Ada"),
    ]
    assert trail[3].detail == "as json"


def test_a_failed_change_leaves_no_audit_row(store_at):
    save_quote("Q1", QUOTE, Scenario(), path=store_at, actor=ADA, visibility="team")
    with pytest.raises(NotOwnerError):
        delete_quote("Q1", path=store_at, actor=BOB)
    with pytest.raises(EditConflictError):
        save_quote("Q1", QUOTE, Scenario(), path=store_at, actor=ADA, replace=True, expected_version=7)
    assert [e.action for e in audit_trail("quote", "Q1", path=store_at, actor=BOB)] == ["created"]


def test_imported_models_are_owned_and_a_config_is_held_once_per_visible_owner(store_at):
    assert save_custom_model(TINY, path=store_at, actor=ADA).duplicate is False  # private by default
    assert save_custom_model(TINY, path=store_at, actor=BOB).duplicate is False  # Bob cannot see Ada's
    assert [m.owner_name for m in list_custom_models(path=store_at, actor=BOB).models] == ["Bob"]
    set_visibility("model", "acme/tiny-mistral", "team", path=store_at, actor=ADA)
    assert sorted(m.label_for(BOB) for m in list_custom_models(path=store_at, actor=BOB).models) == [
        "acme/tiny-mistral",
        "acme/tiny-mistral (Ada)",
    ]


def test_damaged_rows_of_anothers_private_items_are_not_shown(store_at):
    with transaction(store_at) as conn:
        conn.execute(
            text(
                "INSERT INTO scenarios (name, notes, created_at, json, owner_id, owner_name, visibility) "
                "VALUES ('bad', '', 't', '[1]', :owner, 'Ada', 'private')"
            ),
            {"owner": ADA.id},
        )
    assert [r.key for r in unreadable_rows(path=store_at, actor=ADA)] == ["bad"]
    assert unreadable_rows(path=store_at, actor=BOB) == []
    assert unreadable_rows(path=store_at, actor=LOCAL_ACTOR) == []
