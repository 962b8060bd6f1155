"""Launch commands round-trip: 50 seeded random plans per engine, emitted for a random recorded release, parse back
with that release's recorded argument definitions to the same deployment."""

from __future__ import annotations

import random

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.launch import (
    NotLaunchableError,
    deployment_from_settings,
    launch_config,
    read_launch_command,
    render_launch,
)
from planner.launch.releases import recorded_releases
from planner.memory import plan_memory

PAIRS = (
    ("Llama-3.1-8B", "Llama-3.2-1B"),
    ("Llama-3.1-70B", "Llama-3.2-1B"),
    ("Llama-3.1-70B", "Llama-3.2-3B"),
    ("Llama-3.1-8B", "EAGLE3-LLaMA3.1-Instruct-8B"),
    ("Qwen3-8B", "Qwen3-0.6B"),
    ("Qwen2.5-7B", "Qwen2.5-0.5B"),
    ("Llama-3.1-8B", None),
    ("Qwen3-8B", None),
)
pytestmark = pytest.mark.slow  # 200 plans, each planned and parsed

NODES = ("1x-h100-sxm-80gb", "8x-h100-sxm-80gb", "8x-h200-sxm-141gb", "8x-a100-sxm-80gb", "4x-l40s-48gb")


def random_deployment(rng: random.Random, engine: str) -> Deployment:
    target, draft = rng.choice(PAIRS)
    node = get_node(rng.choice(NODES))
    tp = rng.choice([d for d in (1, 2, 4, 8) if d <= node.gpu_count])
    release = rng.choice(recorded_releases(engine)).release
    fields: dict = {
        "tp": tp,
        "engine": engine,
        "engine_version": None if engine == "trtllm" or rng.random() < 0.2 else release,
        "memory_fraction": rng.choice([None, 0.8, 0.85, 0.9, 0.92]),
        "max_model_len": rng.choice([None, 2048, 4096, 8192, 16384, 32768]),
        "max_num_seqs": rng.choice([None, 8, 32, 64, 128, 256]),
        "max_num_batched_tokens": rng.choice([None, 2048, 4096, 8192, 16384]),
        "kv_dtype": rng.choice(["auto", "auto", "fp8"]),
        "dtype": rng.choice([None, None, "bf16", "fp8"]),
        "enforce_eager": engine != "trtllm" and rng.random() < 0.2,
        "num_speculative_tokens": rng.randint(1, 8),
    }
    if draft is not None:
        fields["draft"] = get_model(draft)
        if engine.startswith("vllm") and rng.random() < 0.3:
            fields["draft_tp"] = 1
    elif rng.random() < 0.5:
        fields["method"] = "ngram"
    return Deployment.on_node(get_model(target), node, **fields)


def expected_deployment(dep: Deployment, release: str) -> Deployment:
    """``dep`` with every knob the plan resolved written in, as the command states them."""
    plan = plan_memory(dep, with_suggestions=False)
    return dep.replace(
        memory_fraction=plan.limits.memory_fraction,
        max_model_len=plan.max_model_len,
        max_num_seqs=plan.limits.max_num_seqs,
        max_num_batched_tokens=plan.limits.max_num_batched_tokens,
        draft_tp=dep.resolved_draft_tp if dep.speculator is not None else None,
        engine_version=release if release[:1].isdigit() else None,
        num_speculative_tokens=dep.num_speculative_tokens if dep.is_speculative else 5,
    )


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang", "trtllm"])
def test_fifty_random_plans_round_trip(engine):
    rng = random.Random(f"launch-{engine}")
    checked, refused = 0, 0
    for _ in range(600):
        if checked == 50:
            break
        try:
            dep = random_deployment(rng, engine)
        except PlannerError:  # a structurally impossible draw (TP the model cannot take)
            continue
        try:
            config = launch_config(dep)
        except NotLaunchableError as exc:
            assert exc.reason  # the plan's or the release's reason, never empty
            refused += 1
            continue
        family = {"vllm-v0": "vllm"}.get(engine, engine)
        text = render_launch(config, family)
        parsed = read_launch_command(text)
        assert parsed.same_deployment(config.settings), text
        rebuilt = deployment_from_settings(parsed, dep.gpu, dep.gpu_count, dep.node_id)
        assert rebuilt == expected_deployment(dep, config.release), text
        checked += 1
    assert checked == 50, f"only {checked} launchable plans ({refused} refused)"


def test_the_parsed_command_sets_the_plan_memory():
    dep = Deployment.on_node(
        get_model("Llama-3.1-8B"),
        get_node("1x-h100-sxm-80gb"),
        draft=get_model("Llama-3.2-1B"),
        engine_version="0.19.0",
    )
    config = launch_config(dep)
    rebuilt = deployment_from_settings(read_launch_command(config.command), get_gpu("h100-sxm-80gb"), 1)
    assert plan_memory(rebuilt).kv_cache_tokens == plan_memory(dep).kv_cache_tokens
