"""SGLang's pools and default fraction, and whether an engine starts (data/engine_releases.json).

SGLang formulas: python/sglang/srt/server_args.py ServerArgs._handle_gpu_memory_settings and
python/sglang/srt/model_executor/model_runner.py ModelRunner.profile_max_num_token, release v0.5.3
(https://github.com/sgl-project/sglang/blob/v0.5.3/python/sglang/srt/server_args.py).
"""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile
from planner.engines.releases import method_support
from planner.memory import plan_memory


def test_sglang_target_pool_is_sized_from_the_target_alone_as_sglang_does():
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"),
        draft=get_model("Llama-3.2-1B"),
        gpu=get_gpu("h100-sxm-80gb"),
        engine="sglang",
        engine_version="0.5.3",
    )
    plan = plan_memory(dep, with_suggestions=False)
    gpu = plan.per_gpu
    # server_args: gpu_mem = nvidia-smi total (81,559 MiB on an H100 SXM); H100 class: chunk 8192, graph bs 256 at TP1
    reserved_mib = 512 + 8192 * 1.5 + 256 * 2 + 1 * 1 / 8 * 1024 + 6 * 1024  # + STANDALONE draft
    fraction = round((81559 - max(reserved_mib, 10 * 1024)) / 81559, 3)
    assert plan.limits.memory_fraction == fraction == 0.760
    # profile_max_num_token: rest = available after weights - total before loading * (1 - fraction); cell = target only
    before = gpu.total_bytes - gpu.non_torch_increase_bytes
    rest = before - gpu.target_weights_bytes - before * (1 - fraction)
    assert plan.kv_cache_tokens == int(rest // plan.target_kv_bytes_per_token_per_gpu)
    # the draft's pool: same tokens + 48 running requests x (K + K + 1) + 100 slots, outside the static region
    k = dep.num_speculative_tokens
    draft_pool = (plan.kv_cache_tokens + 48 * (2 * k + 1) + 100) * plan.draft_kv_bytes_per_token_per_gpu
    assert gpu.kv_cache_bytes == round(rest) + draft_pool
    assert plan.starts and plan.fits


def test_sglang_default_fraction_on_h200_is_the_documented_0907():
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"), gpu=get_gpu("h200-sxm-141gb"), engine="sglang", engine_version="0.5.3"
    )
    assert engine_profile("sglang", "0.5.3").default_fraction(dep, 0, None) == 0.907
    assert plan_memory(dep, with_suggestions=False).limits.memory_fraction == 0.907


def test_sglang_gpu_classes_follow_server_args():
    limits = engine_profile("sglang", "0.5.3").default_limits
    assert limits.tier(143771).chunked_prefill_size == 8192  # H200: 8K chunk, not 16K
    assert limits.cuda_graph_max_bs(143771, tp=4) == 512 and limits.cuda_graph_max_bs(143771, tp=2) == 256
    assert limits.tier(183359).chunked_prefill_size == 16384  # B200
    assert limits.max_running_requests(10**6, 8192, speculative=True) == 48
    assert limits.max_running_requests(10**6, 131072, speculative=False) == 3906


def test_sglang_eagle3_b200_case_target_pool_is_the_whole_static_region():
    """sgl-project/sglang#12421: Qwen3-30B-A3B TP4 with an EAGLE-3 draft, 5,874,221 target tokens logged."""
    dep = Deployment.build(
        target=get_model("Qwen3-30B-A3B"),
        gpu=get_gpu("b200-180gb"),
        gpu_count=4,
        tp=4,
        engine="sglang",
        engine_version="0.5.3",
    )
    fraction = engine_profile("sglang", "0.5.3").default_fraction(dep, 0, "eagle3")
    assert fraction == 0.844  # (183,359 - (512 + 16384*1.5 + 512*2 + 4/8*1024 + 2048)) / 183,359
    plan = plan_memory(dep.replace(memory_fraction=fraction), with_suggestions=False)
    gpu = plan.per_gpu
    before = gpu.total_bytes - gpu.non_torch_increase_bytes
    static_region = before - gpu.target_weights_bytes - before * (1 - fraction)
    assert gpu.kv_cache_bytes == round(static_region)
    assert plan.kv_cache_tokens == pytest.approx(5_874_221, rel=0.01)


def _qwen_pair(engine: str, version: str | None = None, tp: int = 8):
    return Deployment.on_node(
        get_model("Qwen2.5-72B"),
        get_node("8x-h200-sxm-141gb"),
        draft=get_model("Qwen2.5-0.5B"),
        tp=tp,
        engine=engine,
        engine_version=version,
    )


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang"])
def test_qwen_padding_mismatch_does_not_start_where_the_loader_rejects_it(engine):
    plan = plan_memory(_qwen_pair(engine, tp=4 if engine == "vllm-v0" else 8))
    assert not plan.starts
    assert any("152,064" in p and "151,936" in p for p in plan.start_problems)
    assert any("pad the draft's vocabulary" in s.change for s in plan.suggestions)


def test_trtllm_does_not_refuse_the_padding_mismatch():
    plan = plan_memory(_qwen_pair("trtllm"), with_suggestions=False)
    assert not any("vocab" in p for p in plan.start_problems)


def test_qwen_pair_fix_that_starts_is_suggested():
    plan = plan_memory(_qwen_pair("vllm"))
    assert any(s.starts and s.fits and "pad the draft's vocabulary" in s.change for s in plan.suggestions)


def test_vllm_releases_before_draft_model_support_do_not_start():
    node = get_node("8x-h100-sxm-80gb")
    pair = dict(draft=get_model("Llama-3.2-1B"), tp=8)
    old = plan_memory(Deployment.on_node(get_model("Llama-3.1-70B"), node, engine_version="0.12.0", **pair))
    assert old.fits and not old.starts
    assert "NotImplementedError" in old.start_problems[0]
    assert any(s.change.startswith("use vllm 0.14.0") and s.starts for s in old.suggestions)
    new = plan_memory(Deployment.on_node(get_model("Llama-3.1-70B"), node, engine_version="0.14.0", **pair))
    assert new.starts
    assert not method_support("vllm", "0.13.9", "draft_model").supported
    assert method_support("vllm-v0", "0.9.2", "draft_model").supported
    assert not method_support("vllm-v0", "0.9.2", "eagle3").supported


def test_a_plan_that_does_not_fit_does_not_start():
    plan = plan_memory(Deployment.build(target=get_model("Llama-3.1-70B"), gpu=get_gpu("h100-sxm-80gb")))
    assert not plan.fits and not plan.starts and plan.start_problems


def test_on_h100_the_qwen_pair_fix_stacks_the_memory_change_the_start_fix_needs():
    """TP 8 refuses the 0.5B draft (14 heads) and its padded vocabulary; TP 2 for both no longer fits 72B in bf16 on
    80 GB, so the fix that starts adds fp8 weights; changes that remove no reason to refuse are left out."""
    plan = plan_memory(
        Deployment.on_node(
            get_model("Qwen2.5-72B"), get_node("8x-h100-sxm-80gb"), draft=get_model("Qwen2.5-0.5B"), tp=8
        )
    )
    assert plan.fits and not plan.starts
    stacked = next(s for s in plan.suggestions if "pad the draft's vocabulary; TP 2 for both models;" in s.change)
    assert stacked.fits and stacked.starts and "fp8" in stacked.change
    assert all(s.remaining_start_problems < len(plan.start_problems) for s in plan.suggestions)
    assert not any(s.change.startswith("use a GPU with more memory") for s in plan.suggestions)
    assert plan.suggestions[0].starts and plan.suggestions[0].fits
