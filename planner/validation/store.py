"""The SQLite store: measurements (version 1), saved scenarios (version 2, :mod:`planner.validation.saved`),
imported custom models and saved quotes (version 3, :mod:`planner.validation.saved_models`,
:mod:`planner.validation.saved_quotes`).

One file, ``store.sqlite3`` in the planner's home folder (:func:`planner.user_files.planner_home`,
``PLANNER_HOME``, default ``~/.local/share/sd-capacity-planner``), created on the first write;
``PLANNER_STORE_PATH`` points elsewhere. The schema is versioned: ``schema_version`` holds the
applied migration numbers, and :data:`MIGRATIONS` lists the statements of each version in order, so
a later table is one more entry.

Under load and faults: the journal is WAL (readers never wait for a writer) with a busy timeout;
migrations run in one ``BEGIN IMMEDIATE`` transaction that re-reads the version first, so processes
creating the store at once apply each version exactly once; every write is one transaction (a
killed writer leaves the previous state, never half a row); a row is checked on write (a JSON
object whose ``id`` is the row's) and on read (a bad row is skipped and reported, never fatal). A
damaged or locked file is a :class:`StoreError` that says how to get out of it.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> save_measurement("r1", "2026-01-01T00:00:00Z", "h100-sxm-80gb", "t", "d", '{"id": "r1", "a": 1}', path=path)
>>> [m.id for m in list_measurements(path=path)], load_measurement("r1", path=path)
(['r1'], {'id': 'r1', 'a': 1})
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from planner.errors import PlannerError
from planner.user_files import planner_home

T = TypeVar("T")

STORE_ENV = "PLANNER_STORE_PATH"
STORE_FILE = "store.sqlite3"
#: How long a writer waits for another process's lock before giving up (seconds).
BUSY_TIMEOUT_S = 10.0

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
    2: (
        # Names are unique regardless of case: "Prod 70B" and "prod 70b" are the same saved scenario.
        """CREATE TABLE IF NOT EXISTS scenarios (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               notes TEXT NOT NULL,
               created_at TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
    ),
    3: (
        # A custom model imported from a config.json: one row per distinct config (its SHA-256), under a name
        # unique regardless of case.
        """CREATE TABLE IF NOT EXISTS custom_models (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               config_sha256 TEXT NOT NULL UNIQUE,
               created_at TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
        # A fleet quote: the scenario it was made for and the quote's JSON, under a name unique regardless of case.
        """CREATE TABLE IF NOT EXISTS quotes (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               notes TEXT NOT NULL,
               created_at TEXT NOT NULL,
               scenario TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
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
    return Path(os.environ.get(STORE_ENV) or planner_home() / STORE_FILE)


def _way_out(target: Path, exc: BaseException) -> StoreError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(
            f"the store {target} is locked by another process ({text}); wait for it to finish and try again",
            field="store",
        )
    return StoreError(
        f"the store {target} is damaged ({text}): move it aside (e.g. `mv {target} {target}.damaged`) and the "
        "planner starts a new one; the records' JSON files are kept and still listed",
        field="store",
    )


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    current = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
    if current >= max(MIGRATIONS):
        return
    conn.execute("BEGIN IMMEDIATE")  # one migrator at a time; the others wait, then see the new version
    try:
        current = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
        for version in sorted(v for v in MIGRATIONS if v > current):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@contextmanager
def connect(path: str | Path | None = None) -> Iterator[sqlite3.Connection]:
    """An open, migrated connection in WAL mode; closed on exit (commits happen per ``with conn:`` block)."""
    target = Path(path) if path is not None else store_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level="DEFERRED")
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the store {target}: {exc}", field="store") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        _migrate(conn)
        yield conn
    except sqlite3.DatabaseError as exc:
        raise _way_out(target, exc) from exc
    finally:
        conn.close()


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
    with connect(path) as conn, conn:
        conn.execute(
            "INSERT OR REPLACE INTO measurements (id, created_at, gpu, target, draft, json) VALUES (?, ?, ?, ?, ?, ?)",
            (record_id, created_at, gpu, target, draft, payload_json),
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
    return not (Path(path) if path is not None else store_path()).exists()


def list_measurements(*, path: str | Path | None = None) -> list[StoredMeasurement]:
    """Every stored measurement, newest first (without the JSON)."""
    if _absent(path):
        return []
    with connect(path) as conn:
        rows = conn.execute(
            "SELECT id, created_at, gpu, target, draft FROM measurements ORDER BY created_at DESC, id"
        ).fetchall()
    return [
        StoredMeasurement(id=str(r[0]), created_at=str(r[1]), gpu=str(r[2]), target=str(r[3]), draft=str(r[4]))
        for r in rows
    ]


def stored_ids(*, path: str | Path | None = None) -> set[str]:
    if _absent(path):
        return set()
    with connect(path) as conn:
        return {str(r[0]) for r in conn.execute("SELECT id FROM measurements")}


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
        row = conn.execute("SELECT json FROM measurements WHERE id = ?", (record_id,)).fetchone()
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
        rows = conn.execute("SELECT id, json FROM measurements ORDER BY created_at DESC, id").fetchall()
    return parse_rows(rows, _row_value, "measurement")


def load_all_measurements(*, path: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored record's JSON, newest first (rows that are not records are skipped)."""
    return read_measurement_rows(path=path)[0]
