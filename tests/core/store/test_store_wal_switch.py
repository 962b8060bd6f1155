"""A new store file switches to WAL mode even while another process holds the file: SQLite refuses the switch at once
("database is locked") instead of waiting out the busy timeout, so two processes opening a new store together must
not fail on it."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from planner.store.engine import _ensure_wal


def test_the_switch_to_wal_waits_for_a_lock_another_connection_holds(tmp_path):
    path = tmp_path / "store.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")  # what another process's first write holds
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("PRAGMA journal_mode = WAL")  # what a plain switch does meanwhile
    release = threading.Timer(0.2, lambda: holder.execute("COMMIT"))
    release.start()
    cursor = other.cursor()
    _ensure_wal(cursor)
    release.join()
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    holder.close()
    other.close()


def test_a_file_already_in_wal_mode_is_left_as_it_is(tmp_path):
    path = tmp_path / "store.sqlite3"
    first = sqlite3.connect(path, isolation_level=None)
    first.execute("PRAGMA journal_mode = WAL")
    second = sqlite3.connect(path, isolation_level=None)
    _ensure_wal(second.cursor())
    assert second.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    first.close()
    second.close()
