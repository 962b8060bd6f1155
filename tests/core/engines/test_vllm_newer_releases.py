"""vLLM 0.20 to 0.34 as their sources define them: the budget from 0.20, the 160 GiB batch tier from 0.28 and the
extensible KV cache of 0.34, sized from the memory left after warm-up."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile, resolve_limits
from planner.launch import launch_config
from planner.memory import plan_memory
from planner.units import GIB


@pytest.mark.parametrize(
    ("release", "profile"),
    [("0.19.1", "vllm-v1-0.10"), ("0.20.0", "vllm-v1-0.20"), ("0.25.0", "vllm-v1-0.20"), ("0.27.1", "vllm-v1-0.26"),
     ("0.28.0", "vllm-v1-0.28"), ("0.33.0", "vllm-v1-0.28"), ("0.34.0", "vllm-v1-0.34"), (None, "vllm-v1-0.34")],
)  # fmt: skip
def test_each_release_gets_the_budget_its_source_defines(release, profile):
    assert engine_profile("vllm", release).id == profile


def _dep(model: str, gpu: str, release: str | None, **fields) -> Deployment:
    return Deployment.build(target=get_model(model), gpu=get_gpu(gpu), engine="vllm", engine_version=release, **fields)


@pytest.mark.parametrize(
    ("gpu", "before", "from_0_28"),
    [("b200-180gb", (8192, 1024), (16384, 1024)), ("mi300x-192gb", (8192, 1024), (16384, 1024)),
     ("h200-sxm-141gb", (8192, 1024), (8192, 1024)), ("a100-sxm-80gb", (2048, 256), (2048, 256)),
     ("l40s-48gb", (2048, 256), (2048, 256))],
)  # fmt: skip
def test_gpus_of_160_gib_or_more_get_the_largest_batch_defaults_from_0_28(gpu, before, from_0_28):
    for release, expected in (("0.27.0", before), ("0.28.0", from_0_28), ("0.34.0", from_0_28)):
        dep = _dep("Llama-3.1-8B", gpu, release)
        limits = resolve_limits(dep, engine_profile("vllm", release))
        assert (limits.max_num_batched_tokens, limits.max_num_seqs) == expected, (gpu, release)


def test_0_20_subtracts_the_graphs_at_0_92_where_0_19_did_not():
    old, new = (plan_memory(_dep("Llama-3.1-8B", "h100-sxm-80gb", r)) for r in ("0.19.1", "0.20.0"))
    assert (old.limits.memory_fraction, new.limits.memory_fraction) == (0.9, 0.92)
    g_old, g_new = old.per_gpu, new.per_gpu
    assert g_old.outside_budget_bytes >= g_old.cudagraph_bytes > 0  # held beside an unchanged budget
    assert g_new.kv_cache_bytes == pytest.approx(
        g_new.memory_limit_bytes
        - g_new.target_weights_bytes
        - g_new.torch_peak_increase_bytes
        - g_new.non_torch_increase_bytes
        - g_new.cudagraph_bytes,
        abs=1,
    )


def test_the_extensible_cache_keeps_the_start_and_its_margin_free_and_takes_the_rest():
    """Llama-3.1-8B on one H100 at 0.34: the limit is the device less 0.51 GiB in use at start and
    max(1 GiB, 0.75 x peak); the cache is what the limit leaves, some 4.4 GiB more than 0.92 of the device left."""
    dep = _dep("Llama-3.1-8B", "h100-sxm-80gb", "0.34.0")
    plan = plan_memory(dep)
    gpu = plan.per_gpu
    peak = gpu.torch_peak_increase_bytes
    sizing = engine_profile("vllm", "0.34.0").measured_kv_sizing
    assert plan.limits.memory_fraction == 1.0
    assert gpu.total_bytes - gpu.memory_limit_bytes == round(0.51 * GIB) + max(round(1.0 * GIB), round(0.75 * peak))
    assert gpu.total_bytes - gpu.memory_limit_bytes == sizing.kept_free_bytes("nvidia", peak)
    resident = gpu.target_weights_bytes + gpu.non_torch_increase_bytes + gpu.cudagraph_bytes
    assert gpu.kv_cache_bytes == gpu.memory_limit_bytes - resident - peak
    before = plan_memory(_dep("Llama-3.1-8B", "h100-sxm-80gb", "0.33.0")).per_gpu
    assert 3.5 * GIB < gpu.kv_cache_bytes - before.kv_cache_bytes < 5.5 * GIB
    said = next(a for a in plan.assumptions if "measured after warm-up" in a)  # the user is told what is kept free
    assert f"{(gpu.total_bytes - gpu.memory_limit_bytes) / GIB:.2f} GiB per GPU kept free" in said


def test_an_explicit_fraction_caps_the_extensible_cache_as_it_capped_the_estimate():
    """An explicit gpu_memory_utilization of 0.92 caps 0.34 at what 0.33 gave (0.08 of an H100 is more than the
    start and the margin)."""
    capped, before = (
        plan_memory(_dep("Llama-3.1-8B", "h100-sxm-80gb", r, memory_fraction=0.92)).per_gpu
        for r in ("0.34.0", "0.33.0")
    )
    assert capped.kv_cache_bytes == before.kv_cache_bytes


def test_rocm_keeps_a_larger_margin():
    nvidia = engine_profile("vllm", "0.34.0").measured_kv_sizing
    assert nvidia.kept_free_bytes("amd", 0) - nvidia.kept_free_bytes("nvidia", 0) == 2 * GIB


@settings(max_examples=30, deadline=None)
@given(
    gpu=st.sampled_from(["h100-sxm-80gb", "h200-sxm-141gb", "b200-180gb", "mi300x-192gb", "l40s-48gb"]),
    fraction=st.one_of(st.none(), st.floats(0.5, 1.0)),
    max_model_len=st.sampled_from([2048, 8192, 32768]),
)
def test_no_release_plans_more_memory_than_the_device_holds(gpu, fraction, max_model_len):
    """Physics: whatever the fraction, the 0.34 plan's components fit the device, and it keeps its margin free."""
    dep = _dep("Llama-3.1-8B", gpu, "0.34.0", memory_fraction=fraction, max_model_len=max_model_len)
    g = plan_memory(dep).per_gpu
    used = (
        g.target_weights_bytes + g.torch_peak_increase_bytes + g.non_torch_increase_bytes + g.cudagraph_bytes
        + max(g.kv_cache_bytes, 0)
    )  # fmt: skip
    assert used <= g.total_bytes
    kept = engine_profile("vllm", "0.34.0").measured_kv_sizing.kept_free_bytes(
        get_gpu(gpu).vendor, g.torch_peak_increase_bytes
    )
    assert g.memory_limit_bytes <= g.total_bytes - kept


