"""The roofline's GEMM and attention efficiency per GPU and precision (data/kernel_efficiency.json)."""

from __future__ import annotations

import json

import pytest

from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_node, get_weight_format
from planner.deployment import Deployment
from planner.errors import CatalogError
from planner.speed.estimate import SpeedWorkload, estimate_speed
from planner.speed.kernel_efficiency import attention_flops_frac, gemm_flops_frac, kernel_efficiency
from planner.speed.kernels.aiconfigurator_tables import roofline_only
from planner.speed.profiles import speed_profile
from planner.speed.roofline import model_cost
from planner.speed.step_model import StepModel

NVIDIA = speed_profile("vllm", "nvidia")


def test_a_covered_gpu_takes_its_own_figure_per_precision():
    b200 = get_gpu("b200-180gb")
    own = kernel_efficiency().gemm.gpus["b200-180gb"]
    assert gemm_flops_frac(b200, "fp4", NVIDIA)[0] == own["fp4"]
    assert gemm_flops_frac(b200, "bf16", NVIDIA)[0] == own["bf16"]
    # the low precisions reach less of their (higher) peak than BF16 does
    assert own["fp4"] < own["fp8"] < own["bf16"]


def test_fp16_takes_bf16s_figure_an_uncovered_nvidia_gpu_its_vendors_and_amd_the_profiles():
    h100 = get_gpu("h100-sxm-80gb")
    assert gemm_flops_frac(h100, "fp16", NVIDIA)[0] == gemm_flops_frac(h100, "bf16", NVIDIA)[0]
    frac, source = gemm_flops_frac(get_gpu("h100-pcie-80gb"), "fp8", NVIDIA)
    assert frac == kernel_efficiency().gemm.vendors["nvidia"]["fp8"] and "median of nvidia" in source
    amd = speed_profile("vllm", "amd")
    assert gemm_flops_frac(get_gpu("mi300x-192gb"), "bf16", amd) == (amd.flops_frac, amd.sources["flops_frac"])


def test_attention_takes_the_figure_of_its_own_precision():
    """Over an 8-bit cache attention runs at FP8 and reaches less of that peak than 16-bit attention of its own."""
    h100 = get_gpu("h100-sxm-80gb")
    own = kernel_efficiency().attention.gpus["h100-sxm-80gb"]
    assert attention_flops_frac(h100, "fp8", NVIDIA)[0] == own["fp8"] < own["bf16"]
    cost = model_cost(get_model("Llama-3.1-8B"), get_weight_format("bf16"), get_kv_dtype("fp8"), h100)
    model = StepModel(cost, h100, NVIDIA, measured_kernels=False)
    assert model.attn_peak == own["fp8"] * h100.fp8_dense_tflops * 1e12
    amd = speed_profile("vllm", "amd")
    assert attention_flops_frac(get_gpu("mi300x-192gb"), "bf16", amd)[0] == amd.attention_flops_frac
    what_if = NVIDIA.with_values(attention_flops_frac=0.9)
    assert attention_flops_frac(h100, "fp8", what_if) == (0.9, "set on the speed profile")


def test_a_value_set_on_the_profile_wins():
    what_if = NVIDIA.with_values(flops_frac=0.9)
    assert gemm_flops_frac(get_gpu("b200-180gb"), "fp4", what_if) == (0.9, "set on the speed profile")


def test_a_large_prefill_computes_no_faster_than_the_measured_fraction_of_the_fp4_peak():
    b200 = get_gpu("b200-180gb")
    cost = model_cost(get_model("Llama-3.1-8B"), get_weight_format("nvfp4"), get_kv_dtype("fp8"), b200)
    model = StepModel(cost, b200, NVIDIA, measured_kernels=False)
    step = model.prefill(8192)
    gemm_flops = 2 * cost.matmul_params_per_gpu * 8192
    assert (
        gemm_flops / step.weight_gemm_s
        <= kernel_efficiency().gemm.gpus["b200-180gb"]["fp4"] * b200.fp4_dense_tflops * 1e12
    )


def test_a_bad_figure_names_the_file_and_the_field(tmp_data_dir):
    path = tmp_data_dir / "kernel_efficiency.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["attention"]["gpus"]["h100-sxm-80gb"]["fp8"] = 1.5
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"kernel_efficiency\.json.*h100-sxm-80gb\.fp8"):
        kernel_efficiency()


def test_the_assumptions_of_an_estimate_show_the_gemm_fraction_the_target_is_priced_at():
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-b200-180gb"), tp=8, draft=get_model("Llama-3.2-1B"),
        dtype="nvfp4",
    )  # fmt: skip
    shown = {
        name: (value, source) for name, value, source in estimate_speed(dep, SpeedWorkload.build(alpha=0.7)).assumptions
    }
    value, source = shown["flops_frac"]
    assert value == kernel_efficiency().gemm.gpus["b200-180gb"]["fp4"]
    assert source.startswith("measured large GEMMs on this GPU at fp4")
    value, source = shown["attention_flops_frac"]  # a 16-bit KV cache: 16-bit attention
    assert value == kernel_efficiency().attention.gpus["b200-180gb"]["bf16"]
    assert source.startswith("measured prefill attention on this GPU at bf16")


def test_the_figures_hold_without_aiconfigurator_core_installed():
    h100 = get_gpu("h100-sxm-80gb")
    cost = model_cost(get_model("Llama-3.1-8B"), get_weight_format("fp8"), get_kv_dtype("fp8"), h100)
    with roofline_only():
        model = StepModel(cost, h100, NVIDIA)
        assert model.measured is None
        assert model.gemm_frac == kernel_efficiency().gemm.gpus["h100-sxm-80gb"]["fp8"]
        assert model.gemm_peak == model.gemm_frac * h100.fp8_dense_tflops * 1e12
