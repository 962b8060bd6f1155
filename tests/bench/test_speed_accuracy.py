"""`make bench-speed-accuracy` (bench/speed_accuracy.py) parses the published rows by rule and keeps the
calibration goal (median error <= 15%) on the rows that report acceptance: a guard against calibration regressions."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.speed_accuracy import GOAL_PCT, goal_median_error_pct, goal_rows
from bench.speed_rows import Case, Skipped, _engine, load_rows
from tests.conftest import REPO


def test_engine_names_map_by_rule():
    assert _engine("vLLM v0.6.7 (ROCm 6.3.1)") == "vllm-v0"  # V1 became the default in 0.8
    assert _engine("vLLM V1 draft_model (PR branch)") == "vllm"
    assert _engine("TensorRT-LLM v0.14 (draft-target)") == "trtllm"
    assert _engine("SSD research codebase (standard SD mode)") is None
    assert _engine("HF transformers (dynamic)") is None  # dynamic K is not a fixed-K workload


def test_every_row_is_a_case_or_has_a_reason():
    rows = load_rows()
    assert len(rows) == 61
    assert all(isinstance(r, Case) or (isinstance(r, Skipped) and r.reason) for r in rows)
    mi355 = [r for r in rows if r.row in (50, 51, 52, 53, 54)]  # MI355X rows of vllm-project/vllm#53987
    assert all(isinstance(r, Case) for r in mi355)
    heads = [r for r in rows if r.row in range(57, 63)]  # EAGLE-3 rows of vllm-project/vllm#20780
    assert all(isinstance(r, Case) and r.deployment.speculative_method == "eagle3" for r in heads)


def test_goal_is_met_on_the_rows_that_report_acceptance():
    goal = goal_rows([r for r in load_rows() if isinstance(r, Case)])
    assert len(goal) == 11
    assert all(predicted > 0 for _, predicted, _ in goal)
    assert goal_median_error_pct(goal) <= GOAL_PCT  # data/speed_profiles.json calibration: 2.3%


@pytest.mark.slow
def test_bench_prints_every_section():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.speed_accuracy"], capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300, check=True,
    )  # fmt: skip
    for heading in ("Rows that report acceptance", "Rows without acceptance", "Plain decoding", "cannot express"):
        assert heading in proc.stdout
