"""The vLLM calibration coefficients in data/engines.json are what ``python -m bench.fit_memory_profile`` fits, at
the precision the data keeps them (so the fitted/unseen split ``make bench-accuracy`` prints is the fit's own)."""

from __future__ import annotations

import statistics

import pytest

from bench.fit_memory_profile import _activation_rows, _non_torch_layouts, fit_activation, fit_cudagraphs
from planner.engines.components import calibration
from planner.facts import read_data_file
from planner.units import MIB


@pytest.fixture(scope="module")
def stored() -> dict:
    return read_data_file("engines.json")["calibration"]


def test_the_activation_coefficients_are_the_fit(stored):
    sampler, forward = fit_activation(_activation_rows())
    assert stored["sampler_bytes_per_logit"]["value"] == sampler
    assert stored["forward_activation_factor"]["value"] == forward


def test_the_cuda_graph_coefficients_are_the_fit(stored):
    first, per_layer_graph, points = fit_cudagraphs()
    assert len(points) >= 20
    assert stored["cudagraph"]["first_capture_mib"] == pytest.approx(first / MIB, abs=0.05)
    assert stored["cudagraph"]["mib_per_layer_per_extra_graph"] == pytest.approx(per_layer_graph / MIB, abs=0.0005)
    cal = calibration()  # what the planner reads: the stored MiB in bytes
    assert cal.cudagraph_first_capture_bytes == pytest.approx(first, rel=1e-3)
    assert cal.cudagraph_bytes_per_layer_per_extra_graph == pytest.approx(per_layer_graph, rel=2e-3)


def test_the_non_torch_constants_are_the_medians_of_their_logs(stored):
    for layout, entries in _non_torch_layouts().items():
        median = statistics.median(gib for _, gib in entries)
        assert stored["non_torch_gib"][layout] == pytest.approx(median, abs=0.0005), layout
