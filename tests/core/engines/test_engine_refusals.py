"""Every refusal on the memory path is the engine's own, with the release range that has it (data/engine_releases.json,
data/compatibility_rules.json), and a plan the release would refuse never says it starts."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.engines.context_limit import derived_max_model_len
from planner.engines.profiles import engine_profile, engine_profiles
from planner.engines.releases import engine_releases, method_support
from planner.memory import plan_memory

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _plan(**fields):
    fields.setdefault("gpu", get_gpu("h100-sxm-80gb"))
    return plan_memory(Deployment.build(**fields), with_suggestions=False)


@pytest.mark.parametrize(("method", "algorithm"), [("ngram", "NGRAM"), ("draft_model", "STANDALONE")])
def test_sglang_04_lacks_ngram_and_draft_models(method, algorithm):
    """v0.4.6's --speculative-algorithm choices are EAGLE, EAGLE3 and NEXTN (argparse refuses the rest)."""
    fields = {"method": "ngram"} if method == "ngram" else {"draft": get_model("Llama-3.2-1B")}
    plan = _plan(target=get_model("Llama-3.1-8B"), engine="sglang", engine_version="0.4.6", **fields)
    assert not plan.starts
    said = f"argument --speculative-algorithm: invalid choice: '{algorithm}' (choose from 'EAGLE', 'EAGLE3', 'NEXTN')"
    assert any(said in p and "releases 0.4.6 to <0.4.7" in p for p in plan.start_problems)
    assert method_support("sglang", "0.5.3", method).supported


def test_sglang_04_runs_an_eagle3_head():
    plan = _plan(target=get_model("Llama-3.1-8B"), draft=get_model(HEAD), engine="sglang", engine_version="0.4.6")
    assert plan.starts and plan.limits.memory_fraction == 0.88


def test_vllm_v1_before_draft_model_support_says_its_notimplementederror():
    plan = _plan(target=get_model("Llama-3.1-8B"), draft=get_model("Llama-3.2-1B"), engine_version="0.11.0")
    assert not plan.starts
    assert any(
        "NotImplementedError: Speculative decoding with draft model is not supported yet" in p
        for p in plan.start_problems
    )


