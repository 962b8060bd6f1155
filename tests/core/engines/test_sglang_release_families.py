"""Each SGLang release family plans the static fraction and KV tokens its own source computes.

The reference below is written from each release's code, not from the planner:

* 0.4 (to 0.4.5): ``ServerArgs.__post_init__`` sets ``mem_fraction_static`` by TP alone (0.88 at TP 1, 0.87 at 2,
  0.85 at 4, 0.81 at 8, 0.79 at 16), ``chunked_prefill_size`` 2048 below 25,000 MiB else 8192 and
  ``cuda_graph_max_bs`` 8 / 160 (https://github.com/sgl-project/sglang/blob/v0.4.0/python/sglang/srt/server_args.py#L158-L168);
* 0.4.6: the table up to 81,920 MiB, above it ``(gpu_mem - 1024 * 13) / gpu_mem``
  (https://github.com/sgl-project/sglang/blob/v0.4.6/python/sglang/srt/server_args.py#L224-L238);
* 0.4.7: the table by ``tp · pp`` up to 81,920 MiB else 0.88; 0.79 above 180,000 MiB; above 96 GiB
  ``min(f + 48 GiB · (1 - f) / gpu_mem, (gpu_mem - 18 GiB, 20 GiB speculating) / gpu_mem)``; else · 0.95 speculating
  (https://github.com/sgl-project/sglang/blob/v0.4.7/python/sglang/srt/server_args.py#L252-L283);
* 0.4.8 to 0.5.2: ``reserved_mem = (2.8 + tp · pp / 10) GiB`` below 35 GiB, ``(9.5 + tp · pp / 2) GiB`` below 90 GiB,
  ``(12 + tp · pp / 2) GiB`` below 160 GiB, else 32 GiB, + 2 GiB speculating (6 GiB for STANDALONE in 0.5.2),
  ``round((gpu_mem - reserved) / gpu_mem, 3)``
  (https://github.com/sgl-project/sglang/blob/v0.4.8/python/sglang/srt/server_args.py#L274-L313,
  https://github.com/sgl-project/sglang/blob/v0.5.2/python/sglang/srt/server_args.py#L452-L496);
* 0.5.3 to 0.5.13: ``_handle_gpu_memory_settings``: ``reserved_mem = 512 + max(chunk, 2048) · 1.5 +
  cuda_graph_max_bs · 2 + tp · pp / 8 · 1024`` MiB, at least 10,240 above 61,440 MiB, + 6,144 for STANDALONE and
  + 2,048 (0.5.3 to 0.5.9) or + 4,096 (0.5.10 to 0.5.13, the "flat 4GB/6GB heuristic reservation" sgl-project/sglang
  PR #23862 removed) for EAGLE; from 0.5.10 8 MiB per prefill (piecewise) CUDA-graph token count without speculation
  (https://github.com/sgl-project/sglang/blob/v0.5.10/python/sglang/srt/server_args.py#L1303-L1322, off with
  speculation at #L1088-L1090); ``mem_fraction_static = round((gpu_mem − reserved) / gpu_mem, 3)``
  (https://github.com/sgl-project/sglang/blob/v0.5.3/python/sglang/srt/server_args.py);
* from 0.5.14: no speculative reserve and 8 MiB per prefill CUDA-graph token count, speculating or not
  (https://github.com/sgl-project/sglang/blob/v0.5.14/python/sglang/srt/server_args.py#L3280-L3311, the prefill
  graphs' off-switches at #L3002-L3057 do not include speculation); 0.5.20's 20–35 GiB tier takes chunk 4096 and
  decode max_bs 48 (PR #37898; ``reserve_for_graph_mb``,
  https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/arg_groups/gpu_memory.py).

Tokens: ``profile_max_num_token``: ``rest = free after loading − free before loading · (1 − fraction)``,
``tokens = rest // cell`` (https://github.com/sgl-project/sglang/blob/v0.4.8/python/sglang/srt/model_executor/model_runner.py#L817-L852,
https://github.com/sgl-project/sglang/blob/v0.5.2/python/sglang/srt/model_executor/model_runner.py#L1092-L1132);
before 0.5.14 the draft loads afterwards and ``cell`` is the target's; from 0.5.14 the
draft's weights count against the static region and ``cell = target cell · (1 + draft layers / target layers)``
(https://github.com/sgl-project/sglang/blob/v0.5.14/python/sglang/srt/model_executor/pool_configurator.py#L127-L145,
https://github.com/sgl-project/sglang/blob/v0.5.14/python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py#L84-L119).
"""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu, get_model
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile
from planner.errors import InputError
from planner.memory import plan_memory

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
GPU_MIB = {"h100-sxm-80gb": 81559, "l4-24gb": 23034, "h200-sxm-141gb": 143771}  # nvidia-smi totals SGLang reads
TP_TABLE = {1: 0.88, 2: 0.87, 4: 0.85, 8: 0.81, 16: 0.79}


