"""Saved page: save the sidebar's scenario, refuse a taken or empty name without changing the store, open one into
every page and the link, duplicate, delete only after confirming, compare two side by side."""

from __future__ import annotations

import sqlite3

import pytest

from planner import Scenario
from planner.validation import list_scenarios, save_scenario
from tests.app.conftest import page

H200 = Scenario(node="8x-h200-sxm-141gb", max_model_len=32768)


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PLANNER_STORE_PATH", str(path))
    return path


def rows(path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM scenarios WHERE deleted_at IS NULL").fetchone()[0]
    finally:
        conn.close()


def names() -> list[str]:
    return [s.name for s in list_scenarios().scenarios]


def test_save_the_sidebar_scenario_and_refuse_a_taken_or_empty_name(store):
    at = page("saved.py").run()
    assert not at.exception and any("Nothing saved yet" in i.value for i in at.info)
    at.text_input(key="saved_name").input("My 70B").run()
    at.text_area(key="saved_notes").input("for the customer").run()
    at.button(key="saved_save").click().run()
    assert not at.exception and any("Saved" in s.value for s in at.success)
    assert names() == ["My 70B"] and list_scenarios().scenarios[0].notes == "for the customer"
    assert at.dataframe[0].value["Name"].tolist() == ["My 70B"]
    at.text_input(key="saved_name").input("my 70b").run()
    at.button(key="saved_save").click().run()
    assert any("already named" in e.value for e in at.error) and rows(store) == 1
    at.text_input(key="saved_name").input("   ").run()
    at.button(key="saved_save").click().run()
    assert at.error and rows(store) == 1 and not at.exception


def test_save_takes_the_sidebar_as_it_is_at_the_click_not_as_the_last_finished_run_left_it(store):
    """A busy browser can send a sidebar change and the Save click in one run: the save must see the change."""
    at = page("saved.py").run()
    at.sidebar.selectbox(key="scenario_node").set_value("8x-h200-sxm-141gb")
    at.text_input(key="saved_name").input("typed and saved at once")
    at.button(key="saved_save").click().run()
    assert not at.exception and any("Saved" in s.value for s in at.success)
    assert list_scenarios().scenarios[0].scenario.node == "8x-h200-sxm-141gb"


def test_open_loads_the_scenario_into_the_sidebar_and_the_link(store):
    save_scenario("h200", H200, notes="bigger memory")
    at = page("saved.py").run()
    at.button(key="saved_open").click().run()
    assert not at.exception and any("Opened" in s.value for s in at.success)
    assert at.selectbox(key="scenario_node").value == "8x-h200-sxm-141gb"
    assert at.query_params.get("n") in ("8x-h200-sxm-141gb", ["8x-h200-sxm-141gb"])
    at.switch_page("ui/sizing.py").run()
    assert not at.exception and at.selectbox(key="scenario_node").value == "8x-h200-sxm-141gb"


def test_duplicate_then_delete_only_after_confirming(store):
    save_scenario("base", H200)
    at = page("saved.py").run()
    at.button(key="saved_duplicate").click().run()
    assert names() == ["base", "base (copy)"]
    at.selectbox(key="saved_pick").select("base (copy)").run()
    at.button(key="saved_delete").click().run()
    assert any("restore it for 30 days" in w.value for w in at.warning) and rows(store) == 2
    at.button(key="saved_delete_no").click().run()
    assert rows(store) == 2 and not any("restore it for 30 days" in w.value for w in at.warning)
    at.button(key="saved_delete").click().run()
    at.button(key="saved_delete_yes").click().run()
    assert not at.exception and names() == ["base"]


def test_compare_two_side_by_side(store):
    save_scenario("h100", Scenario(max_model_len=32768))
    save_scenario("h200", H200)
    at = page("saved.py").run()
    assert not at.exception
    compared = [d.value for d in at.dataframe if "A: h100" in d.value.columns]  # results, then the differing inputs
    results = compared[0]
    assert list(results.columns) == ["", "A: h100", "B: h200"]
    kv = results[results[""] == "KV cache tokens"].iloc[0]
    assert int(kv["B: h200"].replace(",", "")) > int(kv["A: h100"].replace(",", ""))
    differing = compared[1]
    assert differing[""].tolist() == ["node type"]
    assert differing["B: h200"].tolist() == ["8x-h200-sxm-141gb"]


def test_a_damaged_row_is_reported_not_fatal(store):
    save_scenario("good", Scenario())
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("INSERT INTO scenarios (name, notes, created_at, json) VALUES ('bad', '', '2026', 'not json')")
    conn.close()
    at = page("saved.py").run()
    assert not at.exception and any("'bad' skipped" in w.value for w in at.warning)
    assert at.dataframe[0].value["Name"].tolist() == ["good"]


def test_a_damaged_store_file_is_a_message_with_a_way_out(store):
    store.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4096)
    at = page("saved.py").run()
    assert not at.exception and any("move it aside" in e.value for e in at.error)
    at.text_input(key="saved_name").input("x").run()
    at.button(key="saved_save").click().run()
    assert not at.exception and any("move it aside" in e.value for e in at.error)


@pytest.mark.parametrize("button", ["saved_open", "saved_duplicate", "saved_delete"])
def test_a_new_choice_sent_with_the_click_is_the_one_acted_on(store, button):
    """A busy browser can send a new choice in the list and a button's click in one run: the button acts on the
    item chosen, not on the one the page last drew."""
    save_scenario("first", Scenario())
    save_scenario("second", H200)
    at = page("saved.py").run()
    assert at.selectbox(key="saved_pick").value == "first"
    at.selectbox(key="saved_pick").set_value("second")
    at.button(key=button).click().run()
    assert not at.exception
    if button == "saved_open":
        assert any("Opened “second”" in s.value for s in at.success)
        assert at.selectbox(key="scenario_node").value == "8x-h200-sxm-141gb"
    elif button == "saved_duplicate":
        assert names() == ["first", "second", "second (copy)"]
    else:
        assert any("Delete “second”?" in w.value for w in at.warning) and rows(store) == 2
