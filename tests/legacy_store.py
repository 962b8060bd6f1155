"""A store as the planner wrote it before its migrations moved to Alembic (schema versions 1-3 in a
``schema_version`` table), for tests that upgrade such a store in place. The statements are frozen copies of
what those releases ran; the store must keep every row of such a file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

LEGACY_MIGRATIONS: dict[int, tuple[str, ...]] = {
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
        """CREATE TABLE IF NOT EXISTS scenarios (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               notes TEXT NOT NULL,
               created_at TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
    ),
    3: (
        """CREATE TABLE IF NOT EXISTS custom_models (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               config_sha256 TEXT NOT NULL UNIQUE,
               created_at TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
        """CREATE TABLE IF NOT EXISTS quotes (
               name TEXT PRIMARY KEY COLLATE NOCASE,
               notes TEXT NOT NULL,
               created_at TEXT NOT NULL,
               scenario TEXT NOT NULL,
               json TEXT NOT NULL
           )""",
    ),
}


def write_legacy_store(path: Path, version: int = 3) -> sqlite3.Connection:
    """A pre-Alembic store at ``version`` (open, so the caller can add rows; commit and close it after)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for v in range(1, version + 1):
        for statement in LEGACY_MIGRATIONS[v]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (v,))
    conn.commit()
    return conn


def alembic_revision(path: Path) -> str | None:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]