def _prefill_graph_sizes(max_tokens: int) -> int:
    sizes = [*range(4, 33, 4), *range(48, 257, 16), *range(288, 513, 32), *range(576, 1025, 64)]
    sizes += [*range(1280, 4097, 256), *range(4608, max_tokens + 1, 512)]
    return len([s for s in sizes if s <= max_tokens])


def reference_fraction(family: str, gpu_mib: int, tp: int, algorithm: str | None) -> float:
    """``mem_fraction_static`` as the family's server_args computes it (TP 1, PP 1 here)."""
    if family == "0.4":
        return TP_TABLE[tp]
    if family == "0.4.6":
        return TP_TABLE[tp] if gpu_mib <= 81920 else (gpu_mib - 1024 * 13) / gpu_mib
    if family == "0.4.7":
        fraction = TP_TABLE[tp] if gpu_mib <= 81920 else 0.88
        if gpu_mib > 180 * 1000:
            return 0.79
        if gpu_mib > 96 * 1024:
            reserve = 1024 * (20 if algorithm else 18)
            return min(fraction + 48 * 1024 * (1 - fraction) / gpu_mib, (gpu_mib - reserve) / gpu_mib)
        return fraction * 0.95 if algorithm else fraction
    if family == "0.4.8":
        if gpu_mib < 35 * 1024:
            reserved = (2.8 + tp / 10) * 1024
        elif gpu_mib < 90 * 1024:
            reserved = (9.5 + tp / 2) * 1024
        elif gpu_mib < 160 * 1024:
            reserved = (12 + tp / 2) * 1024
        else:
            reserved = 32 * 1024
        if algorithm:
            reserved += 6 * 1024 if algorithm == "STANDALONE" else 2 * 1024
        return round((gpu_mib - reserved) / gpu_mib, 3)
    small = 20480 <= gpu_mib < 35840
    if family == "0.5.20" and small:
        chunk, graph_bs = 4096, 48
    elif small:
        chunk, graph_bs = 2048, 24
    else:  # the H100 class
        chunk, graph_bs = 8192, 256
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp / 8 * 1024
    if family in ("0.5.14", "0.5.20") or (family == "0.5.10" and algorithm is None):
        reserved += _prefill_graph_sizes(chunk) * 8
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if family in ("0.5.3", "0.5.10") and algorithm == "STANDALONE":
        reserved += 6 * 1024
    elif algorithm in ("EAGLE", "EAGLE3"):
        reserved += {"0.5.3": 2048, "0.5.10": 4096}.get(family, 0)
    return round((gpu_mib - reserved) / gpu_mib, 3)


