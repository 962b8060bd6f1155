"""`python -m planner size`: the JSON contract, a worked example and clear errors."""

from __future__ import annotations

import json

import pytest

from tests.conftest import MEMORY_COMPONENTS, run_cli

PER_GPU_KEYS = {"total_bytes", "memory_limit_bytes", *MEMORY_COMPONENTS}


def test_size_json_contract_for_the_worked_example():
    out = json.loads(
        run_cli(
            "size",
            "--target",
            "meta-llama/Llama-3.1-70B",
            "--draft",
            "Llama-3.2-3B",
            "--node",
            "8x-h100-sxm-80gb",
            "--tp",
            "8",
            "--max-model-len",
            "8192",
            "--json",
            check=True,
        ).stdout
    )
    assert out["per_gpu"].keys() >= PER_GPU_KEYS
    assert {
        "kv_bytes_per_token_per_gpu",
        "kv_cache_tokens",
        "max_concurrency",
        "draft_kv_share_frac",
        "fits",
        "problems",
        "suggestions",
    } <= out.keys()
    assert out["fits"] is True
    assert (
        sum(out["per_gpu"][k] for k in PER_GPU_KEYS - {"total_bytes", "memory_limit_bytes"})
        == out["per_gpu"]["total_bytes"]
    )
    assert 0 < out["draft_kv_share_frac"] < 0.5


def test_size_70b_on_one_h100_explains():
    proc = run_cli("size", "--target", "Llama-3.1-70B", "--gpu", "h100-sxm-80gb", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["fits"] is False
    assert out["problems"] and any(s["fits"] for s in out["suggestions"])


def test_gpu_memory_override_replays_a_log():
    # llmd-llama31-8b-tp1-16k: 79.19 GiB, gmu 0.95, vLLM 0.19.0 -> 476,016 tokens
    out = json.loads(
        run_cli(
            "size",
            "--target",
            "Llama-3.1-8B",
            "--gpu",
            "h100-sxm-80gb",
            "--gpu-memory-gib",
            "79.19",
            "--gpu-memory-utilization",
            "0.95",
            "--engine-version",
            "0.19.0",
            "--max-model-len",
            "16384",
            "--json",
            check=True,
        ).stdout
    )
    assert out["kv_cache_tokens"] == pytest.approx(476_016, rel=0.01)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--tp", "3"), "tp"),
        (("--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--tp", "16"), "tp"),
        (
            ("--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--gpu-memory-utilization", "1.5"),
            "gpu-memory-utilization",
        ),
        (("--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--dtype", "int3"), "dtype"),
        (("--target", "Llama-3.1-70B", "--node", "nope"), "node"),
        (("--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--engine", "ollama"), "engine"),
    ],
)
def test_bad_deployments_exit_2_naming_the_field(args, field):
    proc = run_cli("size", *args)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and field in proc.stderr
