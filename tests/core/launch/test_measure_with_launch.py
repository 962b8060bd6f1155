"""The measurement harness takes a generated launch command: the vLLM backend gets the command's engine knobs."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.launch import launch_config, render_launch
from planner.measure.launch_options import with_launch
from planner.measure.options import MeasureOptions
from tests.conftest import run_cli

BASE = MeasureOptions(target="/models/target", draft="/models/draft")


def _dep(**fields) -> Deployment:
    planned = {
        "draft": get_model("Llama-3.2-1B"),
        "engine_version": "0.19.0",
        "memory_fraction": 0.85,
        "max_model_len": 8192,
        "max_num_seqs": 48,
        "num_speculative_tokens": 3,
    }
    return Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), **(planned | fields))


def test_a_generated_vllm_command_sets_the_measured_engine():
    config = launch_config(_dep(kv_dtype="fp8"))
    options = with_launch(BASE, render_launch(config, "vllm"), source="serve.sh")
    args = options.engine_args
    assert options.backend == "vllm" and options.k == 3 and options.tensor_parallel_size == 1
    assert args["gpu_memory_utilization"] == 0.85
    assert args["max_model_len"] == 8192 and args["max_num_seqs"] == 48
    assert args["max_num_batched_tokens"] == config.settings.max_num_batched_tokens
    assert args["kv_cache_dtype"] == "fp8"
    assert args["speculative_config"]["method"] == "draft_model"
    assert args["speculative_config"]["draft_tensor_parallel_size"] == 1


def test_other_engines_and_plain_commands_are_refused():
    sglang = render_launch(launch_config(_dep(engine="sglang", engine_version="0.5.3", memory_fraction=None)), "sglang")
    with pytest.raises(PlannerError, match="vLLM launch command"):
        with_launch(BASE, sglang)
    plain = launch_config(_dep().without_draft()).command
    with pytest.raises(PlannerError, match="speculative decoding"):
        with_launch(BASE, plain)


@pytest.mark.slow
def test_measure_cli_reads_the_launch_file(tmp_path):
    """Without the vllm package (no GPU here) the command reaches the vLLM backend and says what it needs."""
    serve = tmp_path / "serve.sh"
    serve.write_text(launch_config(_dep()).command)
    config = tmp_path / "config.json"
    config.write_text(get_model("Llama-3.2-1B").model_dump_json(include={"config"})[10:-1])
    proc = run_cli(
        "measure", "--target-config", str(config), "--draft-config", str(config), "--random-weights",
        "--launch", str(serve), "--no-save",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "vllm" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
