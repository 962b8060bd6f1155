"""`python -m planner launch`: the worked example's command, --out files, and one-line refusals (exit 2)."""

from __future__ import annotations

import json
import shlex

import yaml

from tests.conftest import ENGINE_LOGS, run_cli

WORKED = (
    "launch",
    "--target",
    "Llama-3.1-70B",
    "--draft",
    "Llama-3.2-1B",
    "--node",
    "8x-h100-sxm-80gb",
    "--tp",
    "8",
    "--gpu-memory-utilization",
    "0.9",
    "--max-model-len",
    "32768",
    "--max-num-seqs",
    "256",
    "--k",
    "4",
    "--engine-version",
    "0.19.0",
)


def test_launch_prints_the_vllm_command_of_the_plan():
    out = run_cli(*WORKED, check=True).stdout
    words = shlex.split(out.replace("\\\n", " ").split("\nvllm", 1)[1])
    spec = json.loads(words[words.index("--speculative-config") + 1])
    assert spec["model"] == "meta-llama/Llama-3.2-1B" and spec["num_speculative_tokens"] == 4
    assert words[words.index("--gpu-memory-utilization") + 1] == "0.9"
    assert words[words.index("--max-num-seqs") + 1] == "256"


def test_launch_k8s_to_a_file(tmp_path):
    target = tmp_path / "deploy.yaml"
    proc = run_cli(*WORKED, "--format", "k8s", "--out", str(target), check=True)
    assert proc.stdout == ""
    kinds = [doc["kind"] for doc in yaml.safe_load_all(target.read_text()) if doc]
    assert kinds == ["PersistentVolumeClaim", "Deployment", "Service"]


def test_launch_trtllm_writes_the_options_file_beside_the_command(tmp_path):
    target = tmp_path / "serve.sh"
    args = [a if a != "0.19.0" else "1.0.0" for a in WORKED]
    run_cli(*args, "--engine", "trtllm", "--out", str(target), check=True)
    options = yaml.safe_load((tmp_path / "extra_llm_api_options.yaml").read_text())
    assert options["kv_cache_config"]["free_gpu_memory_fraction"] == 0.9
    assert "trtllm-serve meta-llama/Llama-3.1-70B" in target.read_text()


def test_a_plan_that_does_not_fit_exits_2_with_one_line():
    proc = run_cli("launch", "--target", "Llama-3.1-70B", "--node", "1x-h100-sxm-80gb")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no launch command: the plan does not fit" in lines[0]


def test_a_format_of_another_engine_is_refused():
    proc = run_cli(*WORKED, "--format", "sglang")
    assert proc.returncode == 2 and "format" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_check_log_takes_the_launch_command_that_produced_the_log(tmp_path):
    serve = tmp_path / "serve.sh"
    args = [
        "launch", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--engine-version", "0.10.0",
        "--gpu-memory-utilization", "0.85", "--max-model-len", "16384", "--out", str(serve),
    ]  # fmt: skip
    run_cli(*args, check=True)
    log = ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log"
    out = json.loads(
        run_cli("check-log", str(log), "--gpu", "h100-sxm-80gb", "--launch-command", str(serve), "--json").stdout
    )
    assert out["applicable"] and out["deployment"]["memory_fraction"] == 0.85  # the log says 0.95; the command 0.85
    assert any("launch command" in note for note in out["notes"])
