"""Four `measure` runs of one pair at once: four records, all distinct, all readable, no orphaned temp file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.measure.record import load_records
from tests.conftest import TINY_LLAMA

REPO = Path(__file__).resolve().parents[2]
#: More runs than cores: several of them write their record in the same second.
RUNS = 4


@pytest.mark.slow
def test_parallel_measure_runs_of_one_pair_are_all_kept(tmp_path):
    (tmp_path / "target.json").write_text(json.dumps(TINY_LLAMA))
    (tmp_path / "draft.json").write_text(json.dumps(TINY_LLAMA | {"num_hidden_layers": 1, "hidden_size": 32}))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "Hello there", "task": "chat"}\n')
    out, db = tmp_path / "records", tmp_path / "store.sqlite3"
    argv = [sys.executable, "-m", "planner", "measure", "--target-config", str(tmp_path / "target.json"),
            "--draft-config", str(tmp_path / "draft.json"), "--random-weights", "--device", "cpu", "--k", "2",
            "--max-new-tokens", "4", "--prompts", str(prompts), "--out", str(out), "--json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), "PLANNER_STORE_PATH": str(db)}
    procs = [
        subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(RUNS)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * RUNS, [err.decode()[-500:] for _, err in results]
    ids = {json.loads(stdout)["id"] for stdout, _ in results}
    assert len(ids) == RUNS
    records, problems = load_records(out, store_path=db)
    assert problems == [] and {r.id for r in records} == ids
    assert not [p.name for p in out.iterdir() if not p.name.endswith(".json")]
