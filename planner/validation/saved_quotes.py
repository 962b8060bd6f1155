"""Saved fleet quotes: a name, notes, the scenario and the quote's JSON, in the store, owned and shared.

A saved quote keeps what the Fleet & Quote page computed (the quote report's JSON, as exported) beside
the scenario it was made for, under a name unique per owner regardless of case (a taken name is refused
unless ``replace=True``). Owners, visibility, versions, soft deletion and the audit trail follow
:mod:`planner.validation.owned`; every function acts as ``actor`` (this machine by default). Every write
and its audit row are one transaction: a refused or failed save leaves the row count as it was.
A row whose JSON no longer reads is skipped by :func:`list_quotes` and reported, never fatal.

>>> import tempfile, pathlib
>>> from planner.scenario import Scenario
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> _ = save_quote("Q1 70B", {"title": "quote", "nodes": 3}, Scenario(), notes="for the customer", path=path)
>>> [q.name for q in list_quotes(path=path).quotes], load_quote("q1 70b", path=path).result["nodes"]
(['Q1 70B'], 3)
>>> delete_quote("Q1 70B", path=path); list_quotes(path=path).quotes
[]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner.errors import InputError
from planner.scenario import Scenario
from planner.validation.actor import LOCAL_ACTOR, Actor, Visibility
from planner.validation.owned import (
    Owned,
    checked_actor,
    checked_visibility,
    soft_delete,
)
from planner.validation.owned_rows import list_visible, load_visible, save_owned
from planner.validation.saved import _checked_name, _checked_notes, _now

__all__ = [
    "MAX_QUOTE_JSON_CHARS",
    "SavedQuote",
    "SavedQuoteList",
    "delete_quote",
    "list_quotes",
    "load_quote",
    "save_quote",
]

#: The largest quote JSON kept (a quote over every node type is a few tens of kB).
MAX_QUOTE_JSON_CHARS = 5_000_000


class SavedQuote(Owned):
    name: str
    notes: str
    #: When it was saved, ISO 8601 UTC.
    created_at: str
    scenario: Scenario
    #: The quote as exported (the report's JSON object).
    result: dict[str, Any]

    @property
    def customer(self) -> str:
        """Who the quote is for, as its document's title page names them."""
        return str(self.result.get("customer") or "")

    @property
    def prepared_by(self) -> str:
        return str(self.result.get("prepared_by") or "")

    def result_json(self) -> str:
        """The quote as its JSON export reads (charts kept for re-export are left out)."""
        result = dict(self.result)
        if isinstance(result.get("sections"), list):
            result["sections"] = [
                {k: v for k, v in s.items() if k != "figure_plotly"} if isinstance(s, dict) else s
                for s in result["sections"]
            ]
        return json.dumps(result, indent=2, ensure_ascii=False)


class SavedQuoteList(BaseModel):
    """Every readable saved quote (by name) and one line per row that was skipped."""

    quotes: list[SavedQuote]
    problems: list[str]


def _result_text(result: object) -> str:
    """The quote as JSON text of an object (a dict, a pydantic model, JSON text or bytes); InputError otherwise."""
    if isinstance(result, BaseModel):
        result = result.model_dump(mode="json")
    if isinstance(result, bytes | bytearray):
        result = bytes(result).decode("utf-8", errors="replace")
    try:
        value = json.loads(result) if isinstance(result, str) else json.loads(json.dumps(result, default=str))
    except (TypeError, ValueError, RecursionError):
        raise InputError("quote", type(result).__name__, "a quote's JSON object") from None
    if not isinstance(value, dict):
        raise InputError("quote", type(value).__name__, "a quote's JSON object")
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > MAX_QUOTE_JSON_CHARS:
        raise InputError(
            "quote", f"{len(text):,} characters", f"a quote of at most {MAX_QUOTE_JSON_CHARS:,} characters"
        )
    return text


def save_quote(
    name: str,
    result: object,
    scenario: Scenario,
    notes: str = "",
    *,
    replace: bool = False,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    visibility: Visibility | None = None,
    expected_version: int | None = None,
) -> SavedQuote:
    """Save a quote as ``name`` in one transaction; a taken name (any case) is refused unless ``replace`` (the
    owner's only; ``expected_version`` refuses a replace of a newer version; ``visibility`` as
    :func:`planner.validation.saved.save_scenario`)."""
    name, notes = _checked_name(name), _checked_notes(notes)
    actor, visibility = checked_actor(actor), checked_visibility(visibility)
    if not isinstance(scenario, Scenario):
        raise InputError("scenario", type(scenario).__name__, "a Scenario")
    text = _result_text(result)
    created_at = _now()
    values = {"notes": notes, "created_at": created_at, "scenario": scenario.model_dump_json(), "json": text}
    found = save_owned(
        "quote", name, values, path=path, actor=actor, visibility=visibility, replace=replace,
        expected_version=expected_version,
    )  # fmt: skip
    return SavedQuote(
        name=name, notes=notes, created_at=created_at, scenario=scenario, result=json.loads(text), **found.ownership()
    )


def _row(name: object, notes: object, created_at: object, scenario: object, text: object) -> SavedQuote:
    if not isinstance(text, str) or not isinstance(scenario, str):
        raise ValueError("the row holds no JSON text")
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"the row holds a JSON {type(value).__name__}, not a quote")
    return SavedQuote(
        name=str(name),
        notes=str(notes),
        created_at=str(created_at),
        scenario=Scenario.model_validate_json(scenario),
        result=value,
    )


_COLUMNS = "name, notes, created_at, scenario, json"


def list_quotes(*, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> SavedQuoteList:
    """Every saved quote the actor may see (theirs and the team's) by name (case-insensitive order); unreadable
    rows are skipped and reported."""
    quotes, problems = list_visible("quote", _COLUMNS, _row, path=path, actor=actor)
    return SavedQuoteList(quotes=quotes, problems=problems)


def load_quote(
    name: str, *, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR, owner_id: str | None = None
) -> SavedQuote:
    """The saved quote ``name`` the actor may see: their own, else the team's (``owner_id`` picks an owner's)."""
    name, actor = _checked_name(name), checked_actor(actor)
    return load_visible("quote", name, _COLUMNS, _row, path=path, actor=actor, owner_id=owner_id)


def delete_quote(
    name: str,
    *,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    owner_id: str | None = None,
    expected_version: int | None = None,
) -> None:
    """Delete the saved quote ``name`` (any case; the owner only) in one transaction, restorable for 30 days; an
    unknown name is refused."""
    soft_delete(
        "quote", _checked_name(name), actor=actor, path=path, owner_id=owner_id, expected_version=expected_version
    )
