"""Connections to the store through SQLAlchemy: one engine per database, the schema brought to the newest
revision once per process, and every database failure turned into a :class:`StoreError` that says how to get
out of it.

SQLite (the default, one file) runs in WAL mode (readers never wait for a writer) with a busy timeout; the
planner emits ``BEGIN`` itself so that a migration can take the write lock up front (``BEGIN IMMEDIATE``,
the SQLite recipe in SQLAlchemy's documentation). PostgreSQL (``PLANNER_DATABASE_URL``) runs through psycopg 3
with a connection pool; migrations take a transaction-level advisory lock, so two app servers starting at once
apply each revision exactly once. Every write is one transaction (:func:`transaction`): a killed writer leaves
the previous state, never half a row.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> with transaction(path) as conn:
...     _ = conn.execute(text("INSERT INTO scenarios (name, notes, created_at, json) VALUES ('a', '', 't', '{}')"))
>>> with connect(path) as conn:
...     conn.execute(text("SELECT name FROM scenarios")).scalars().all()
['a']
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from planner.errors import PlannerError
from planner.store.location import database_url, shown_url, sqlite_file

__all__ = ["BUSY_TIMEOUT_S", "IntegrityError", "StoreError", "connect", "is_absent", "text", "transaction"]

#: How long a SQLite writer waits for another process's lock before giving up (seconds).
BUSY_TIMEOUT_S = 10.0
#: How often a new store file's switch to WAL mode is tried again while another process holds the file (seconds).
WAL_RETRY_S = 0.01

_engines: dict[str, Engine] = {}
_migrated: set[str] = set()
_lock = threading.Lock()


class StoreError(PlannerError):
    """The store cannot be opened or holds something unexpected."""


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # the driver's own BEGIN is off: _on_begin emits it
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _ensure_wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(conn.info.pop("begin", "BEGIN"))

    return engine


def _ensure_wal(cursor) -> None:
    """Put a new store file in WAL mode (kept in the file: once set, every later connection finds it). Switching
    needs the file to itself, and SQLite answers "database is locked" at once rather than waiting out the busy
    timeout when another process holds it (two processes opening a new store together): try again until the
    timeout, unless the other process has switched it meanwhile."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(WAL_RETRY_S)


def _engine(url: str) -> Engine:
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            if url.startswith("sqlite"):
                engine = _sqlite_engine(url)
            else:
                engine = create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=8)
            _engines[url] = engine
        return engine


def _way_out(url: str, exc: BaseException) -> StoreError:
    """The failure as a StoreError that says what to do."""
    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    shown = shown_url(url)
    file = sqlite_file(url)
    if "locked" in detail or "busy" in detail:
        return StoreError(
            f"the store {file or shown} is locked by another process ({detail}); wait for it to finish and try again",
            field="store",
        )
    if file is None:
        return StoreError(
            f"the database {shown} cannot be used ({detail}): check PLANNER_DATABASE_URL and that the server is up",
            field="store",
        )
    if isinstance(exc, OperationalError) and "unable to open" in detail:
        return StoreError(f"cannot open the store {file}: {detail}", field="store")
    return StoreError(
        f"the store {file} is damaged ({detail}): move it aside (e.g. `mv {file} {file}.damaged`) and the "
        "planner starts a new one; the records' JSON files are kept and still listed",
        field="store",
    )


def _ensure_schema(url: str, engine: Engine) -> None:
    """Bring the database to the newest revision, once per process (the migrations are idempotent)."""
    if url in _migrated:
        return
    from planner.store.migrate import upgrade  # noqa: PLC0415 (Alembic loads only on a process's first connect)

    upgrade(engine)
    _migrated.add(url)


def _prepared(where: str | Path | None) -> tuple[str, Engine]:
    url = database_url(where)
    file = sqlite_file(url)
    try:
        if file is not None:
            file.parent.mkdir(parents=True, exist_ok=True)
        engine = _engine(url)
        _ensure_schema(url, engine)
    except (OSError, SQLAlchemyError) as exc:
        raise _way_out(url, exc) from exc
    return url, engine


@contextmanager
def connect(where: str | Path | None = None) -> Iterator[Connection]:
    """A connection to the migrated store for reading (each statement in its own short transaction)."""
    url, engine = _prepared(where)
    try:
        with engine.connect() as conn:
            yield conn
            if conn.in_transaction():
                conn.rollback()
    except IntegrityError:
        raise
    except DBAPIError as exc:  # the database's own failure (a mistake in the planner's SQL is not the store's)
        raise _way_out(url, exc) from exc


@contextmanager
def transaction(where: str | Path | None = None) -> Iterator[Connection]:
    """A connection inside one transaction: committed when the block ends, rolled back if it raises.

    SQLite takes the write lock at ``BEGIN`` (``BEGIN IMMEDIATE``), so a write that reads first (a version
    check, an owner check) sees the newest rows and never fails half-way on a lock upgrade."""
    url, engine = _prepared(where)
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                conn.info["begin"] = "BEGIN IMMEDIATE"  # the write lock first: a read-then-write never deadlocks
            with conn.begin():
                yield conn
    except IntegrityError:
        raise  # the caller says which name or key is taken
    except DBAPIError as exc:
        raise _way_out(url, exc) from exc


def is_absent(where: str | Path | None = None) -> bool:
    """Reading never creates a store: a SQLite file that does not exist holds nothing yet (a server always exists)."""
    file = sqlite_file(database_url(where))
    return file is not None and not file.exists()


def forget_engines() -> None:
    """Close every pooled connection (tests and forked workers)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
        _migrated.clear()