def test_max_length_above_the_derived_context_is_refused_in_vllm_s_words():
    node = get_node("8x-h100-sxm-80gb")
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), node, tp=8, max_model_len=1_048_576)
    plan = plan_memory(dep, with_suggestions=False)
    assert not plan.starts
    said = (
        "User-specified max_model_len (1048576) is greater than the derived max_model_len "
        "(max_position_embeddings=131072 or model_max_length=None in model's config.json). To allow overriding this "
        "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
    assert any(said in p for p in plan.start_problems)
    at_limit = plan_memory(dep.replace(max_model_len=131_072), with_suggestions=False)
    assert at_limit.starts


def test_the_override_turns_the_refusal_into_a_stated_risk():
    node = get_node("8x-h100-sxm-80gb")
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), node, tp=8, max_model_len=1_048_576, allow_long_max_model_len=True
    )
    plan = plan_memory(dep, with_suggestions=False)
    assert plan.starts
    assert any("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in p and "risk" in p for p in plan.problems)


def test_sglang_refuses_a_longer_context_in_its_own_words():
    plan = _plan(target=get_model("Llama-3.1-8B"), engine="sglang", max_model_len=262_144)
    assert not plan.starts
    assert any(
        "User-specified context_length (262144) is greater than the derived context_length (131072)" in p
        and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in p
        for p in plan.start_problems
    )


def test_derived_context_follows_each_engine_s_rope_rule():
    yarn = {"max_position_embeddings": 32768, "rope_scaling": {"type": "yarn", "factor": 4.0}}
    assert derived_max_model_len(yarn, "smallest_length_key") == 131072
    assert derived_max_model_len(yarn, "first_length_key") == 131072
    named = {**yarn, "rope_scaling": {**yarn["rope_scaling"], "original_max_position_embeddings": 32768}}
    # SGLang leaves the factor out when the original length is named
    assert derived_max_model_len(named, "first_length_key") == 32768
    lengths = {"n_positions": 2048, "max_position_embeddings": 4096}
    assert derived_max_model_len(lengths, "smallest_length_key") == 2048


def test_qwen_72b_with_the_05b_draft_at_tp8_is_refused_for_its_14_heads():
    node = get_node("8x-h100-sxm-80gb")
    dep = Deployment.on_node(get_model("Qwen2.5-72B"), node, tp=8, dtype="fp8", draft=get_model("Qwen2.5-0.5B"))
    plan = plan_memory(dep, with_suggestions=False)
    assert not plan.starts
    said = "ValueError: Total number of attention heads (14) must be divisible by tensor parallel size (8)."
    assert any(said in p for p in plan.start_problems)
    assert not any("draft TP 1 must equal" in p for p in plan.start_problems)


def test_sglang_refuses_the_14_head_draft_in_its_own_words():
    node = get_node("8x-h100-sxm-80gb")
    dep = Deployment.on_node(
        get_model("Qwen2.5-72B"), node, tp=8, dtype="fp8", draft=get_model("Qwen2.5-0.5B"), engine="sglang"
    )
    plan = plan_memory(dep, with_suggestions=False)
    assert any("AssertionError: 14 is not divisible by 8" in p for p in plan.start_problems)


@pytest.mark.parametrize("version", ["0.9.2", "0.10.1", "0.12.0", "0.19.0"])
def test_eagle3_on_a_target_type_the_release_does_not_list_is_refused(version):
    plan = _plan(target=get_model("Mistral-7B-v0.3"), draft=get_model(HEAD), engine_version=version)
    assert not plan.starts
    said = [p for p in plan.start_problems if "Eagle3 is only supported for ['llama'" in p]
    assert said and "model_type='mistral'" in said[0]


def test_eagle3_on_qwen_needs_0_10():
    releases = engine_releases("vllm")
    assert "['llama']" in releases.eagle3_refusal("0.9.2", "qwen3")
    assert releases.eagle3_refusal("0.10.0", "qwen3") is None
    assert releases.eagle3_refusal("0.12.0", "gpt_oss") is None and releases.eagle3_refusal("0.10.1", "gpt_oss")


def test_a_head_over_another_vocabulary_gets_what_the_engine_does_not_the_draft_model_rule():
    head = get_model(HEAD)
    other = head.model_copy(
        update={"architecture": head.architecture.model_copy(update={"vocab_size": 152064})}, deep=True
    )
    plan = _plan(target=get_model("Llama-3.1-8B"), draft=other)
    text = " ".join(plan.problems)
    assert "The EAGLE head's vocab embedding will be loaded separately from the target model." in text
    assert "Target and draft model should have the same vocabulary size" not in text
    assert not any("vocab" in p for p in plan.start_problems)


def test_vllm_08_v1_logs_are_plannable_and_0_8_eagle_needs_0_8_4():
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb"), engine="vllm", engine_version="0.8.5"
    )
    plan = plan_memory(dep, with_suggestions=False)
    assert plan.engine_profile == "vllm-v1-0.8" and plan.starts
    assert (plan.limits.max_num_batched_tokens, plan.limits.max_num_seqs) == (2048, 256)
    assert not method_support("vllm", "0.8.3", "eagle3").supported
    assert method_support("vllm", "0.8.5", "eagle3").supported
    assert engine_profile("vllm", "0.9.2").id == "vllm-v1-0.9"


def test_older_vllm_counts_the_mtp_module_s_second_lm_head():
    """DeepSeek-V3 at TP 8: 129,280 x 7,168 bf16 over 8 ranks = 0.22 GiB per GPU more in 0.9 than in 0.10."""
    node = get_node("8x-h200-sxm-141gb")
    dep = Deployment.on_node(get_model("DeepSeek-V3"), node, tp=8, method="mtp")
    old = plan_memory(dep.replace(engine_version="0.9.2"), with_suggestions=False).per_gpu.draft_weights_bytes
    new = plan_memory(dep.replace(engine_version="0.10.0"), with_suggestions=False).per_gpu.draft_weights_bytes
    assert old - new == 129_280 * 7168 * 2 // 8


def _families(engine: str) -> list[str]:
    return [p.min_version for p in engine_profiles(engine)]


@pytest.mark.parametrize(
    ("engine", "version"), [(e, v) for e in ("vllm", "vllm-v0", "sglang") for v in _families(e) if v != "0.0.0"]
)
@pytest.mark.parametrize("method", ["draft_model", "eagle3", "ngram"])
def test_no_plan_starts_where_its_release_lacks_the_method_or_the_length(engine, version, method):
    speculator = {"draft_model": {"draft": get_model("Llama-3.2-1B")}, "eagle3": {"draft": get_model(HEAD)}}
    fields = speculator.get(method, {"method": method})
    for length in (8192, 262_144):
        plan = _plan(
            target=get_model("Llama-3.1-8B"), engine=engine, engine_version=version, max_model_len=length, **fields
        )
        if plan.starts:
            assert method_support(engine, version, method).supported
            assert length <= 131_072