def reference_tokens(family: str, plan, fraction: float) -> int:
    gpu = plan.per_gpu
    before = gpu.total_bytes - gpu.non_torch_increase_bytes  # free memory before loading
    cell = plan.target_kv_bytes_per_token_per_gpu
    held = gpu.target_weights_bytes
    if family in ("0.5.14", "0.5.20") and plan.draft_kv_bytes_per_token_per_gpu:
        held += gpu.draft_weights_bytes
        draft_layers = plan.draft_kv_bytes_per_token_per_gpu and _draft_layers(plan)
        cell = int(cell * (1 + draft_layers / 32))  # Llama-3.1-8B: 32 layers
    rest = before - held - before * (1 - fraction)
    return int(rest // cell)


def _draft_layers(plan) -> int:
    return {4096: 1, 32768: 16}[plan.draft_kv_bytes_per_token_per_gpu]  # EAGLE-3 head: 1 layer; Llama-3.2-1B: 16


#: Each family at a release it covers (0.4.8's rule runs to 0.5.2, the first release with STANDALONE).
FAMILIES = {
    "0.4": "0.4.5",
    "0.4.6": "0.4.6",
    "0.4.7": "0.4.7",
    "0.4.8": "0.5.2",
    "0.5.3": "0.5.3",
    "0.5.10": "0.5.12",
    "0.5.14": "0.5.15",
    "0.5.20": "0.5.20",
}
NO_STANDALONE = ("0.4", "0.4.6", "0.4.7")
CONFIGS = [
    # (GPU, draft, weight format, SGLang algorithm)
    ("h100-sxm-80gb", None, None, None),
    ("h100-sxm-80gb", HEAD, None, "EAGLE3"),
    ("h100-sxm-80gb", "Llama-3.2-1B", None, "STANDALONE"),
    ("l4-24gb", None, "fp8", None),
    ("l4-24gb", HEAD, "fp8", "EAGLE3"),
]


#: Before 0.5.2 there is no STANDALONE draft model (tests/core/engines/test_engine_refusals.py).
CASES = [
    (family, *config)
    for family in FAMILIES
    for config in CONFIGS
    if not (family in NO_STANDALONE and config[3] == "STANDALONE")
]


@pytest.mark.parametrize(("family", "gpu", "draft", "dtype", "algorithm"), CASES)
def test_each_family_plans_what_its_source_computes(family, gpu, draft, dtype, algorithm):
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"),
        draft=get_model(draft) if draft else None,
        gpu=get_gpu(gpu),
        dtype=dtype,
        engine="sglang",
        engine_version=FAMILIES[family],
    )
    plan = plan_memory(dep, with_suggestions=False)
    fraction = reference_fraction(family, GPU_MIB[gpu], 1, algorithm)
    assert plan.limits.memory_fraction == pytest.approx(fraction, abs=1e-9)
    expected = reference_tokens(family, plan, fraction)
    assert plan.kv_cache_tokens == pytest.approx(expected, rel=0.01)
    assert plan.engine_profile == f"sglang-{family}"


@pytest.mark.parametrize("version", ["0.4.8", "0.4.9", "0.4.10", "0.5.0", "0.5.1", "0.5.2"])
@pytest.mark.parametrize(("gpu", "draft", "algorithm"), [("h200-sxm-141gb", None, None), ("l4-24gb", HEAD, "EAGLE3")])
def test_every_release_from_048_to_052_reserves_by_gpu_tier(version, gpu, draft, algorithm):
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"),
        draft=get_model(draft) if draft else None,
        gpu=get_gpu(gpu),
        engine="sglang",
        engine_version=version,
    )
    plan = plan_memory(dep, with_suggestions=False)
    assert plan.engine_profile == "sglang-0.4.8"
    assert plan.limits.memory_fraction == reference_fraction("0.4.8", GPU_MIB[gpu], 1, algorithm)


@pytest.mark.parametrize("family", ["0.4.6", "0.4.7"])
@pytest.mark.parametrize("algorithm", [None, "EAGLE3"])
def test_the_late_04_releases_large_gpu_terms_on_an_h200(family, algorithm):
    """Above 81,920 MiB 0.4.6 reserves 13 GiB and 0.4.7 takes the smaller of its headroom and 18/20 GiB rules."""
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"),
        draft=get_model(HEAD) if algorithm else None,
        gpu=get_gpu("h200-sxm-141gb"),
        engine="sglang",
        engine_version=family,
    )
    plan = plan_memory(dep, with_suggestions=False)
    fraction = reference_fraction(family, GPU_MIB["h200-sxm-141gb"], 1, algorithm)
    assert plan.limits.memory_fraction == pytest.approx(fraction, abs=1e-12)
    assert plan.kv_cache_tokens == pytest.approx(reference_tokens(family, plan, fraction), rel=0.01)


