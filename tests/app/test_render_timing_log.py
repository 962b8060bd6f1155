"""The render-time log `make bench-app` reads: written only when PLANNER_RENDER_LOG names a file."""

from __future__ import annotations

import json

import pytest

from tests.app.conftest import page
from ui._timing import LOG_ENV, timed


def test_nothing_is_written_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(LOG_ENV, raising=False)
    with timed("run", "sizing"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_each_timed_block_appends_one_line_even_when_it_raises(tmp_path, monkeypatch):
    log = tmp_path / "render.jsonl"
    monkeypatch.setenv(LOG_ENV, str(log))
    with timed("run") as label:
        label.name = "fleet"
    with pytest.raises(RuntimeError), timed("export", "pdf"):
        raise RuntimeError("stopped")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["kind"], e["name"]) for e in lines] == [("run", "fleet"), ("export", "pdf")]
    assert all(e["seconds"] >= 0 and e["cpu_seconds"] >= 0 and e["start"] > 0 for e in lines)


def test_an_app_run_logs_its_page(tmp_path, monkeypatch):
    log = tmp_path / "render.jsonl"
    monkeypatch.setenv(LOG_ENV, str(log))
    at = page("catalog.py")
    at.run()
    assert not at.exception
    names = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert names[-1] == "catalog"
