"""vLLM V0's profile run, vLLM V1's rejection-sampler warm-up and TensorRT-LLM's estimation run.

Logged figures come from data/calibration/vllm-kv-cases.csv (each row names its public source).
"""

from __future__ import annotations

import pytest

from bench.kv_cases import load_cases
from planner.catalog.lookup import get_gpu, get_model
from planner.deployment import Deployment
from planner.engines.components import calibration, forward_activation_bytes, non_torch_bytes, sampler_bytes
from planner.engines.profiles import engine_profile, engines_file, resolve_limits
from planner.memory.plan import plan_memory

LLAMA_VOCAB = 128256


def _dep(engine: str, version: str | None = None, gpu: str = "h100-sxm-80gb", draft: str | None = None, **kw):
    return Deployment.build(
        target=get_model("Llama-3.1-8B"),
        gpu=get_gpu(gpu),
        gpu_count=1,
        engine=engine,
        engine_version=version,
        draft=get_model(draft) if draft else None,
        **kw,
    )


def _case(case_id: str):
    return next(c for c in load_cases() if c.case_id == case_id)


@pytest.mark.parametrize(
    ("version", "max_model_len", "draft", "tokens"),
    [
        ("0.9.2", 131072, None, 2048),  # chunked prefill by default above 32K, 2,048 from v0.6.5 (PR #10544)
        ("0.6.4", 131072, None, 512),  # 512 before
        ("0.9.2", 20000, None, 20000),  # no chunked prefill: max(max_model_len, 2048)
        ("0.9.2", 1024, None, 2048),
        ("0.9.2", 65536, "Llama-3.2-1B", 65536),  # V0 leaves chunked prefill off with a speculative model
    ],
)
def test_v0_batched_tokens_follow_context_length_release_and_speculation(version, max_model_len, draft, tokens):
    dep = _dep("vllm-v0", version, max_model_len=max_model_len, draft=draft)
    limits = resolve_limits(dep, engine_profile("vllm-v0", version))
    assert (limits.max_num_batched_tokens, limits.max_num_seqs) == (tokens, 256)


def test_v0_peak_is_the_larger_of_forward_and_the_sampler_phase():
    """V0's profile run from its source (vllm/worker/model_runner.py profile_run, vllm/model_executor/layers/sampler.py
    _apply_top_k_top_p at v0.9.2): the eager forward's widest moment, or the sampler phase, which holds the output
    hidden states [N, H] beside the logits and the top-k/top-p tensors (40 bytes per logit); not their sum."""
    tp1 = plan_memory(_dep("vllm-v0", max_model_len=8192), with_suggestions=False).per_gpu
    tp2_dep = _dep("vllm-v0", max_model_len=8192).replace(gpu_count=2, tp=2)
    tp2 = plan_memory(tp2_dep, with_suggestions=False).per_gpu
    arch = tp2_dep.target.architecture
    sampler_phase = 8192 * arch.hidden_size * 2 + sampler_bytes(engine_profile("vllm-v0"), LLAMA_VOCAB, 256)
    # at 8,192 tokens the sampler phase sets the peak on the driver rank, whatever the TP
    assert tp1.torch_peak_increase_bytes == tp2.torch_peak_increase_bytes == sampler_phase
    long = _dep("vllm-v0", gpu="rtx-3090-24gb", max_model_len=20000, memory_fraction=0.9)
    peak = plan_memory(long, with_suggestions=False).per_gpu.torch_peak_increase_bytes
    forward = forward_activation_bytes(arch, 20000, 1, 2, engine_profile("vllm-v0"))
    assert peak == forward == 20000 * (2 * arch.hidden_size + 3 * arch.intermediate_size) * 2  # factor 1


def test_v0_rtx3090_case_within_five_percent_of_logged_blocks():
    case = _case("vllm10517-3090-20000")  # 1,952 blocks x 16 = 31,232 tokens
    plan = plan_memory(case.deployment, with_suggestions=False)
    assert abs(plan.kv_cache_tokens / case.logged.kv_cache_tokens - 1) < 0.05


