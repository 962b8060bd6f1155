"""data/gemm_efficiency.json is what the installed measured GEMM tables give."""

from __future__ import annotations

import pytest

from bench.fit_gemm_efficiency import derive, large_gemm_fraction
from planner.speed.gemm_efficiency import gemm_efficiency
from planner.speed.kernels import aiconfigurator_tables

pytestmark = pytest.mark.skipif(
    aiconfigurator_tables.systems_dir() is None, reason="aiconfigurator-core is not installed here"
)


def test_the_data_file_holds_the_derived_figures():
    content, _ = derive()
    stored = gemm_efficiency()
    assert stored.gpus == content["gpus"]
    assert stored.vendors == content["vendors"]


def test_a_figure_is_the_median_over_large_shapes_and_below_the_peak():
    value = large_gemm_fraction("h100-sxm-80gb", "vllm", "fp8")
    assert value is not None and 0.3 < value < 1.0
    assert large_gemm_fraction("a100-sxm-80gb", "vllm", "fp8") is None  # Ampere has no FP8 table
