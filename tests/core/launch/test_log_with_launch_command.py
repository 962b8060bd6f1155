"""check-log with the launch command that produced the log: the command's flags set the deployment checked."""

from __future__ import annotations

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.launch import launch_config
from planner.validation import check_log
from tests.conftest import ENGINE_LOGS

LOG = (ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log").read_text()


def _command(memory_fraction: float, max_num_seqs: int) -> str:
    dep = Deployment.on_node(
        get_model("Llama-3.1-8B"),
        get_node("1x-h100-sxm-80gb"),
        engine_version="0.10.0",
        memory_fraction=memory_fraction,
        max_model_len=16384,
        max_num_seqs=max_num_seqs,
    )
    return launch_config(dep).command


def test_the_command_sets_the_knobs_the_log_checked_against():
    plain = check_log(LOG, gpu="h100-sxm-80gb")
    assert plain.deployment.memory_fraction == 0.95  # as the log states it
    with_command = check_log(
        LOG, gpu="h100-sxm-80gb", launch_command=_command(0.95, 1024)
    )  # the defaults the log ran with
    assert with_command.applicable
    assert with_command.deployment.memory_fraction == 0.95
    assert with_command.deployment.max_model_len == 16384
    assert with_command.row("kv_cache_tokens").predicted == plain.row("kv_cache_tokens").predicted
    assert any("launch command" in note for note in with_command.notes)


def test_a_command_that_differs_from_the_log_changes_the_plan():
    plain = check_log(LOG, gpu="h100-sxm-80gb")
    lower = check_log(LOG, gpu="h100-sxm-80gb", launch_command=_command(0.85, 256))
    assert lower.deployment.memory_fraction == 0.85
    assert lower.row("kv_cache_tokens").predicted < plain.row("kv_cache_tokens").predicted


def test_an_unreadable_command_is_a_reason_not_a_crash():
    check = check_log(LOG, gpu="h100-sxm-80gb", launch_command="vllm serve x --no-such-flag 3")
    assert not check.applicable and "launch command" in check.reason