def test_v0_refusal_states_the_binding_ranks_tokens():
    # vLLM #13061: one rank logged 8.69 GiB, but the refusal says 81,536 tokens (the minimum over ranks: the
    # driver rank also runs the sampler); the plan sizes the driver rank.
    case = _case("vllm13061-r1-distill-qwen14b-2x4090")
    assert case.logged.kv_cache_tokens == 81536
    plan = plan_memory(case.deployment, with_suggestions=False)
    assert abs(plan.kv_cache_tokens / 81536 - 1) < 0.05
    assert plan.per_gpu.kv_cache_bytes < case.logged.kv_cache_bytes


def test_v0_profiles_the_scorer_only_and_runs_no_rejection_warmup():
    alone = plan_memory(_dep("vllm-v0", max_model_len=8192), with_suggestions=False).per_gpu
    with_draft = plan_memory(_dep("vllm-v0", max_model_len=8192, draft="Llama-3.2-1B"), with_suggestions=False)
    assert with_draft.per_gpu.torch_peak_increase_bytes == alone.torch_peak_increase_bytes
    assert with_draft.per_gpu.draft_weights_bytes > 0


def test_v1_rejection_sampler_warmup_joins_the_peak_with_a_draft():
    dep = _dep("vllm", "0.19.0", max_model_len=8192)
    alone = plan_memory(dep, with_suggestions=False).per_gpu.torch_peak_increase_bytes
    spec = plan_memory(dep.replace(draft=get_model("Llama-3.2-1B")), with_suggestions=False)
    seqs = spec.limits.max_num_seqs
    rule = engine_profile("vllm", "0.19.0").rejection_sampler_warmup
    warmup = sampler_bytes(engine_profile("vllm"), LLAMA_VOCAB, seqs) + rule.kept_logit_rows_per_seq * seqs * (
        LLAMA_VOCAB * 2
    )
    assert spec.per_gpu.torch_peak_increase_bytes == max(alone, warmup) > alone


def test_trtllm_estimation_run_samples_only_its_context_requests():
    dep = _dep("trtllm", max_model_len=4096)
    profile = engine_profile("trtllm")
    limits = resolve_limits(dep, profile)
    assert limits.max_num_seqs == 2048  # max_batch_size: not what the estimation run samples
    assert profile.profile_run_seqs(limits, 4096) == 3  # 8,192 tokens in prompts of 4,095
    assert profile.profile_run_seqs(limits, 131072) == 1
    gpu = plan_memory(dep, with_suggestions=False).per_gpu
    forward = forward_activation_bytes(dep.target.architecture, 8192, 1, 2, profile)
    assert gpu.torch_peak_increase_bytes == max(forward, sampler_bytes(profile, LLAMA_VOCAB, 3))
    assert gpu.torch_peak_increase_bytes < sampler_bytes(profile, LLAMA_VOCAB, 2048)


def test_trtllm_kv_is_the_fraction_of_what_the_estimation_peak_leaves():
    dep = _dep("trtllm", max_model_len=8192).replace(gpu_count=2, tp=2)
    gpu = plan_memory(dep, with_suggestions=False).per_gpu
    peak = gpu.target_weights_bytes + gpu.torch_peak_increase_bytes + gpu.non_torch_increase_bytes + gpu.cudagraph_bytes
    assert gpu.non_torch_increase_bytes == non_torch_bytes(engine_profile("trtllm"), 2, 1)  # NCCL counted once
    assert gpu.kv_fraction_base_bytes == gpu.total_bytes - peak
    assert gpu.kv_cache_bytes == round(0.9 * (gpu.total_bytes - peak))
    assert gpu.unused_budget_bytes == gpu.total_bytes - peak - gpu.kv_cache_bytes  # the 10% left beside the pool


def test_v0_coefficients_are_the_sum_of_the_source_s_tensors():
    """Not fitted: the sampler's bytes per logit are the tensors data/engines.json lists, the forward factor is 1."""
    entry = engines_file()["calibration"]["v0_sampler_bytes_per_logit"]
    assert calibration().v0_sampler_bytes_per_logit == sum(entry["tensors"].values()) == 40
    assert calibration().v0_forward_activation_factor == 1.0
