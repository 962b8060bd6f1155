"""A start-up log beside the planner's plan for the deployment it describes."""

from __future__ import annotations

import json

import pytest

from planner.errors import CatalogError
from planner.validation.log_check import check_log
from tests.conftest import ENGINE_LOGS as LOGS
from tests.conftest import run_cli


def _log(name: str) -> str:
    return (LOGS / name).read_text()


def test_logged_llmd_case_agrees_with_the_plan():
    # data/calibration/vllm-kv-cases.csv row llmd-llama31-8b-tp1-16k (llm-d-planner PR #205 log);
    # `make bench-accuracy` reaches -0.0% on it
    check = check_log(_log("vllm-v1-019-llmd-llama31-8b-16k.log"))
    assert check.applicable
    d = check.deployment
    assert (d.target, d.gpu, d.engine, d.engine_profile) == (
        "meta-llama/Llama-3.1-8B",
        "h100-sxm-80gb",
        "vllm",
        "vllm-v1-0.10",
    )
    assert d.memory_fraction == 0.95 and d.max_model_len == 16384
    assert abs(check.row("kv_cache").error_frac) < 0.01
    assert abs(check.row("kv_cache_tokens").error_frac) < 0.01
    assert abs(check.row("max_concurrency").error_frac) < 0.01
    assert abs(check.row("weights").error_frac) < 0.01
    assert check.row("gpu_memory_total").error_frac == 0.0


@pytest.mark.slow  # the CLI in a subprocess
def test_check_log_predicts_what_size_predicts():
    check = check_log(_log("vllm-v1-019-llmd-llama31-8b-16k.log"), gpu="h100-sxm-80gb")
    size = run_cli(
        "size",
        "--target",
        "meta-llama/Llama-3.1-8B",
        "--gpu",
        "h100-sxm-80gb",
        "--gpu-memory-gib",
        "79.19",
        "--engine",
        "vllm",
        "--engine-version",
        "0.10.0",
        "--gpu-memory-utilization",
        "0.95",
        "--max-model-len",
        "16384",
        "--json",
        check=True,
    )
    plan = json.loads(size.stdout)
    assert check.row("kv_cache_tokens").predicted == plan["kv_cache_tokens"]
    assert check.row("kv_cache").predicted == plan["per_gpu"]["kv_cache_bytes"]


def test_sglang_case_with_the_users_missing_facts():
    # data/calibration/vllm-kv-cases.csv row vllm21348-qwen3-235b-fp8-tp4-sglang:
    # the log line has neither model nor TP nor fraction
    check = check_log(
        _log("sglang-21348-qwen3-235b-fp8-tp4.log"),
        model="Qwen/Qwen3-235B-A22B-FP8",
        gpu="h100-sxm-80gb",
        tp=4,
        memory_fraction=0.93,
    )
    assert check.applicable and check.deployment.dtype == "fp8" and check.deployment.tp == 4
    assert abs(check.row("kv_cache_tokens").error_frac) < 0.05  # bench-accuracy: +2.1%


def test_missing_model_or_gpu_is_a_reason_not_a_crash():
    check = check_log(_log("trtllm-reference-memory-doc.log"))
    assert not check.applicable and "--model" in check.reason
    assert check.facts.kv_cache_tokens == 259840
    check = check_log(_log("vllm-v1-dgx-spark-mistral-gptq.log"))
    assert not check.applicable and "--gpu" in check.reason


def test_unknown_model_name_raises_a_catalog_error():
    with pytest.raises(CatalogError):
        check_log(_log("vllm-v0-12330-a100-40gb.log"), model="no-such-model-xyz")


def test_text_that_is_not_a_log():
    check = check_log("just some text")
    assert not check.applicable and "no serving-engine" in check.reason


#: Lines a vLLM 0.34 start-up prints about memory, written from the format strings of its source
#: (v1/worker/gpu_worker.py determine_available_memory, v1/worker/extensible_kv_cache.py measure_kv_cache_blocks);
#: no release line, so the planner must place it by what it says.
VLLM_034_LINES = """\
INFO [gpu_model_runner.py:3120] Model loading took 14.99 GiB memory and 6.2 seconds
INFO [gpu_worker.py:790] Available KV cache memory: 61.40 GiB
INFO [gpu_worker.py:808] CUDA graph memory profiling is enabled (default since v0.21.0). The current \
--gpu-memory-utilization=1.0000 is equivalent to --gpu-memory-utilization=0.9893 without CUDA graph memory profiling.
INFO [extensible_kv_cache.py:703] Memory after warmup: 61.30 GiB free, 0.02 GiB committed to the KV cache, 1.91 GiB \
kept for transient activations (1.91 GiB allocated at peak, 0.00 GiB of torch reservation growth); 3788 KV cache \
blocks (59.19 GiB) fit within the requested 79.19 GiB. Torch may reserve up to 17.50 GiB.
INFO [kv_cache_utils.py:1301] GPU KV cache size: 242,432 tokens
"""


def test_a_log_sized_after_warm_up_is_read_at_its_final_size_and_placed_at_0_34():
    check = check_log(VLLM_034_LINES, model="meta-llama/Llama-3.1-8B", gpu="h100-sxm-80gb")
    facts = check.facts
    assert facts.kv_sized_after_warmup and facts.num_gpu_blocks == 3788
    assert facts.kv_cache_bytes == round(59.19 * 2**30)  # the final size, not the estimate before warm-up
    assert check.deployment.engine_profile == "vllm-v1-0.34"
    assert any("sizes the KV cache after warm-up" in note for note in check.notes)


def test_a_log_sized_from_the_graph_subtracting_estimate_is_placed_before_0_34():
    estimate_only = "\n".join(line for line in VLLM_034_LINES.splitlines() if "Memory after warmup" not in line)
    check = check_log(estimate_only, model="meta-llama/Llama-3.1-8B", gpu="h100-sxm-80gb")
    assert not check.facts.kv_sized_after_warmup
    assert check.deployment.engine_profile == "vllm-v1-0.28"
