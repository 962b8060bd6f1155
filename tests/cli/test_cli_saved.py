"""``quote … --save`` and ``saved list|show|export`` read and write the same store as the app, on SQLite and on
PostgreSQL (``PLANNER_DATABASE_URL``), so quotes can be produced in batch and exported as customer documents."""

from __future__ import annotations

import json

import pytest

from planner.validation import audit_trail, list_quotes
from tests.conftest import run_cli

QUOTE = (
    "quote",
    "--target",
    "Llama-3.1-8B",
    "--node",
    "1x-h100-sxm-80gb",
    "--requests-per-s",
    "2",
    "--customer",
    "Acme Robotics",
    "--prepared-by",
    "Dana",
    "--notes",
    "batch run",
)


@pytest.fixture
def where(store_at, monkeypatch) -> str:
    """The store the subprocesses use: a SQLite file or a PostgreSQL database, by the variable a team sets."""
    if "://" in store_at:
        monkeypatch.setenv("PLANNER_DATABASE_URL", store_at)
        monkeypatch.delenv("PLANNER_STORE_PATH", raising=False)
    else:
        monkeypatch.setenv("PLANNER_STORE_PATH", store_at)
    return store_at


@pytest.mark.slow
def test_a_quote_saved_from_the_command_line_is_listed_shown_and_exported(where, tmp_path):
    run_cli(*QUOTE, "--save", "Acme Q3", check=True)
    (quote,) = list_quotes(path=where).quotes
    assert (quote.name, quote.customer, quote.prepared_by, quote.notes) == (
        "Acme Q3",
        "Acme Robotics",
        "Dana",
        "batch run",
    )
    assert quote.scenario.target.endswith("Llama-3.1-8B") and quote.scenario.fleet_requests_per_s == 2
    listed = json.loads(run_cli("saved", "list", "--json", check=True).stdout)
    assert [(r["kind"], r["name"], r["customer"]) for r in listed["saved"]] == [("quote", "Acme Q3", "Acme Robotics")]
    shown = json.loads(run_cli("saved", "show", "acme q3", "--json", check=True).stdout)
    assert shown["customer"] == "Acme Robotics" and shown["quote"]["title"].startswith("Serving quote")
    out = tmp_path / "acme.md"
    run_cli("saved", "export", "Acme Q3", "--format", "md", "--out", str(out), check=True)
    assert "Acme Robotics" in out.read_text()


@pytest.mark.slow
def test_saving_under_a_taken_name_or_exporting_an_unknown_quote_is_one_line_and_exit_2(where):
    run_cli(*QUOTE, "--save", "Q", check=True)
    taken = run_cli(*QUOTE, "--save", "q")
    assert taken.returncode == 2 and "already named" in taken.stderr and len(taken.stderr.splitlines()) == 1
    assert run_cli(*QUOTE, "--save", "q", "--replace").returncode == 0
    missing = run_cli("saved", "export", "nope", "--format", "json")
    assert missing.returncode == 2 and "no saved quote is named" in missing.stderr
    assert len(list_quotes(path=where).quotes) == 1


@pytest.mark.slow
def test_planner_user_saves_as_that_person_and_others_see_only_what_is_shared(where, monkeypatch, tmp_path):
    monkeypatch.setenv("PLANNER_USER", "oidc|ada")
    monkeypatch.setenv("PLANNER_USER_NAME", "Ada")
    run_cli(*QUOTE, "--save", "Ada private", check=True)  # a named person's default: private
    run_cli(*QUOTE, "--save", "Ada shared", "--visibility", "team", check=True)
    mine = run_cli("saved", "list", check=True).stdout
    assert "you (private)" in mine and "you (team)" in mine
    run_cli("saved", "export", "Ada shared", "--format", "json", "--out", str(tmp_path / "q.json"), check=True)
    monkeypatch.delenv("PLANNER_USER")
    monkeypatch.delenv("PLANNER_USER_NAME")
    listed = json.loads(run_cli("saved", "list", "--json", check=True).stdout)["saved"]
    assert [(r["name"], r["owner"], r["owner_id"], r["visibility"]) for r in listed] == [
        ("Ada shared", "Ada", "oidc|ada", "team")
    ]
    hidden = run_cli("saved", "show", "Ada private")
    assert hidden.returncode == 2 and "no saved quote is named" in hidden.stderr
    refused = run_cli(*QUOTE, "--save", "Ada shared", "--replace")
    assert refused.returncode == 2 and "belongs to Ada" in refused.stderr
    trail = audit_trail("quote", "Ada shared", path=where)
    assert [(e.action, e.actor_name, e.detail) for e in trail][-1] == ("exported", "Ada", "as json")
