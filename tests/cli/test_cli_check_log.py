"""`python -m planner check-log FILE`: parsed facts and the comparison with `size`, as JSON and text."""

from __future__ import annotations

import json

from tests.conftest import ENGINE_LOGS as LOGS
from tests.conftest import run_cli


def test_check_log_json_for_the_logged_llmd_case():
    out = run_cli("check-log", str(LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log"), "--json", check=True)
    payload = json.loads(out.stdout)
    assert payload["applicable"] and payload["facts"]["kv_cache_tokens"] == 476016
    rows = {r["quantity"]: r for r in payload["comparison"]}
    # data/calibration/vllm-kv-cases.csv row llmd-llama31-8b-tp1-16k: 476,016 tokens logged; the plan is within 1%
    assert abs(rows["kv_cache_tokens"]["error_frac"]) < 0.01
    assert payload["deployment"]["engine_profile"] == "vllm-v1-0.10"


def test_check_log_text_and_user_supplied_facts():
    out = run_cli(
        "check-log",
        str(LOGS / "sglang-21348-qwen3-235b-fp8-tp4.log"),
        "--model",
        "Qwen/Qwen3-235B-A22B-FP8",
        "--gpu",
        "h100-sxm-80gb",
        "--tp",
        "4",
        "--gpu-memory-utilization",
        "0.93",
        check=True,
    )
    assert (
        "engine: sglang" in out.stdout and "kv_cache_tokens" in out.stdout and "planner (sglang-0.5.20)" in out.stdout
    )


def test_check_log_without_enough_facts_explains_why():
    out = run_cli("check-log", str(LOGS / "trtllm-reference-memory-doc.log"), check=True)
    assert "no comparison" in out.stdout and "--model" in out.stdout


def test_missing_file_is_exit_code_2():
    proc = run_cli("check-log", "/no/such/file.log")
    assert proc.returncode == 2 and "file" in proc.stderr
