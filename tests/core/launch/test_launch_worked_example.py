"""The worked example: Llama-3.1-70B + Llama-3.2-1B on 8x H100 at gpu_memory_utilization 0.9, 32,768 tokens,
256 sequences, K 4; refusals carry the plan's reason; release rules come from the recorded flags."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.launch import NotLaunchableError, launch_config, read_launch_command, render_launch
from planner.launch.releases import release_for
from planner.memory import plan_memory


def worked_example(**changes) -> Deployment:
    fields = {
        "tp": 8,
        "draft": get_model("Llama-3.2-1B"),
        "memory_fraction": 0.9,
        "max_model_len": 32768,
        "max_num_seqs": 256,
        "num_speculative_tokens": 4,
        "engine_version": "0.19.0",
        **changes,
    }
    return Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), **fields)


def _flag(words: list[str], option: str) -> str:
    return words[words.index(option) + 1]


def test_worked_example_vllm_command_carries_the_plan():
    dep = worked_example()
    plan = plan_memory(dep)
    words = shlex.split(render_launch(launch_config(dep, plan), "vllm").replace("\\\n", " ").split("\nvllm", 1)[1])
    config = json.loads(_flag(words, "--speculative-config"))
    assert config["model"] == "meta-llama/Llama-3.2-1B"
    assert config["num_speculative_tokens"] == 4
    assert config["draft_tensor_parallel_size"] == dep.resolved_draft_tp == 8
    assert config["method"] == "draft_model"
    assert float(_flag(words, "--gpu-memory-utilization")) == plan.limits.memory_fraction == 0.9
    assert int(_flag(words, "--max-model-len")) == plan.max_model_len == 32768
    assert int(_flag(words, "--max-num-seqs")) == plan.limits.max_num_seqs == 256
    assert int(_flag(words, "--max-num-batched-tokens")) == plan.limits.max_num_batched_tokens
    assert int(_flag(words, "--tensor-parallel-size")) == 8


def test_assumed_values_are_marked_in_a_comment():
    text = launch_config(worked_example()).command
    assumed = [line for line in text.splitlines() if line.startswith("# assumed:")]
    assert any("--max-num-batched-tokens" in line for line in assumed)  # the deployment left it to the engine
    assert not any("--max-num-seqs" in line for line in assumed)  # the user set 256


def _command_words(command: str) -> list[str]:
    """The engine command's words after its program (comment lines and a ``VLLM_USE_V1=0`` prefix left out)."""
    body = " ".join(line for line in command.replace("\\\n", " ").splitlines() if not line.startswith("#"))
    words = shlex.split(body)
    return words[words.index("serve") + 1 :]


def test_releases_before_the_change_get_the_older_speculative_flags():
    dep = worked_example(engine="vllm-v0", engine_version="0.8.1")
    words = _command_words(launch_config(dep).command)
    assert _flag(words, "--speculative-model") == "meta-llama/Llama-3.2-1B"
    assert _flag(words, "--num-speculative-tokens") == "4"
    assert "--speculative-config" not in words
    newer = launch_config(worked_example(engine="vllm-v0", engine_version="0.8.3")).command
    assert "--speculative-config" in newer and "--speculative-model" not in newer


def test_a_flag_the_release_does_not_know_is_never_emitted():
    for engine, version in (("vllm-v0", "0.6.6"), ("vllm-v0", "0.8.2"), ("vllm", "0.10.0"), ("vllm", "0.21.0")):
        _, release, _ = release_for(engine, version)
        for base in (worked_example(), worked_example(draft=None)):
            dep = base.replace(engine=engine, engine_version=version)
            try:
                config = launch_config(dep)
            except NotLaunchableError:
                continue
            words = _command_words(config.command)
            assert all(release.knows(w) for w in words if w.startswith("--")), (version, words)


def test_a_plan_that_does_not_fit_emits_no_command_and_says_why():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("1x-h100-sxm-80gb"))
    plan = plan_memory(dep)
    with pytest.raises(NotLaunchableError) as caught:
        launch_config(dep, plan)
    assert "does not fit" in caught.value.reason
    assert plan.problems[0] in caught.value.reason


def test_a_plan_that_would_not_start_says_the_engines_reason():
    dep = worked_example(engine_version="0.11.0")  # V1 runs a separate draft model from 0.14
    plan = plan_memory(dep)
    assert not plan.starts
    with pytest.raises(NotLaunchableError) as caught:
        launch_config(dep, plan)
    assert plan.start_problems[0] in caught.value.reason


def test_sglang_release_without_the_algorithm_is_refused():
    """SGLang 0.4 has no separate draft model (no STANDALONE algorithm): no command is written for it."""
    dep = worked_example(engine="sglang", engine_version="0.4.6")
    with pytest.raises(PlannerError):
        launch_config(dep)


def test_sglang_chain_flags():
    text = render_launch(launch_config(worked_example(engine="sglang", engine_version="0.5.3")), "sglang")
    words = shlex.split(text.replace("\\\n", " ").split("\npython3", 1)[1])
    assert _flag(words, "--speculative-algorithm") == "STANDALONE"
    assert _flag(words, "--speculative-num-steps") == "4"
    assert _flag(words, "--speculative-num-draft-tokens") == "5"
    assert _flag(words, "--mem-fraction-static") == "0.9"
    assert read_launch_command(text).max_num_seqs == 256


def test_trtllm_options_file_holds_the_memory_fraction_and_speculation():
    config = launch_config(worked_example(engine="trtllm", engine_version=None))
    options = yaml.safe_load(config.options_file)
    assert options["kv_cache_config"]["free_gpu_memory_fraction"] == 0.9
    assert options["speculative_config"] == {
        "decoding_type": "Draft_Target",
        "max_draft_len": 4,
        "speculative_model": "meta-llama/Llama-3.2-1B",
    }
    assert "--extra_llm_api_options extra_llm_api_options.yaml" in config.command


def test_an_unknown_flag_in_a_pasted_command_is_rejected():
    text = launch_config(worked_example()).command + " \\\n  --speculative-model x"
    with pytest.raises(Exception, match="speculative-model"):
        read_launch_command(text)


def test_recorded_flag_history_matches_the_releases():
    assert release_for("vllm-v0", "0.8.2")[1].knows("--speculative-model")
    assert release_for("vllm-v0", "0.8.2")[1].knows("--speculative-config")
    assert not release_for("vllm-v0", "0.8.1")[1].knows("--speculative-config")
    assert not release_for("vllm-v0", "0.8.3")[1].knows("--num-speculative-tokens")
    source = release_for("vllm", "0.19.0")[1].source_of("--speculative-config")
    assert source.startswith("https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/engine/arg_utils.py#L")
