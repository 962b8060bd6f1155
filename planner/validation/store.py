"""The store's measurements, and what every kind of stored row shares: one reader that never raises for a row.

The store itself (where it is, SQLite by default or PostgreSQL by ``PLANNER_DATABASE_URL``, its migrations and
its failures) is :mod:`planner.store`; saved scenarios, imported models and saved quotes are
:mod:`planner.validation.saved`, :mod:`planner.validation.saved_models` and :mod:`planner.validation.saved_quotes`.
Every write is one transaction (a killed writer leaves the previous state, never half a row); a row is checked on
write (a JSON object whose ``id`` is the row's) and on read (a bad row is skipped and reported, never fatal).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> save_measurement("r1", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"id": "r1", "a": 1}', path=path)
>>> [m.id for m in list_measurements(path=path)], load_measurement("r1", path=path)
(['r1'], {'id': 'r1', 'a': 1})
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from planner.store import (
    BUSY_TIMEOUT_S,
    STORE_ENV,
    STORE_FILE,
    StoreError,
    connect,
    is_absent,
    store_path,
    text,
    transaction,
)

__all__ = [
    "BUSY_TIMEOUT_S",
    "STORE_ENV",
    "STORE_FILE",
    "StoreError",
    "StoredMeasurement",
    "connect",
    "list_measurements",
    "load_all_measurements",
    "load_measurement",
    "parse_rows",
    "read_measurement_rows",
    "row_reason",
    "save_measurement",
    "store_path",
    "stored_ids",
    "transaction",
]

T = TypeVar("T")


class StoredMeasurement(BaseModel):
    id: str
    created_at: str
    gpu: str
    target: str
    draft: str


def _checked_payload(record_id: str, payload_json: str) -> None:
    """A row holds a JSON object whose ``id`` (when it has one) is the row's id."""
    value = json.loads(payload_json)  # never store text that will not load back
    if not isinstance(value, dict):
        raise StoreError(f"measurement {record_id!r}: the record must be a JSON object", field="record")
    if "id" in value and value["id"] != record_id:
        raise StoreError(f"measurement {record_id!r}: the record's id is {value['id']!r}", field="record")


def save_measurement(
    record_id: str,
    created_at: str,
    gpu: str,
    target: str,
    draft: str,
    payload_json: str,
    *,
    path: str | Path | None = None,
) -> None:
    """Insert (or replace) one measurement record, in one transaction."""
    _checked_payload(record_id, payload_json)
    with transaction(path) as conn:
        conn.execute(text("DELETE FROM measurements WHERE id = :id"), {"id": record_id})
        conn.execute(
            text(
                "INSERT INTO measurements (id, created_at, gpu, target, draft, json) "
                "VALUES (:id, :created_at, :gpu, :target, :draft, :json)"
            ),
            {
                "id": record_id,
                "created_at": created_at,
                "gpu": gpu,
                "target": target,
                "draft": draft,
                "json": payload_json,
            },
        )


def parse_rows(rows: list[tuple], parse: Callable[..., T], what: str) -> tuple[list[T], list[str]]:
    """Rows read back with ``parse(*row)``; a row that does not parse, whatever the error (bad JSON, a field of the
    wrong type, a nesting too deep to read), is skipped and reported by its first column, never raised, so one
    damaged row never hides the others nor breaks a page. :func:`unreadable_rows` lists the same rows for repair.

    >>> parse_rows([("a", "1"), ("b", "x")], lambda name, text: int(text), "count")
    ([1], ["saved count 'b' skipped: invalid literal for int() with base 10: 'x'"])
    """
    items: list[T] = []
    problems: list[str] = []
    for row in rows:
        try:
            items.append(parse(*row))
        except Exception as exc:  # any failure of one row is that row's problem, never the page's
            problems.append(f"saved {what} {str(row[0])[:80]!r} skipped: {row_reason(exc)}")
    return items, problems


def row_reason(exc: BaseException) -> str:
    """A short reason for a row that does not read: the error's first line (its kind when it has no text)."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


def _absent(path: str | Path | None) -> bool:
    """Reading never creates a store: no file means nothing saved yet."""
    return is_absent(path)


def list_measurements(*, path: str | Path | None = None) -> list[StoredMeasurement]:
    """Every stored measurement, newest first (without the JSON)."""
    if _absent(path):
        return []
    with connect(path) as conn:
        rows = conn.execute(
            text("SELECT id, created_at, gpu, target, draft FROM measurements ORDER BY created_at DESC, id")
        ).fetchall()
    return [
        StoredMeasurement(id=str(r[0]), created_at=str(r[1]), gpu=str(r[2]), target=str(r[3]), draft=str(r[4]))
        for r in rows
    ]


def stored_ids(*, path: str | Path | None = None) -> set[str]:
    if _absent(path):
        return set()
    with connect(path) as conn:
        return {str(r[0]) for r in conn.execute(text("SELECT id FROM measurements"))}


#: The columns :func:`_row_value` reads, in its argument order.
_COLUMNS = "id, json"


def _row_value(record_id: object, text: object) -> dict[str, Any]:
    """A row's record, or ValueError saying why it is not one."""
    if not isinstance(text, str):
        raise ValueError("the row holds no JSON text")
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"the row holds a JSON {type(value).__name__}, not a record")
    return value


def load_measurement(record_id: str, *, path: str | Path | None = None) -> dict[str, Any]:
    if _absent(path):
        raise StoreError(f"measurement {record_id!r} is not in the store (no store yet)", field="record")
    with connect(path) as conn:
        row = conn.execute(text("SELECT json FROM measurements WHERE id = :id"), {"id": record_id}).fetchone()
    if row is None:
        raise StoreError(f"measurement {record_id!r} is not in the store", field="record")
    try:
        return _row_value(record_id, row[0])
    except ValueError as exc:
        raise StoreError(f"measurement {record_id!r} in the store is damaged: {exc}", field="record") from exc


def read_measurement_rows(*, path: str | Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Every stored record's JSON, newest first, and one problem line per row that is not a record."""
    if _absent(path):
        return [], []
    with connect(path) as conn:
        rows = conn.execute(text(f"SELECT {_COLUMNS} FROM measurements ORDER BY created_at DESC, id")).fetchall()
    return parse_rows(rows, _row_value, "measurement")


def load_all_measurements(*, path: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored record's JSON, newest first (rows that are not records are skipped)."""
    return read_measurement_rows(path=path)[0]
