"""The store's damaged rows and whole saved quotes, through the pages.

Fifty stored rows that do not read back (bad JSON, a JSON of the wrong shape, a config whose fields have the
wrong type, a nesting too deep to read, a scenario that fails validation) break no page: each list skips them
and the Saved page lists them with the reason, downloads a row and deletes it after confirming. A quote saved on
the Fleet & Quote page keeps its customer, "prepared by" and notes, reopens into that page, and re-exports in
every format from the Saved page.
"""

from __future__ import annotations

import json
import logging
import sqlite3

import pypdfium2
import pytest

from planner import Scenario
from planner.errors import PlannerError
from planner.reports import FORMATS, Report, pdf_available
from planner.validation import delete_scenario, delete_unreadable_row, list_quotes, save_scenario, unreadable_rows
from tests.app.conftest import PAGE_FILES, internal_errors, page

BAD_TEXTS = [
    "",
    "not json",
    "[1, 2, 3]",
    "42",
    "null",
    '"a string"',
    "{",
    "[" * 5000 + "]" * 5000,
    json.dumps({"model_type": ["llama"], "num_hidden_layers": "two"}),
    json.dumps({"model_type": "llama", "num_hidden_layers": {"a": 1}, "hidden_size": None}),
]


def _bad_rows(path, count: int = 50) -> None:
    """``count`` damaged rows spread over the four tables (written past the planner, as a broken tool would)."""
    save_scenario("fine", Scenario())  # the store exists, at the newest schema
    delete_scenario("fine")
    conn = sqlite3.connect(path)
    with conn:
        for i in range(count):
            text = BAD_TEXTS[i % len(BAD_TEXTS)]
            table = i % 4
            if table == 0:
                text = "[]" if text.startswith('{"') else text  # any JSON object is a measurement record
                conn.execute(
                    "INSERT INTO measurements VALUES (?, '2026-01-01T00:00:00Z', 'h100-sxm-80gb', 't', 'd', ?)",
                    (f"m{i}", text),
                )
            elif table == 1:
                scenario = text if i % 3 else json.dumps({"tp": "many", "k": -5})
                conn.execute(
                    "INSERT INTO scenarios (name, notes, created_at, json) VALUES (?, '', '2026-01-01T00:00:00Z', ?)",
                    (f"s{i}", scenario),
                )
            elif table == 2:
                row = (f"model {i}", f"sha{i}", text)
                conn.execute(
                    "INSERT INTO custom_models (name, config_sha256, created_at, json) "
                    "VALUES (?, ?, '2026-01-01T00:00:00Z', ?)",
                    row,
                )
            else:
                conn.execute(
                    "INSERT INTO quotes (name, notes, created_at, scenario, json) "
                    "VALUES (?, '', '2026-01-01T00:00:00Z', ?, ?)",
                    (f"q{i}", text, '{"title": "x"}'),
                )
    conn.close()


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PLANNER_STORE_PATH", str(path))
    return path


def test_fifty_damaged_rows_are_listed_for_repair_and_break_no_page(store, caplog):
    caplog.set_level(logging.ERROR, logger="planner.pages")
    _bad_rows(store)
    damaged = unreadable_rows()
    assert len(damaged) == 50 and all(r.reason for r in damaged)
    assert {r.kind for r in damaged} == {"measurement", "scenario", "model", "quote"}
    for file in PAGE_FILES:
        at = page(file.name).run()
        assert not at.exception, (file.name, [e.value for e in at.exception])
        assert internal_errors(caplog.records) == [], file.name


def test_the_saved_page_downloads_and_deletes_a_damaged_row_after_confirming(store):
    _bad_rows(store, 8)
    at = page("saved.py").run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "Why it does not read" in d.value.columns)
    assert len(table) == 8
    pick = at.selectbox(key="saved_damaged_pick").value
    assert at.get("download_button")
    at.button(key="saved_damaged_delete").click().run()
    assert len(unreadable_rows()) == 8  # asked, not deleted yet
    at.button(key="saved_confirm_delete_damaged_yes").click().run()
    assert not at.exception and len(unreadable_rows()) == 7
    assert pick not in [f"{r.label}: {r.key}" for r in unreadable_rows()]


def test_a_readable_row_is_not_deleted_as_damaged(store):
    save_scenario("fine", Scenario())
    with pytest.raises(PlannerError):
        delete_unreadable_row("scenario", "fine")
    conn = sqlite3.connect(store)
    try:
        assert conn.execute("SELECT COUNT(*) FROM scenarios").fetchone()[0] == 1
    finally:
        conn.close()


def _save_quote_with_details(at) -> None:
    at.text_input(key="doc_customer").input("Acme Robotics").run()
    at.text_input(key="doc_prepared_by").input("Dana, solutions").run()
    at.text_input(key="quote_save_name").input("Acme Q3").run()
    at.text_area(key="quote_save_notes").input("renewal, 70B on H100").run()
    at.button(key="quote_save").click().run()


def test_a_saved_quote_keeps_customer_prepared_by_and_notes_and_reopens_in_fleet(store):
    at = page("fleet.py").run()
    _save_quote_with_details(at)
    assert not at.exception
    (quote,) = list_quotes().quotes
    assert (quote.customer, quote.prepared_by) == ("Acme Robotics", "Dana, solutions")
    assert quote.notes == "renewal, 70B on H100"
    at.switch_page("ui/saved.py").run()
    assert any("Acme Robotics" in c.value for c in at.caption)
    at.button(key="saved_quote_open").click().run()
    assert not at.exception
    assert at.text_input(key="doc_customer").value == "Acme Robotics"
    assert at.text_input(key="doc_prepared_by").value == "Dana, solutions"
    assert at.text_input(key="quote_save_name").value == "Acme Q3"


@pytest.mark.slow
def test_a_saved_quote_re_exports_in_every_format_with_its_customer(store):
    at = page("fleet.py").run()
    _save_quote_with_details(at)
    (quote,) = list_quotes().quotes
    report = Report.from_json(quote.result)
    assert report.customer == "Acme Robotics" and any(s.figure is not None for s in report.sections)
    for fmt in FORMATS:
        if fmt == "pdf":
            continue  # printed below only where Chromium is installed
        data = report.export(fmt)
        if fmt == "xlsx":
            assert data[:2] == b"PK"
        else:
            assert b"Acme Robotics" in data, fmt
    assert "figure_plotly" not in quote.result_json()
    if pdf_available():
        pdf = pypdfium2.PdfDocument(report.export("pdf"))
        text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
        assert "Acme Robotics" in text
