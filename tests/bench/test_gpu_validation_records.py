"""The runs `make validate-gpu` recorded on a real H200 (data/calibration/gpu-validation-h200/) against the planner
as it is now: the exact quantities stay exact, and the calibrated ones stay within the error the runs showed.

Each record is re-predicted from the catalog config it was built from , so a
change to the weight or KV formulas, the catalog or the hf memory profile that contradicts the real GPU fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.validate_gpu import PAIRS, _config
from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import get_gpu
from planner.measure.prediction import predict
from planner.measure.record import MeasurementRecord
from planner.model.param_count import count_parameters

RUNS = Path(__file__).resolve().parents[2] / "data" / "calibration" / "gpu-validation-h200"
RECORDS = sorted(RUNS.glob("*T*Z-*.json"))  # the records (named by their UTC time), not the GEMM timings


def test_every_pair_of_the_validation_has_a_record_from_a_real_gpu():
    records = [MeasurementRecord.model_validate_json(p.read_text()) for p in RECORDS]
    assert {(r.target.name, r.draft.name) for r in records} == set(PAIRS)
    for r in records:
        assert r.status == "ok" and r.hardware.device == "cuda" and r.hardware.gpu_name == "NVIDIA H200"
        assert r.memory.peak_memory_source == "NVML process peak" and r.nvml.samples


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name.split("-transformers")[0])
def test_the_plan_of_a_recorded_run_matches_the_real_gpu(path):
    r = MeasurementRecord.model_validate_json(path.read_text())
    target, draft = _config(r.target.name, tiny=False), _config(r.draft.name, tiny=False)
    prediction = predict(
        target_config=target,
        target_name=r.target.name,
        draft_config=draft,
        draft_name=r.draft.name,
        gpu=get_gpu(r.hardware.catalog_gpu),
        dtype=r.dtype,
        draft_dtype=r.draft_dtype,
        k=r.k,
        max_model_len=r.predicted.max_model_len,
        prompt_tokens=1,
        output_tokens=r.max_new_tokens,
        mean_accepted_len=None,
        gpu_memory_bytes=r.hardware.gpu_memory_total_bytes,
    )
    m = prediction.memory
    # Exact: parameter bytes of the tensors the GPU held.
    assert m.target_weights_bytes == r.memory.target_weights_bytes
    assert m.draft_weights_bytes == r.memory.draft_weights_bytes
    # Exact per token; the run's cache peaked a few positions short of the planned max length.
    kv_error = (m.kv_cache_bytes - r.memory.kv_cache_peak_bytes) / r.memory.kv_cache_peak_bytes
    assert 0 <= kv_error < 0.01
    # Calibrated: the whole footprint within the 10% the runs showed (activation and CUDA context run high here).
    peak_error = (m.peak_memory_bytes - r.memory.peak_memory_bytes) / r.memory.peak_memory_bytes
    assert abs(peak_error) < 0.10, f"peak error {peak_error:+.1%}"


def test_the_parameter_counts_of_the_recorded_models_are_the_planners():
    for path in RECORDS:
        r = MeasurementRecord.model_validate_json(path.read_text())
        for side in (r.target, r.draft):
            spec = model_from_config(_config(side.name, tiny=False), model_id=side.name)
            assert count_parameters(spec.architecture, spec.config).total_params == side.parameters