@pytest.mark.parametrize(("version", "family"), [("0.5.9", "0.5.3"), ("0.5.10", "0.5.10"), ("0.5.13", "0.5.10")])
def test_the_4_gib_eagle_reserve_and_prefill_graphs_begin_in_0510(version, family):
    """v0.5.9 reserves 2 GiB for EAGLE with piecewise graphs off; v0.5.10 to v0.5.13 reserve 4 GiB, and without a draft
    8 MiB per piecewise CUDA-graph token count."""
    for draft, algorithm in ((None, None), (HEAD, "EAGLE3")):
        dep = Deployment.build(
            target=get_model("Llama-3.1-8B"),
            draft=get_model(draft) if draft else None,
            gpu=get_gpu("h100-sxm-80gb"),
            engine="sglang",
            engine_version=version,
        )
        plan = plan_memory(dep, with_suggestions=False)
        assert plan.engine_profile == f"sglang-{family}"
        assert plan.limits.memory_fraction == reference_fraction(family, GPU_MIB["h100-sxm-80gb"], 1, algorithm)


def test_sglang_046_static_fraction_is_088_where_053_gives_0835():
    """The 0.4 TP table against 0.5.3's reserved-memory rule on one H100 (8B, TP 1)."""
    dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb"), engine="sglang")
    assert plan_memory(dep.replace(engine_version="0.4.6"), with_suggestions=False).limits.memory_fraction == 0.88
    assert plan_memory(dep.replace(engine_version="0.5.3"), with_suggestions=False).limits.memory_fraction == 0.835


def test_from_0515_the_draft_lives_inside_the_static_region():
    """0.5.3 sizes the target's pool alone and puts the 1B draft's pool beside it; 0.5.20 shares the region:
    the current release's pool is 40% smaller (8B + 1B draft on one H100)."""
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"), draft=get_model("Llama-3.2-1B"), gpu=get_gpu("h100-sxm-80gb"), engine="sglang"
    )
    old = plan_memory(dep.replace(engine_version="0.5.3"), with_suggestions=False)
    new = plan_memory(dep.replace(engine_version="0.5.20"), with_suggestions=False)
    assert old.kv_cache_tokens / new.kv_cache_tokens == pytest.approx(1.40, abs=0.01)
    assert new.per_gpu.unused_budget_bytes == 0  # weights and both models' KV fill the static region exactly


def test_the_current_release_weighs_the_heads_duplicate_embedding_and_lm_head():
    dep = Deployment.build(
        target=get_model("Llama-3.1-8B"), draft=get_model(HEAD), gpu=get_gpu("h100-sxm-80gb"), engine="sglang"
    )
    earlier = plan_memory(dep.replace(engine_version="0.5.15"), with_suggestions=False).per_gpu.draft_weights_bytes
    current = plan_memory(dep.replace(engine_version="0.5.20"), with_suggestions=False).per_gpu.draft_weights_bytes
    embedding = 128256 * 4096 * 2  # the head's own bf16 copy of Llama-3.1's embedding
    assert current - earlier == embedding  # its LM head is already its own (32,000 draft tokens)


def test_a_version_outside_every_family_is_refused_naming_the_ranges():
    with pytest.raises(InputError) as err:
        engine_profile("sglang", "0.3.6")
    assert (
        "[0.4.0, 0.4.6)" in str(err.value)
        and "[0.4.8, 0.5.3)" in str(err.value)
        and "0.5.20 or later" in str(err.value)
    )


def test_the_default_is_the_newest_family():
    assert engine_profile("sglang").id == "sglang-0.5.20"
