"""Prompt datasets: the shipped defaults, the file hash, and errors that name the line."""

from __future__ import annotations

import json

import pytest

from planner.errors import InputError
from planner.measure.prompts import load_prompts


def test_default_set_has_every_task():
    prompts = load_prompts()
    assert set(prompts.tasks) == {"chat", "code", "summarisation"}
    assert all(n >= 5 for n in prompts.tasks.values())
    assert all(p.prompt.strip() for p in prompts.prompts)


def test_hash_is_of_the_bytes_and_changes_with_them(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"prompt": "hi", "task": "chat"}) + "\n")
    first = load_prompts(path)
    assert first.sha256 == load_prompts(str(path)).sha256
    path.write_text(json.dumps({"prompt": "hi!", "task": "chat"}) + "\n")
    assert load_prompts(path).sha256 != first.sha256


def test_limited_keeps_the_first_prompts_of_each_task():
    subset = load_prompts().limited(2)
    assert subset.tasks == {"chat": 2, "code": 2, "summarisation": 2}


@pytest.mark.parametrize(
    "line",
    ["not json", "[1, 2]", '{"task": "chat"}', '{"prompt": "  ", "task": "chat"}', '{"prompt": "x"}'],
)
def test_bad_lines_name_the_file_and_line(tmp_path, line):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"prompt": "ok", "task": "chat"}) + "\n" + line + "\n")
    with pytest.raises(InputError) as err:
        load_prompts(path)
    assert err.value.field == "prompts" and err.value.value == "bad.jsonl line 2"


def test_missing_or_empty_files_are_input_errors(tmp_path):
    with pytest.raises(InputError):
        load_prompts(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError):
        load_prompts(empty)
