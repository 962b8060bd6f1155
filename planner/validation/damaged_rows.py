"""Stored rows that no longer read: listed with their reason, exported as they are, deleted after confirming.

Every list of the store (measurements, saved scenarios, imported models, saved quotes) skips a row that does
not read back (:func:`planner.validation.store.parse_rows`) so that one damaged row never breaks a page. This
module finds the same rows with the same parsers so that the Saved page can show them, let the user download
a row's raw columns (to repair it by hand or keep it) and delete it, without a hand edit of the database.
Saved items follow their owners' rules (:mod:`planner.validation.owned`): a person is shown their own and the
team's damaged rows (never another person's private ones) and deletes only their own.

>>> import tempfile, pathlib
>>> from planner.store import text, transaction
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> with transaction(path) as conn:
...     _ = conn.execute(text("INSERT INTO scenarios (name, notes, created_at, json) "
...         "VALUES ('broken', '', '2026-01-01T00:00:00Z', '[1, 2]')"))
>>> [(r.kind, r.key) for r in unreadable_rows(path=path)]
[('scenario', 'broken')]
>>> delete_unreadable_row("scenario", "broken", path=path); unreadable_rows(path=path)
[]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner.errors import InputError
from planner.store import text as sql
from planner.store import transaction
from planner.validation import saved, saved_models, saved_quotes, store
from planner.validation.actor import LOCAL_ACTOR, Actor
from planner.validation.owned import VISIBLE, checked_actor
from planner.validation.store import StoreError, _absent, connect, row_reason

__all__ = ["ROW_KINDS", "UnreadableRow", "delete_unreadable_row", "unreadable_rows"]


@dataclass(frozen=True)
class _Kind:
    label: str
    table: str
    key: str
    columns: tuple[str, ...]
    parse: Callable[..., Any]


#: Each kind of stored row: the table, its key column, the columns its parser reads (the module's own), that parser.
ROW_KINDS: dict[str, _Kind] = {
    kind: _Kind(
        label=label,
        table=table,
        key=module._COLUMNS.split(", ")[0],
        columns=tuple(module._COLUMNS.split(", ")),
        parse=parse,
    )
    for kind, label, table, module, parse in (
        ("measurement", "measurement", "measurements", store, store._row_value),
        ("scenario", "saved scenario", "scenarios", saved, saved._row),
        ("model", "imported model", "custom_models", saved_models, saved_models._row),
        ("quote", "saved quote", "quotes", saved_quotes, saved_quotes._row),
    )
}


class UnreadableRow(BaseModel):
    """One stored row that does not read back: its kind, key, why, and its raw columns as JSON text."""

    kind: str
    label: str
    key: str
    reason: str
    raw_json: str


def _raw(columns: tuple[str, ...], row: tuple) -> str:
    return json.dumps(
        {c: v if isinstance(v, str | int | float | type(None)) else repr(v) for c, v in zip(columns, row, strict=True)},
        indent=2,
        ensure_ascii=False,
    )


def _owned(kind: str) -> bool:
    return kind != "measurement"


def unreadable_rows(*, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> list[UnreadableRow]:
    """Every stored row, of every kind, that its own list skips, with the reason (never raises for a row); saved
    items only where the actor may see them."""
    actor = checked_actor(actor)
    if _absent(path):
        return []
    found: list[UnreadableRow] = []
    with connect(path) as conn:
        for kind, spec in ROW_KINDS.items():
            where = f" WHERE {VISIBLE}" if _owned(kind) else ""
            rows = conn.execute(
                sql(f"SELECT {', '.join(spec.columns)} FROM {spec.table}{where} ORDER BY {spec.key}"),
                {"actor_id": actor.id},
            ).fetchall()
            for row in rows:
                try:
                    spec.parse(*row)
                except Exception as exc:  # the row's problem, listed for repair
                    found.append(
                        UnreadableRow(
                            kind=kind,
                            label=spec.label,
                            key=str(row[0]),
                            reason=row_reason(exc),
                            raw_json=_raw(spec.columns, row),
                        )
                    )
    return found


def delete_unreadable_row(kind: str, key: str, *, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> None:
    """Delete one stored row that does not read (a readable row is refused: delete it from its own list); a saved
    item's damaged row only by its owner (the readable items of the same name stay)."""
    spec = ROW_KINDS.get(kind)
    if spec is None:
        raise InputError("kind", kind, f"one of {', '.join(ROW_KINDS)}")
    actor = checked_actor(actor)
    if not any(r.kind == kind and r.key == key for r in unreadable_rows(path=path, actor=actor)):
        raise StoreError(f"no unreadable {spec.label} is stored as {key[:100]!r}", field="key")
    with transaction(path) as conn:
        if not _owned(kind):
            conn.execute(sql(f"DELETE FROM {spec.table} WHERE {spec.key} = :key"), {"key": key})
            return
        rows = conn.execute(
            sql(f"SELECT id, {', '.join(spec.columns)} FROM {spec.table} WHERE {spec.key} = :key AND {VISIBLE}"),
            {"key": key, "actor_id": actor.id},
        ).fetchall()
        for row in rows:
            try:
                spec.parse(*row[1:])
            except Exception:  # the damaged one: deleted below if it is the actor's
                deleted = conn.execute(
                    sql(f"DELETE FROM {spec.table} WHERE id = :id AND owner_id = :actor_id"),
                    {"id": row[0], "actor_id": actor.id},
                ).rowcount
                if not deleted:
                    raise StoreError(
                        f"the unreadable {spec.label} {key[:100]!r} belongs to someone else: only its owner can "
                        "delete it",
                        field="key",
                    ) from None
