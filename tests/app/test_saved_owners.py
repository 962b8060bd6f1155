"""Owners and sharing on the pages: a teammate's items show their owner and cannot be shared or deleted (the
buttons say why), another person's private items are not listed, a delete or replace of something changed
since it was shown is refused with who changed it, deleted items come back from "Recently deleted", each item
shows its history, and Fleet & Quote and the Catalog import save with the chosen visibility.

The person using the app is set the way the sign-in does it: ``ui._identity.current_actor``."""

from __future__ import annotations

import pytest

from planner import Scenario
from planner.validation import (
    Actor,
    list_custom_models,
    list_quotes,
    list_scenarios,
    load_quote,
    load_scenario,
    save_quote,
    save_scenario,
)
from tests.app.conftest import page
from tests.app.test_saved_models_and_quotes import TINY, _upload

ADA = Actor(id="oidc|ada", name="Ada")
BOB = Actor(id="oidc|bob", name="Bob")


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PLANNER_STORE_PATH", str(path))
    return path


@pytest.fixture
def acting_as(monkeypatch):
    def act(actor: Actor) -> None:
        monkeypatch.setattr("ui._identity.current_actor", lambda: actor)

    return act


def _messages(at) -> str:
    return " | ".join(m.value for m in [*at.success, *at.info, *at.error, *at.caption])


def _table(at, column: str):
    return [d.value for d in at.dataframe if column in d.value.columns]


def test_a_teammates_items_show_their_owner_and_only_the_owner_may_delete_or_share(store, acting_as):
    save_scenario("Ada's plan", Scenario(), actor=ADA, visibility="team")
    save_quote("Shared deal", {"title": "q"}, Scenario(), actor=ADA, visibility="team")
    save_quote("Private deal", {"title": "q", "customer": "Secret Corp"}, Scenario(), actor=ADA, visibility="private")
    acting_as(BOB)
    at = page("saved.py").run()
    assert not at.exception
    scenarios = _table(at, "Link")[0]
    assert scenarios[["Name", "Owner", "Visible to"]].values.tolist() == [["Ada's plan", "Ada", "the team"]]
    quotes = _table(at, "Target")[-1]
    assert quotes["Name"].tolist() == ["Shared deal"]  # never Ada's private quote
    assert "Secret Corp" not in str([d.value for d in at.dataframe])
    for key in ("saved_delete", "saved_share", "saved_quote_delete", "saved_quote_share"):
        assert at.button(key=key).disabled, key
    assert "Only its owner, Ada, can change or delete it" in _messages(at)
    # Bob may still duplicate it into a scenario of his own
    at.button(key="saved_duplicate").click().run()
    assert [(s.name, s.owner_name) for s in list_scenarios(actor=BOB).scenarios] == [
        ("Ada's plan", "Ada"),
        ("Ada's plan (copy)", "Bob"),
    ]


def test_the_owner_shares_and_sees_the_history(store, acting_as):
    save_scenario("Plan", Scenario(), actor=ADA, visibility="private")
    acting_as(ADA)
    at = page("saved.py").run()
    assert not at.button(key="saved_share").disabled
    at.button(key="saved_share").click().run()
    assert not at.exception and load_scenario("Plan", actor=BOB).owner_name == "Ada"
    history = _table(at, "What")[0]
    assert history[["Who", "What"]].values.tolist() == [["Ada", "created"], ["Ada", "shared"]]


def test_a_delete_of_a_scenario_changed_since_it_was_shown_is_refused_with_who_changed_it(store, acting_as):
    save_scenario("Plan", Scenario(tp=1), actor=ADA)
    acting_as(ADA)
    at = page("saved.py").run()
    at.button(key="saved_delete").click().run()
    changed = save_scenario("Plan", Scenario(tp=2), actor=ADA, replace=True)  # another tab of Ada's, meanwhile
    at.button(key="saved_delete_yes").click().run()
    assert not at.exception
    assert any(f"changed by Ada at {changed.changed_at}" in e.value for e in at.error)
    assert load_scenario("Plan", actor=ADA).scenario.tp == 2


def test_a_replace_of_an_opened_scenario_changed_since_is_refused(store, acting_as):
    save_scenario("Plan", Scenario(tp=1), actor=ADA)
    acting_as(ADA)
    at = page("saved.py").run()
    at.button(key="saved_open").click().run()
    save_scenario("Plan", Scenario(tp=2), actor=ADA, replace=True)  # changed elsewhere after it was opened
    at.text_input(key="saved_name").input("Plan").run()
    at.checkbox(key="saved_replace").check().run()
    at.button(key="saved_save").click().run()
    assert any("changed by Ada" in e.value and "reload it" in e.value for e in at.error)
    assert load_scenario("Plan", actor=ADA).version == 2


def test_a_deleted_quote_is_restored_from_recently_deleted(store):
    save_quote("Q1", {"title": "q", "nodes": 3}, Scenario())
    at = page("saved.py").run()
    at.button(key="saved_quote_delete").click().run()
    at.button(key="saved_confirm_delete_quote_yes").click().run()
    assert list_quotes().quotes == []
    deleted = _table(at, "Restorable until (UTC)")[0]
    assert deleted[["Kind", "Name"]].values.tolist() == [["quote", "Q1"]]
    at.button(key="saved_restore").click().run()
    assert not at.exception and any("Restored the quote “Q1”" in s.value for s in at.success)
    assert load_quote("Q1").result["nodes"] == 3
    assert "Nothing deleted in the last 30 days." in _messages(at)


def test_the_fleet_page_saves_a_quote_with_the_chosen_visibility(store, acting_as):
    acting_as(ADA)
    at = page("fleet.py").run()
    assert at.radio(key="quote_save_visibility").value == "private"  # a signed-in person's default
    at.text_input(key="quote_save_name").input("Team quote").run()
    at.radio(key="quote_save_visibility").set_value("team").run()
    at.button(key="quote_save").click().run()
    assert not at.exception
    assert [(q.name, q.visibility, q.owner_name) for q in list_quotes(actor=BOB).quotes] == [
        ("Team quote", "team", "Ada")
    ]
    acting_as(BOB)  # Bob cannot replace Ada's quote from his Fleet page
    at.checkbox(key="quote_save_replace").check().run()
    at.button(key="quote_save").click().run()
    assert any("belongs to Ada" in e.value for e in at.error)


def test_the_catalog_import_saves_with_the_chosen_visibility(store, acting_as):
    acting_as(ADA)
    at = page("catalog.py").run()
    _upload(at, TINY)
    at.radio(key="catalog_import_visibility").set_value("team").run()
    at.button(key="catalog_use_import").click().run()
    assert not at.exception
    assert [(m.name, m.visibility) for m in list_custom_models(actor=BOB).models] == [("acme/tiny-falcon", "team")]


def test_share_sent_with_a_new_choice_shares_the_item_chosen(store, acting_as):
    save_scenario("Plan A", Scenario(), actor=ADA, visibility="private")
    save_scenario("Plan B", Scenario(tp=2), actor=ADA, visibility="private")
    acting_as(ADA)
    at = page("saved.py").run()
    at.selectbox(key="saved_pick").set_value("Plan B")
    at.button(key="saved_share").click().run()
    assert not at.exception and any("“Plan B” is now visible to the team" in s.value for s in at.success)
    shared = {s.name: s.visibility for s in list_scenarios(actor=ADA).scenarios}
    assert shared == {"Plan A": "private", "Plan B": "team"}
