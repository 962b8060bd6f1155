"""Heads, the target's MTP layers and n-gram in the memory plan: weights as the engine loads them, KV, starts."""

from __future__ import annotations

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.memory import plan_memory

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _on_h100(target: str = "Llama-3.1-8B", **fields) -> Deployment:
    return Deployment.build(target=get_model(target), gpu=get_gpu("h100-sxm-80gb"), **fields)


def test_eagle3_head_weighs_its_own_tensors_and_one_layer_of_kv():
    alone = plan_memory(_on_h100())
    plan = plan_memory(_on_h100(draft=get_model(HEAD)))
    # bf16 (the target's dtype): 424,689,664 parameters x 2 B + the int64 d2t map of 32,000 entries
    assert plan.per_gpu.draft_weights_bytes == 2 * 424_689_664 + 8 * 32_000
    assert plan.per_gpu.target_weights_bytes == alone.per_gpu.target_weights_bytes  # the embedding counted once
    assert plan.draft_kv_bytes_per_token_per_gpu == 1 * 2 * 8 * 128 * 2  # one layer, 8 KV heads of 128, K and V
    assert plan.starts and plan.lookahead_slots_per_seq == 5


def test_a_float32_speculators_copy_loads_in_the_targets_dtype():
    plan = plan_memory(_on_h100(draft=get_model("nm-testing/EAGLE3-LLaMA3.1-Instruct-8B-converted")))
    assert plan.per_gpu.draft_weights_bytes == 2 * 424_689_664 + 8 * 32_000


def test_eagle1_head_shares_embedding_and_lm_head():
    plan = plan_memory(_on_h100("Meta-Llama-3-8B", draft=get_model("lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B")))
    assert plan.per_gpu.draft_weights_bytes == 2 * 251_662_336


def test_deepseek_mtp_holds_one_mla_layer_of_kv_and_no_second_embedding():
    dep = Deployment.on_node(get_model("DeepSeek-V3"), get_node("8x-h200-sxm-141gb"), tp=8, method="mtp")
    plan = plan_memory(dep)
    assert plan.draft_kv_bytes_per_token_per_gpu == (512 + 64) * 2  # the latent, not split by TP
    embedding_fp8_bytes = 129_280 * 7168 * 2 // 8  # bf16 embedding, vocab-split over 8 ranks
    assert plan.per_gpu.draft_weights_bytes < 1.6 * 2**30 and plan.per_gpu.draft_weights_bytes > embedding_fp8_bytes
    assert plan.starts


def test_ngram_has_no_weights_or_kv_but_reserves_lookahead():
    plan = plan_memory(_on_h100(method="ngram"))
    assert plan.per_gpu.draft_weights_bytes == 0 and plan.draft_kv_bytes_per_token_per_gpu == 0
    assert plan.lookahead_slots_per_seq == 5 and plan.kv_cache_tokens_without_draft is not None


def test_sglang_reserves_per_method():
    draft = plan_memory(_on_h100(draft=get_model("Llama-3.2-1B"), engine="sglang")).limits.memory_fraction
    head = plan_memory(_on_h100(draft=get_model(HEAD), engine="sglang")).limits.memory_fraction
    ngram = plan_memory(_on_h100(method="ngram", engine="sglang")).limits.memory_fraction
    assert draft < head < ngram  # +6 GiB for a draft model, +2 GiB for EAGLE, nothing for n-gram


def test_a_head_for_another_target_does_not_start():
    plan = plan_memory(_on_h100("Qwen2.5-7B", draft=get_model(HEAD)))
    assert not plan.starts and any("cannot propose for Qwen2.5-7B" in p for p in plan.start_problems)


def test_a_head_on_a_same_geometry_model_it_was_not_trained_for_is_a_problem_not_a_start_stop():
    plan = plan_memory(_on_h100("DeepSeek-R1-Distill-Llama-8B", draft=get_model(HEAD)))
    assert plan.starts and any("head_target" in p for p in plan.problems)


def test_an_engine_without_the_method_does_not_start():
    # data/engine_releases.json: vLLM's V0 engine never ran EAGLE-3, plain transformers runs no head at all
    for engine in ("vllm-v0", "hf"):
        plan = plan_memory(_on_h100(draft=get_model(HEAD), engine=engine))
        assert not plan.starts and any("EAGLE-3 heads" in p for p in plan.start_problems)
