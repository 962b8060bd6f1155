"""Measurement records: JSON round trip, atomic files that survive a crash, loading from folder and store."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys

import pytest

from planner.measure import record as record_module
from planner.measure.record import MeasurementRecord, load_records, make_record_id, save_record, write_atomic
from tests.measure_records import sample_record


def test_round_trip_through_json():
    record = sample_record()
    again = MeasurementRecord.model_validate_json(record.model_dump_json())
    assert again == record
    assert again.pair == "tgt + drf" and again.gpu_label == "h100-sxm-80gb"


def test_record_ids_sort_by_time_and_are_file_safe():
    first = make_record_id("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-0.5B", "vllm", "2026-01-02T03:04:05Z", unique="ab12")
    later = make_record_id("a", "b", "vllm", "2026-01-02T03:04:06Z")
    assert first == "20260102T030405Z-qwen2.5-7b--qwen2.5-0.5b-vllm-ab12"
    assert sorted([later, first])[0] == first
    assert "/" not in make_record_id("x/y z", "../etc", "transformers", "2026-01-01T00:00:00Z")


def test_save_writes_the_file_and_the_store(tmp_path):
    record = sample_record()
    path = save_record(record, tmp_path / "m", store_path=tmp_path / "s.sqlite3")
    assert path.name == f"{record.id}.json"
    assert json.loads(path.read_text())["id"] == record.id
    records, problems = load_records(tmp_path / "empty", store_path=tmp_path / "s.sqlite3")
    assert problems == [] and [r.id for r in records] == [record.id]  # found through the store alone


def test_a_crash_halfway_through_writing_leaves_no_file(tmp_path, monkeypatch):
    folder = tmp_path / "m"
    old = sample_record(created_at="2026-01-01T00:00:00Z")
    save_record(old, folder, store_path=tmp_path / "s.sqlite3")
    before = sorted(p.name for p in folder.iterdir())

    real_chunks = record_module._chunks

    def crashing_chunks(payload):
        for number, chunk in enumerate(real_chunks(payload)):
            if number == 50:
                raise KeyboardInterrupt("the machine went away mid-write")
            yield chunk

    monkeypatch.setattr(record_module, "_chunks", crashing_chunks)
    new = sample_record(created_at="2026-02-01T00:00:00Z")
    with pytest.raises(KeyboardInterrupt):
        save_record(new, folder, store_path=tmp_path / "s.sqlite3")
    assert sorted(p.name for p in folder.iterdir()) == before  # no partial file, no temp file left behind
    records, problems = load_records(folder, store_path=tmp_path / "s.sqlite3")
    assert problems == [] and [r.id for r in records] == [old.id]  # nor a store row


def test_overwriting_is_all_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    write_atomic(path, {"version": 1})

    def failing(payload):
        yield '{"version": '
        raise ValueError("cannot serialise this value")

    monkeypatch.setattr(record_module, "_chunks", failing)
    with pytest.raises(ValueError):
        write_atomic(path, {"version": 2})
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_loading_skips_files_that_are_not_records_and_says_so(tmp_path):
    folder = tmp_path / "m"
    save_record(sample_record(), folder, store_path=tmp_path / "s.sqlite3")
    (folder / "notes.json").write_text('{"hello": 1}')
    (folder / "broken.json").write_text("{")
    records, problems = load_records(folder, use_store=False)
    assert len(records) == 1
    assert sorted(p.split(":")[0] for p in problems) == ["broken.json", "notes.json"]


@pytest.mark.slow  # a fresh interpreter
def test_records_load_without_torch(repo):
    code = (
        "import sys\n"
        "import planner.measure.record, planner.measure.prediction, planner.measure.prompts\n"
        "import planner.measure.acceptance_counts, planner.measure.nvml_sampler, planner.measure.vllm_metrics\n"
        "import planner.validation.engine_log, planner.validation.log_check, planner.validation.store\n"
        "import planner.reports.charts.measure\n"
        "print([m for m in ('torch', 'transformers', 'pynvml', 'vllm') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "name",
    [
        "nvml_sampler",
        "acceptance_counts",
        "prompts",
        "record",
        "prediction",
        "vllm_metrics",
        pytest.param("model_loading", marks=pytest.mark.torch),
    ],
)
def test_worked_examples_in_measure_docstrings(name):
    """The house-rules doctest run skips planner.measure (it may load torch); these examples must hold too."""
    module = importlib.import_module(f"planner.measure.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize(
    "stray",
    [
        ".x.99999999999999999999.abc.tmp",
        ".x.0.abc.tmp",
        ".x.-1.abc.tmp",
        ".x.4194305.abc.tmp",
        ".x." + "9" * 4000 + ".a.tmp",
    ],
)
def test_a_stray_temporary_name_never_stops_a_save_or_a_load(tmp_path, stray):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / stray[:250]).write_text("not ours")
    record = sample_record()
    path = save_record(record, folder, store_path=tmp_path / "s.sqlite3")
    assert path.exists()
    assert (folder / stray[:250]).exists()  # not a process id this machine issues: someone else's file, kept
    records, _ = load_records(folder, store_path=tmp_path / "s.sqlite3")
    assert [r.id for r in records] == [record.id]


def test_a_record_the_folder_refuses_goes_to_the_store_and_says_where(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the folder should be")
    record = sample_record()
    saved = record_module.save_record_where(record, blocked / "m", store_path=tmp_path / "s.sqlite3")
    assert saved.path is None and saved.in_store
    assert "could not write the file" in saved.message and "s.sqlite3" in saved.message
    records, _ = load_records(tmp_path / "other", store_path=tmp_path / "s.sqlite3")
    assert [r.id for r in records] == [record.id]


def test_a_record_the_store_refuses_is_kept_as_a_file_and_says_so(tmp_path):
    bad_store = tmp_path / "store-dir"
    bad_store.mkdir()  # a folder where the store file should be: SQLite cannot open it
    saved = record_module.save_record_where(sample_record(), tmp_path / "m", store_path=bad_store)
    assert saved.path is not None and saved.path.exists() and not saved.in_store
    assert "could not add it to the store" in saved.message


def test_a_record_neither_place_takes_is_an_error_naming_both(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    bad_store = tmp_path / "store-dir"
    bad_store.mkdir()
    with pytest.raises(record_module.PlannerError, match=r"not saved: could not write the file.*store"):
        record_module.save_record_where(sample_record(), blocked / "m", store_path=bad_store)
