"""The store and record files under load and faults: parallel writers, SIGKILLs, locks, damage, bad rows."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.measure.record import clean_orphans, load_records, save_record
from planner.store import engine, forget_engines
from planner.store.migrate import HEAD
from planner.validation.store import StoreError, list_measurements, read_measurement_rows, save_measurement
from tests.measure_records import sample_record

REPO = Path(__file__).resolve().parents[2]
WORKER = """
import sys
from planner.measure.record import save_record
from tests.measure_records import sample_record
folder, store_path, worker, start, stop = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
base = sample_record()
for i in range(start, stop):
    record = base.model_copy(update={"id": f"w{worker}-{i:04d}"})
    save_record(record, folder, store_path=store_path)
    print(record.id, flush=True)
"""


def _start(folder: Path, db: Path, worker: int, start: int, stop: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(folder), str(db), str(worker), str(start), str(stop)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.slow
def test_four_writers_with_random_sigkills_lose_nothing_and_leave_nothing_half_written(tmp_path):
    """4 processes x 200 saves, killed at random and restarted: every completed save is readable and distinct."""
    folder, db = tmp_path / "records", tmp_path / "store.sqlite3"
    saves, rng = 200, random.Random(13)
    completed: dict[int, list[str]] = {w: [] for w in range(4)}
    running = {w: _start(folder, db, w, 0, saves) for w in range(4)}
    kills = 0
    deadline = time.monotonic() + 120
    while running and time.monotonic() < deadline:
        time.sleep(rng.uniform(0.2, 0.6))
        for w, proc in list(running.items()):
            if proc.poll() is not None:
                out, err = proc.communicate()
                completed[w] += out.split()
                assert proc.returncode == 0, err
                del running[w]
        if running and kills < 12:
            w = rng.choice(sorted(running))
            running[w].send_signal(signal.SIGKILL)
            out, _ = running[w].communicate()
            completed[w] += out.split()
            kills += 1
            next_index = len(set(completed[w]))
            running[w] = _start(folder, db, w, next_index, saves)
    assert not running, "writers did not finish in time"
    done = {i for ids in completed.values() for i in ids}
    assert len(done) == 4 * saves and kills >= 8
    records, problems = load_records(folder, store_path=db)  # also cleans orphans and repairs missing rows
    assert problems == []
    assert {r.id for r in records} >= done and len({r.id for r in records}) == len(records)
    assert {m.id for m in list_measurements(path=db)} == {r.id for r in records}
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], "orphaned temporary files"
    for path in folder.glob("*.json"):
        json.loads(path.read_text())  # no partial record


def test_concurrent_first_creation_applies_each_migration_once(tmp_path):
    db = tmp_path / "fresh.sqlite3"
    code = "import sys; from planner.validation.store import connect\nwith connect(sys.argv[1]): pass\n"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(db)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        for _ in range(6)
    ]
    assert [p.wait(600) for p in procs] == [0] * 6  # a guard against a hang, not a timing check
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_bad_rows_are_skipped_and_reported_never_fatal(tmp_path):
    db = tmp_path / "s.sqlite3"
    good = sample_record()
    save_record(good, tmp_path / "m", store_path=db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO measurements VALUES ('list', '2026', 'g', 't', 'd', '[1, 2]')")
        conn.execute("INSERT INTO measurements VALUES ('text', '2026', 'g', 't', 'd', 'not json')")
        conn.execute("INSERT INTO measurements VALUES ('blob', '2026', 'g', 't', 'd', x'00ff')")
        conn.execute("INSERT INTO measurements VALUES ('other', '2026', 'g', 't', 'd', '{\"id\": 3}')")
    conn.close()
    rows, problems = read_measurement_rows(path=db)
    assert len(rows) == 2 and len(problems) == 3
    records, problems = load_records(tmp_path / "none", store_path=db)
    assert [r.id for r in records] == [good.id] and len(problems) == 4


def test_a_row_is_checked_on_write(tmp_path):
    with pytest.raises(StoreError, match="JSON object"):
        save_measurement("a", "2026", "g", "t", "d", "[1]", path=tmp_path / "s.sqlite3")
    with pytest.raises(StoreError, match="id"):
        save_measurement("a", "2026", "g", "t", "d", '{"id": "b"}', path=tmp_path / "s.sqlite3")


def test_a_locked_store_is_a_clear_error(tmp_path, monkeypatch):
    db = tmp_path / "s.sqlite3"
    save_measurement("a", "2026", "g", "t", "d", "{}", path=db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(engine, "BUSY_TIMEOUT_S", 0.2)
    forget_engines()
    try:
        with pytest.raises(StoreError, match="locked by another process"):
            save_measurement("b", "2026", "g", "t", "d", "{}", path=db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        forget_engines()
    save_measurement("b", "2026", "g", "t", "d", "{}", path=db)


def test_a_damaged_store_says_how_to_get_out(tmp_path):
    db = tmp_path / "s.sqlite3"
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    with pytest.raises(StoreError, match="move it aside"):
        list_measurements(path=db)
    save_record(sample_record(), tmp_path / "m", store_path=tmp_path / "ok.sqlite3")
    records, problems = load_records(tmp_path / "m", store_path=db)
    assert len(records) == 1 and any("damaged" in p for p in problems)


def test_orphans_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = tmp_path / f".rec.{proc.pid}.abc.tmp"
    live = tmp_path / f".rec.{os.getpid()}.abc.tmp"
    dead.write_text("{")
    live.write_text("{")
    assert clean_orphans(tmp_path) == [dead.name] and live.exists()


def test_runtime_files_go_to_planner_home(tmp_path, monkeypatch):
    monkeypatch.delenv("PLANNER_STORE_PATH", raising=False)
    monkeypatch.delenv("PLANNER_MEASUREMENTS_DIR", raising=False)
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    assert not (tmp_path / "home").exists()
    assert load_records() == ([], [])  # reading creates nothing
    assert not (tmp_path / "home").exists()
    path = save_record(sample_record())
    assert path.parent == tmp_path / "home" / "measurements"
    assert (tmp_path / "home" / "store.sqlite3").is_file()
    assert not (REPO / "data" / "measurements").exists()
