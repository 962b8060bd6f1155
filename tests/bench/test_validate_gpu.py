"""`make validate-gpu` (bench/validate_gpu.py): its CPU smoke path, and a clean refusal without CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench.validate_gpu", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        timeout=300,
    )


def test_tiny_mode_runs_every_pair_and_writes_records(tmp_path):
    proc = _run("--tiny", "--out", str(tmp_path / "records"), env={"PLANNER_STORE_PATH": str(tmp_path / "s.sqlite3")})
    assert proc.returncode == 0, proc.stderr
    for pair in ("Llama-3.1-8B + Llama-3.2-1B", "Qwen2.5-7B + Qwen2.5-0.5B", "Llama-3.2-3B + Llama-3.2-1B"):
        assert pair in proc.stdout
    records = [json.loads(p.read_text()) for p in (tmp_path / "records").glob("*.json")]
    assert len(records) == 3 and all(r["status"] == "ok" for r in records)
    assert all(r["random_weights"] and not r["acceptance_meaningful"] for r in records)


def test_without_cuda_it_exits_2_with_one_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible: the real validation would run")
    proc = _run(env={"PLANNER_STORE_PATH": str(tmp_path / "s.sqlite3")})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "CUDA" in proc.stderr and proc.stdout == ""
