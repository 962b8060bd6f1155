"""One workload for every view (the speculator's own α, the user's K) and no verdict for a workload that cannot run."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.deployment import Deployment
from planner.memory import plan_memory
from planner.memory.types import COMPONENT_LABELS
from planner.speed import deployment_acceptance, estimate_speed, gate_verdict, runnable, workload_for

L40S, H100 = get_node("1x-l40s-48gb"), get_node("1x-h100-sxm-80gb")
LLAMA8 = get_model("Llama-3.1-8B")


@pytest.mark.parametrize(
    "speculator",
    [
        {"method": "ngram"},
        {"draft": get_model("Llama-3.2-1B")},
        {"draft": get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")},
    ],
    ids=["ngram", "draft_model", "eagle3"],
)
def test_alpha_is_the_speculators_own_for_every_kind(speculator):
    dep = Deployment.on_node(LLAMA8, H100, tp=1, max_model_len=8192, **speculator)
    workload, source, _ = workload_for(dep)
    assert workload.alpha == deployment_acceptance(dep).alpha and source != "entered"
    assert workload.k == dep.num_speculative_tokens  # the user's K, not the optimal one


def test_mtp_takes_the_one_default_k_its_optimum_stays_within_its_layers_and_a_typed_alpha_wins():
    dep = Deployment.on_node(get_model("DeepSeek-V3"), get_node("8x-h200-sxm-141gb"), tp=8, method="mtp")
    workload, source, _ = workload_for(dep)
    assert workload.k == NUM_SPECULATIVE_TOKENS == dep.num_speculative_tokens and source == "published"
    assert estimate_speed(dep, workload).optimal_k == 1  # DeepSeek-V3 ships one MTP layer
    typed, source, _ = workload_for(dep, alpha=0.5, k=3)
    assert (typed.alpha, typed.k, source) == (0.5, 3, "entered")


def test_ngram_on_8b_is_not_recommended_at_its_own_alpha():
    dep = Deployment.on_node(LLAMA8, L40S, tp=1, method="ngram", max_model_len=8192)
    est = estimate_speed(dep, workload_for(dep)[0])
    assert est.alpha < 0.3 and est.speedup < 1.3 and est.verdict != "recommend"
    assert est.verdict_k == dep.num_speculative_tokens and est.optimal_k >= 1  # the optimal K beside it


@pytest.mark.parametrize("prompt", [20_000, 200_000, 1_000_000])
def test_a_request_beyond_the_max_length_or_the_context_gets_no_verdict(prompt):
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, max_model_len=8192,
                             draft=get_model("Llama-3.2-1B"))  # fmt: skip
    workload = workload_for(dep, prompt_tokens=prompt)[0]
    check = runnable(dep, workload)
    est = gate_verdict(estimate_speed(dep, workload), check)
    assert not check.ok and est.verdict == "cannot_run"
    reason = check.reasons[0]
    assert ("context window" in reason) if prompt > 131_072 else ("max model length of 8,192" in reason)
    assert check.fixes and est.verdict_reason.startswith("cannot run:")


def test_a_plan_that_does_not_fit_gets_its_reason_once_and_only_fixes_that_work():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), H100, tp=1, draft=get_model("Llama-3.2-1B"))
    check = runnable(dep, workload_for(dep)[0])
    assert not check.ok and len(check.reasons) == len(set(check.reasons))
    plan = plan_memory(dep)
    assert all(s.fits and s.starts for s in plan.suggestions)
    assert [f.split(" (")[0] for f in check.fixes] == [s.change.split(" (")[0] for s in plan.suggestions]


def test_405b_bf16_on_one_h100_offers_combinations_that_fit_and_no_negative_field():
    dep = Deployment.on_node(get_model("Llama-3.1-405B"), H100, tp=1, dtype="bf16")
    plan = plan_memory(dep)
    assert not plan.fits and plan.suggestions and all(s.fits and s.starts for s in plan.suggestions)
    changes = [s.change for s in plan.suggestions]
    assert any("pipeline stages across nodes" in c for c in changes)
    assert any("fp8" in c and s.gpus_per_replica == 8 for c, s in zip(changes, plan.suggestions, strict=True))
    gpu = plan.per_gpu
    assert all(getattr(gpu, f) >= 0 for f in COMPONENT_LABELS) and gpu.kv_shortfall_bytes > 600 * 2**30
    parts = sum(getattr(gpu, f) for f in COMPONENT_LABELS)
    assert parts == gpu.total_bytes + gpu.kv_shortfall_bytes + gpu.over_commit_bytes


def test_no_fix_is_said_when_none_exists():
    # a GPU whose memory is overridden is searched alone (no other GPU type): nothing holds 405B on four 8 GiB T4s
    dep = Deployment.on_node(get_model("Llama-3.1-405B"), get_node("1x-t4-16gb"), tp=1, gpu_memory_bytes=8 * 2**30,
                             method="ngram")  # fmt: skip
    plan = plan_memory(dep)
    assert not plan.fits and plan.suggestions == []
    check = runnable(dep, workload_for(dep)[0])
    assert not check.ok and check.fixes == [] and "No change searched makes it run" in check.describe()
