"""The SQLite store: saved measurements now; saved scenarios and quotes can add their tables later.

One file (``data/store.sqlite3``, git-ignored; ``PLANNER_STORE_PATH`` points elsewhere, e.g. in
tests). The schema is versioned: ``schema_version`` holds the applied migration number, and
:data:`MIGRATIONS` lists the statements of each version in order, so a later table (scenarios,
quotes) is one more entry. Every write is one transaction (``with`` connection): a crash leaves
the previous state, never half a row.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> save_measurement("r1", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"a": 1}', path=path)
>>> [m.id for m in list_measurements(path=path)], load_measurement("r1", path=path)
(['r1'], {'a': 1})
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner.errors import PlannerError
from planner.facts import REPO_ROOT

STORE_ENV = "PLANNER_STORE_PATH"

#: Version n -> the statements that bring a store from version n-1 to n.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS measurements (
               id TEXT PRIMARY KEY,
               created_at TEXT NOT NULL,
               gpu TEXT NOT NULL,
               target TEXT NOT NULL,
               draft TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
        "CREATE INDEX IF NOT EXISTS measurements_by_gpu ON measurements (gpu, target, draft)",
    ),
}


class StoreError(PlannerError):
    """The store file cannot be opened or holds something unexpected."""


class StoredMeasurement(BaseModel):
    id: str
    created_at: str
    gpu: str
    target: str
    draft: str


def store_path() -> Path:
    return Path(os.environ.get(STORE_ENV) or REPO_ROOT / "data" / "store.sqlite3")


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    current = row[0] or 0
    for version in sorted(v for v in MIGRATIONS if v > current):
        with conn:  # each migration is one transaction
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))


@contextmanager
def connect(path: str | Path | None = None) -> Iterator[sqlite3.Connection]:
    """An open, migrated connection; closed on exit (commits happen per ``with conn:`` block)."""
    target = Path(path) if path is not None else store_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(target, timeout=30)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the store {target}: {exc}", field="store") from exc
    try:
        _migrate(conn)
        yield conn
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"store {target} is not usable: {exc}", field="store") from exc
    finally:
        conn.close()


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
    json.loads(payload_json)  # never store text that will not load back
    with connect(path) as conn, conn:
        conn.execute(
            "INSERT OR REPLACE INTO measurements (id, created_at, gpu, target, draft, json) VALUES (?, ?, ?, ?, ?, ?)",
            (record_id, created_at, gpu, target, draft, payload_json),
        )


def _absent(path: str | Path | None) -> bool:
    """Reading never creates a store: no file means nothing saved yet."""
    return not (Path(path) if path is not None else store_path()).exists()


def list_measurements(*, path: str | Path | None = None) -> list[StoredMeasurement]:
    """Every stored measurement, newest first (without the JSON)."""
    if _absent(path):
        return []
    with connect(path) as conn:
        rows = conn.execute(
            "SELECT id, created_at, gpu, target, draft FROM measurements ORDER BY created_at DESC, id"
        ).fetchall()
    return [StoredMeasurement(id=r[0], created_at=r[1], gpu=r[2], target=r[3], draft=r[4]) for r in rows]


def load_measurement(record_id: str, *, path: str | Path | None = None) -> dict[str, Any]:
    if _absent(path):
        raise StoreError(f"measurement {record_id!r} is not in the store (no store yet)", field="record")
    with connect(path) as conn:
        row = conn.execute("SELECT json FROM measurements WHERE id = ?", (record_id,)).fetchone()
    if row is None:
        raise StoreError(f"measurement {record_id!r} is not in the store", field="record")
    return json.loads(row[0])


def load_all_measurements(*, path: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored record's JSON, newest first."""
    if _absent(path):
        return []
    with connect(path) as conn:
        rows = conn.execute("SELECT json FROM measurements ORDER BY created_at DESC, id").fetchall()
    return [json.loads(r[0]) for r in rows]
