"""data/kernel_efficiency.json is what the installed measured kernel tables give."""

from __future__ import annotations

import pytest

from bench.fit_kernel_efficiency import derive, large_gemm_fraction, long_prefill_fraction
from planner.speed.kernel_efficiency import kernel_efficiency
from planner.speed.kernels import aiconfigurator_tables

pytestmark = pytest.mark.skipif(
    aiconfigurator_tables.systems_dir() is None, reason="aiconfigurator-core is not installed here"
)


def test_the_data_file_holds_the_derived_figures():
    content, _ = derive()
    stored = kernel_efficiency()
    for family in ("gemm", "attention"):
        assert getattr(stored, family).gpus == content[family]["gpus"]
        assert getattr(stored, family).vendors == content[family]["vendors"]


def test_a_figure_is_the_median_over_large_shapes_and_below_the_peak():
    value = large_gemm_fraction("h100-sxm-80gb", "vllm", "fp8")
    assert value is not None and 0.3 < value < 1.0
    assert large_gemm_fraction("a100-sxm-80gb", "vllm", "fp8") is None  # Ampere has no FP8 table


def test_long_prefill_attention_reaches_less_of_the_fp8_peak_than_of_the_bf16_one():
    bf16 = long_prefill_fraction("h100-sxm-80gb", "vllm", 2, (32, 8, 128))
    fp8 = long_prefill_fraction("h100-sxm-80gb", "vllm", 1, (32, 8, 128))
    assert bf16 is not None and fp8 is not None and 0 < fp8 < bf16 < 1
