"""`make validate-gpu` (bench/validate_gpu.py): its CPU smoke path, and a clean refusal without CUDA."""

from __future__ import annotations

import json

import pytest
import torch

from bench.validate_gpu import PAIRS, cuda_refusal, main, run_pairs

pytestmark = pytest.mark.torch


@pytest.mark.slow
def test_tiny_mode_runs_every_pair_and_writes_records(tmp_path, tmp_store):
    rows = run_pairs(tiny=True, out=str(tmp_path / "records"))
    assert [(target, draft) for target, draft, _, _ in rows] == list(PAIRS)
    records = [record for _, _, record, _ in rows]
    assert all(r is not None and r.status == "ok" for r in records)
    assert all(r.tokens_per_s > 0 and r.baseline_tokens_per_s > 0 and 1 <= r.mean_accepted_len <= 6 for r in records)
    assert all(r.predicted.memory.peak_memory_bytes > 0 for r in records)  # predicted for the chosen GPU
    files = [json.loads(p.read_text()) for p in (tmp_path / "records").glob("*.json")]
    assert len(files) == 3 and all(f["random_weights"] and not f["acceptance_meaningful"] for f in files)


def test_without_cuda_it_exits_2_with_one_line(capsys, tmp_store):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible: the real validation would run")
    assert "CUDA" in cuda_refusal()
    assert main([]) == 2
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and "CUDA" in out.err and out.out == ""
