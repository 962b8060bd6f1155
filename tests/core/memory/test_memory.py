"""The memory plan: worked example, engine rules, log golden cases, invariants (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_model, get_node, get_weight_format
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile
from planner.errors import InputError, PlannerError
from planner.memory.plan import plan_memory
from planner.model.parallelism import tp_problem
from planner.model.weight_bytes import weight_bytes
from planner.units import GB

H100_NODE = get_node("8x-h100-sxm-80gb")


def dep(target="Llama-3.1-70B", node=H100_NODE, **kw):
    return Deployment.on_node(get_model(target), node, **kw)


def test_seed_worked_example_70b_with_3b_draft_on_8x_h100():
    plan = plan_memory(dep(tp=8, draft=get_model("Llama-3.2-3B"), max_model_len=8192))
    gpu = plan.per_gpu
    assert plan.fits
    assert round(gpu.target_weights_bytes * 8 / GB) == 141  # ~140 GB of target weights in total
    assert round(gpu.draft_weights_bytes * 8 / GB, 1) == 6.4  # the 3B draft (~6.4 GB) sharded over 8 GPUs
    assert plan.draft_kv_bytes_per_token_per_gpu == 2 * 28 * 1 * 128 * 2  # 1 KV head per rank
    assert plan.kv_cache_tokens < plan.kv_cache_tokens_without_draft
    assert plan.max_concurrency < plan.max_concurrency_without_draft


def test_tp1_draft_is_replicated_on_every_rank():
    sharded = plan_memory(dep(tp=8, draft=get_model("Llama-3.2-1B")))
    replicated = plan_memory(dep(tp=8, draft=get_model("Llama-3.2-1B"), draft_tp=1))
    whole = weight_bytes(get_model("Llama-3.2-1B").architecture, get_weight_format("bf16")).total_bytes
    assert replicated.per_gpu.draft_weights_bytes == whole
    assert sharded.per_gpu.draft_weights_bytes < whole / 7
    assert replicated.draft_kv_bytes_per_token_per_gpu == 8 * sharded.draft_kv_bytes_per_token_per_gpu


def test_70b_on_one_h100_does_not_fit_and_says_what_would():
    plan = plan_memory(dep(node=get_node("1x-h100-sxm-80gb"), max_model_len=8192))
    assert not plan.fits
    assert "weights need 131.4 GiB" in plan.problems[0]
    fixes = plan.suggestions
    assert fixes and all(s.fits and s.starts for s in fixes)  # only changes that fit and start are offered
    ranks = [(s.other_gpu, s.model_changes, s.gpus_per_replica) for s in fixes]
    assert ranks[0] == (False, 0, min(s.gpus_per_replica for s in fixes if not s.other_gpu and not s.model_changes))
    assert [r[0] for r in ranks] == sorted(r[0] for r in ranks)  # the user's GPU type first
    changes = " | ".join(s.change for s in fixes)
    assert "TP 2" in changes and "int4" in changes and any(s.other_gpu for s in fixes)


def test_sanity_anchor_70b_plus_1b_on_8x_h100():
    # 70B + 1B on 8x H100, TP8: 40,960 + 4,096 = 45,056 B/token/GPU from the configs (https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json,
    # https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json), the draft ~9%; about 1.17 M tokens per
    # replica at gmu 0.9 by vLLM V1's budget rule with 5-6 GiB of activation + non-torch (docs/engine-memory.md).
    plan = plan_memory(dep(tp=8, draft=get_model("Llama-3.2-1B"), memory_fraction=0.9, engine_version="0.19.0"))
    assert plan.kv_bytes_per_token_per_gpu == 45_056
    assert plan.draft_kv_share_frac == pytest.approx(4096 / 45056)
    assert plan.kv_cache_tokens == pytest.approx(1.17e6, rel=0.05)


@pytest.mark.parametrize(
    ("kwargs", "tokens", "tolerance"),
    [
        # llmd-llama31-8b-tp1-16k (data/calibration/vllm-kv-cases.csv, llm-d-planner PR #205):
        # vLLM 0.19.0, H100, gmu 0.95 -> 476,016 tokens
        (
            {
                "target": "Llama-3.1-8B",
                "engine_version": "0.19.0",
                "memory_fraction": 0.95,
                "max_model_len": 16384,
            },
            476_016,
            0.02,
        ),
        # llmd-gemma2-9b: every layer sized at full length -> 168,880 tokens
        (
            {
                "target": "gemma-2-9b",
                "engine_version": "0.19.0",
                "memory_fraction": 0.95,
                "max_model_len": 8192,
            },
            168_880,
            0.02,
        ),
        # llmd-qwen25-7b-fp8kv: fp8 KV doubles tokens -> 2,192,000
        (
            {
                "target": "Qwen2.5-7B",
                "engine_version": "0.19.0",
                "memory_fraction": 0.95,
                "max_model_len": 8192,
                "kv_dtype": "fp8",
            },
            2_192_000,
            0.02,
        ),
    ],
)
def test_logged_cases(kwargs, tokens, tolerance):
    target = kwargs.pop("target")
    plan = plan_memory(dep(target, node=get_node("1x-h100-sxm-80gb"), **kwargs))
    assert plan.kv_cache_tokens == pytest.approx(tokens, rel=tolerance)


def test_v0_splits_blocks_evenly_and_ignores_draft_weights():
    base = dep("Llama-3.1-8B", node=get_node("1x-h100-sxm-80gb"), engine="vllm-v0", max_model_len=8192)
    alone = plan_memory(base)
    with_draft = plan_memory(base.model_copy(update={"draft": get_model("Llama-3.2-1B")}))
    kv_t, kv_d = with_draft.target_kv_bytes_per_token_per_gpu, with_draft.draft_kv_bytes_per_token_per_gpu
    assert with_draft.num_blocks == int(alone.num_blocks * kv_t / (kv_t + kv_d))
    assert any("#9995" in p for p in with_draft.problems)


def test_sglang_logged_case_qwen3_235b_fp8_tp4():
    # vllm21348-qwen3-235b-fp8-tp4-sglang: mem_fraction_static 0.93 -> 367,404 tokens (K + V 16.46 GiB).
    plan = plan_memory(
        Deployment.build(
            target=get_model("Qwen3-235B-A22B"),
            gpu=get_gpu("h100-sxm-80gb"),
            gpu_count=4,
            tp=4,
            dtype="fp8",
            engine="sglang",
            memory_fraction=0.93,
        )
    )
    assert plan.kv_cache_tokens == pytest.approx(367_404, rel=0.05)


def test_trtllm_uses_a_fraction_of_free_memory_and_32_token_blocks():
    plan = plan_memory(dep("Llama-3.1-8B", node=get_node("1x-h100-sxm-80gb"), engine="trtllm", max_model_len=8192))
    gpu = plan.per_gpu
    free_after = (
        gpu.total_bytes - gpu.target_weights_bytes - gpu.torch_peak_increase_bytes - gpu.non_torch_increase_bytes
    )
    assert gpu.kv_cache_bytes == pytest.approx(0.9 * free_after, rel=1e-6)
    assert plan.kv_cache_tokens % 32 == 0


def test_hf_holds_exactly_the_batch():
    plan = plan_memory(
        dep("Llama-3.2-1B", node=get_node("1x-l4-24gb"), engine="hf", max_model_len=4096, hf_batch_size=4)
    )
    assert plan.per_gpu.kv_cache_bytes == 4 * 4096 * 32 * 1024
    assert plan.max_concurrency == 4
    assert plan.fits


def test_t4_has_no_bf16():
    plan = plan_memory(dep("Llama-3.2-1B", node=get_node("1x-t4-16gb"), dtype="bf16", max_model_len=4096))
    assert not plan.fits and any("bf16" in p for p in plan.problems)


def test_bad_inputs_are_clear_errors_or_problems():
    with pytest.raises(InputError, match="tp"):
        dep(tp=3)
    with pytest.raises(InputError, match="8 GPUs"):
        dep(tp=16)
    with pytest.raises(PlannerError, match=r"(?i)memory.fraction"):
        dep(tp=8, memory_fraction=1.2)
    with pytest.raises(PlannerError, match=r"(?i)memory.fraction"):
        dep(tp=8, memory_fraction=0)
    with pytest.raises(InputError, match="draft_tp"):
        dep(tp=8, draft=get_model("Llama-3.2-1B"), draft_tp=4)
    mismatch = plan_memory(dep(tp=8, draft=get_model("Qwen2.5-0.5B")))
    assert any(p.startswith(("tokenizer:", "vocab_size:")) for p in mismatch.problems)
    with pytest.raises(InputError, match="engine_version"):
        plan_memory(dep(tp=8, engine_version="banana"))


# ----- invariants -------------------------------------------------------------------------

TARGETS = ["Llama-3.1-8B", "Qwen2.5-7B", "gemma-2-9b", "Mistral-7B-v0.3", "Qwen3-8B", "Llama-3.1-70B"]
DRAFTS = [None, "Llama-3.2-1B", "Qwen2.5-0.5B", "Qwen3-0.6B"]
ENGINES = ["vllm", "vllm-v0", "sglang", "trtllm"]


@st.composite
def deployments(draw):
    target = draw(st.sampled_from(TARGETS))
    node = draw(st.sampled_from(["8x-h100-sxm-80gb", "8x-a100-sxm-80gb", "4x-l40s-48gb", "8x-h200-sxm-141gb"]))
    draft = draw(st.sampled_from(DRAFTS))
    return {
        "target": target,
        "node": node,
        "draft": draft,
        "engine": draw(st.sampled_from(ENGINES)),
        "kv_dtype": draw(st.sampled_from(["auto", "fp8"])),
        "max_model_len": draw(st.sampled_from([2048, 8192, 32768])),
        "memory_fraction": draw(st.sampled_from([0.8, 0.9, 0.95])),
    }


def _build(spec, tp=1, **overrides):
    spec = {**spec, **overrides}
    return Deployment.on_node(
        get_model(spec["target"]),
        get_node(spec["node"]),
        tp=tp,
        draft=get_model(spec["draft"]) if spec["draft"] else None,
        engine=spec["engine"],
        kv_dtype=spec["kv_dtype"],
        max_model_len=spec["max_model_len"],
        memory_fraction=spec["memory_fraction"],
    )


def _valid_tps(spec) -> list[int]:
    arch = get_model(spec["target"]).architecture
    count = get_node(spec["node"]).gpu_count
    return [tp for tp in (1, 2, 4, 8) if tp <= count and tp_problem(arch, tp) is None]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_a_plan_that_fits_stays_within_the_device(spec):
    plan = plan_memory(_build(spec, tp=_valid_tps(spec)[-1]), with_suggestions=False)
    for gpu in plan.stages:
        assert 0 < gpu.memory_limit_bytes <= gpu.total_bytes
        if plan.fits:
            assert gpu.unused_budget_bytes + gpu.outside_budget_bytes >= 0, gpu
            assert 0 < gpu.kv_cache_bytes <= gpu.memory_limit_bytes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_higher_tp_never_lowers_kv_tokens(spec):
    tokens = [plan_memory(_build(spec, tp=tp), with_suggestions=False).kv_cache_tokens for tp in _valid_tps(spec)]
    assert tokens == sorted(tokens)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_longer_max_model_len_never_raises_concurrency(spec):
    tp = _valid_tps(spec)[-1]
    conc = [
        plan_memory(_build(spec, tp=tp, max_model_len=n), with_suggestions=False).max_concurrency
        for n in (1024, 4096, 16384, 65536)
    ]
    assert conc == sorted(conc, reverse=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_adding_a_draft_never_raises_kv_tokens(spec):
    tp = _valid_tps(spec)[-1]
    alone = plan_memory(_build(spec, tp=tp, draft=None), with_suggestions=False)
    with_draft = plan_memory(_build(spec, tp=tp, draft="Llama-3.2-1B"), with_suggestions=False)
    assert with_draft.kv_cache_tokens <= alone.kv_cache_tokens
    # the KV cache never goes below zero: what the draft takes beyond it is the plan's shortfall
    lost = alone.per_gpu.kv_cache_bytes - with_draft.per_gpu.kv_cache_bytes
    lost += with_draft.per_gpu.kv_shortfall_bytes - alone.per_gpu.kv_shortfall_bytes
    draft_weights = with_draft.per_gpu.draft_weights_bytes
    if spec["engine"] == "vllm":  # V1 budgets the draft's weights (and its graphs) inside the same fraction
        assert lost >= draft_weights > 0
    elif spec["engine"] == "trtllm":  # a fraction of what is free after both models' weights
        assert lost >= round(with_draft.limits.memory_fraction * draft_weights) - 1
    elif (
        spec["engine"] == "sglang"
        and engine_profile("sglang", spec.get("engine_version")).draft_weights_in_static_region
    ):
        assert lost >= draft_weights > 0  # from 0.5.15 the draft's weights and KV come out of the static region
    elif spec["engine"] == "sglang":  # the target's pool is sized from the target alone; the draft's pool is extra
        if spec["memory_fraction"] is not None:  # (the default fraction reserves room for a draft model)
            assert with_draft.kv_cache_tokens == alone.kv_cache_tokens
            assert lost <= 0
    else:  # V0 leaves the draft's weights out of the budget (vLLM #9995) and splits the same pool
        assert lost == 0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_sharding_over_more_gpus_never_lowers_the_nodes_kv_capacity(spec):
    """A replica on twice the GPUs holds at least twice the tokens when the KV heads split evenly (weights and
    KV are sharded; only runtime overheads grow), so the node as a whole never holds fewer tokens."""
    models = [get_model(name).architecture for name in (spec["target"], spec["draft"]) if name]
    capacity = {}
    for tp in _valid_tps(spec):
        dep = _build(spec, tp=tp)
        capacity[tp] = dep.replicas_per_node * plan_memory(dep, with_suggestions=False).kv_cache_tokens
    for tp, tokens in capacity.items():
        if 2 * tp in capacity and all(arch.num_kv_heads % (2 * tp) == 0 for arch in models):
            assert capacity[2 * tp] >= tokens, capacity


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang", "trtllm"])
def test_pooled_engines_state_that_start_up_assumes_an_otherwise_idle_gpu(engine):
    plan = plan_memory(dep("Llama-3.2-1B", node=get_node("1x-l4-24gb"), engine=engine, max_model_len=4096))
    assert any("while the engine starts" in note for note in plan.assumptions)


def test_hf_holds_no_pool_so_states_no_start_up_assumption():
    plan = plan_memory(dep("Llama-3.2-1B", node=get_node("1x-l4-24gb"), engine="hf", max_model_len=4096))
    assert not any("while the engine starts" in note for note in plan.assumptions)


def test_vllm_v1_plans_say_they_size_a_first_start_unless_eager():
    node = get_node("1x-l4-24gb")
    compiled = plan_memory(dep("Llama-3.2-1B", node=node, max_model_len=4096))
    assert any("sized for a first start" in note for note in compiled.assumptions)
    eager = plan_memory(dep("Llama-3.2-1B", node=node, max_model_len=4096, enforce_eager=True))
    v0 = plan_memory(dep("Llama-3.2-1B", node=node, max_model_len=4096, engine="vllm-v0"))
    assert not any("sized for a first start" in note for plan in (eager, v0) for note in plan.assumptions)