def test_the_launch_of_the_newest_release_states_its_default_fraction_and_its_flags():
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), tp=1, max_model_len=8192)
    config = launch_config(dep)
    assert config.release == "0.34.0" and config.release_source.endswith("/v0.34.0/vllm/engine/arg_utils.py")
    assert "--gpu-memory-utilization 1.0" in config.command


def test_before_0_26_rocm_skips_the_graph_estimate_so_its_graphs_stay_beside_the_budget():
    """vLLM 0.20-0.25 estimate CUDA-graph memory on CUDA only: on an MI300X the graphs sit outside the budget (the
    KV cache keeps their share); from 0.26 ROCm is estimated and subtracted like CUDA, and an H100 never differs."""
    rocm = {r: plan_memory(_dep("Llama-3.1-8B", "mi300x-192gb", r)).per_gpu for r in ("0.25.0", "0.26.0")}
    assert rocm["0.25.0"].cudagraph_bytes == rocm["0.26.0"].cudagraph_bytes > 0
    assert rocm["0.25.0"].kv_cache_bytes - rocm["0.26.0"].kv_cache_bytes == rocm["0.26.0"].cudagraph_bytes
    cuda = {r: plan_memory(_dep("Llama-3.1-8B", "h100-sxm-80gb", r)).per_gpu for r in ("0.25.0", "0.26.0")}
    assert cuda["0.25.0"].kv_cache_bytes == cuda["0.26.0"].kv_cache_bytes
