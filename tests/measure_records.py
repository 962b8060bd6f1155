"""Small, valid measurement records for tests of the record files, the store and the Validation page.

The figures are shaped like a real GPU run (an NVML timeline, a prediction beside the measurement)
but are test data, not measurements: nothing here is shown as a result.
"""

from __future__ import annotations

from planner.measure.acceptance_counts import acceptance_stats, verdicts_by_task
from planner.measure.nvml_sampler import MemorySample, NvmlDevice, NvmlResult
from planner.measure.prediction import PredictedMemory, PredictedSpeed, Prediction
from planner.measure.record import (
    HardwareInfo,
    MeasurementRecord,
    MemoryMeasurement,
    ModelInfo,
    SoftwareInfo,
    SpeedMeasurement,
    make_record_id,
)
from planner.measure.torch_memory import TorchMemory
from planner.units import GIB


def sample_record(
    *,
    gpu: str = "h100-sxm-80gb",
    created_at: str = "2026-01-02T03:04:05Z",
    target: str = "tgt",
    draft: str = "drf",
    counts: dict[str, list[int]] | None = None,
) -> MeasurementRecord:
    k = 4
    counts = counts or {"chat": [4, 2, 0, 4, 3], "code": [4, 4, 4, 3, 4]}
    flat = [n for c in counts.values() for n in c]
    stats = acceptance_stats(flat, k)
    samples = [
        MemorySample(
            t_s=i * 0.01,
            gpu_index=0,
            device_used_bytes=(1 + i) * GIB,
            device_total_bytes=80 * GIB,
            process_used_bytes=i * GIB,
        )
        for i in range(20)
    ]
    nvml = NvmlResult(
        available=True,
        driver_version="550.54.15",
        devices=[NvmlDevice(index=0, name="NVIDIA H100 80GB HBM3", total_bytes=80 * GIB)],
        samples=samples,
        sample_count=20,
        duration_s=0.2,
        baseline_device_used_bytes={"0": GIB},
        peak_device_used_bytes={"0": 20 * GIB},
        peak_process_used_bytes={"0": 19 * GIB},
    )
    prediction = Prediction(
        applicable=True,
        gpu=gpu,
        max_model_len=1024,
        memory=PredictedMemory(
            total_bytes=80 * GIB,
            target_weights_bytes=15 * GIB,
            draft_weights_bytes=2 * GIB,
            activation_bytes=GIB // 4,
            non_torch_bytes=GIB // 2,
            cudagraph_bytes=0,
            kv_cache_bytes=GIB // 8,
            peak_memory_bytes=18 * GIB,
            fits=True,
        ),
        speed=PredictedSpeed(
            profile="hf",
            mean_accepted_len=stats.mean_accepted_len,
            alpha=0.8,
            baseline_tpot_s=0.02,
            spec_tpot_s=0.01,
            speedup=2.0,
            baseline_ttft_s=0.05,
            spec_ttft_s=0.06,
            baseline_tok_s_per_sequence=50,
            tok_s_per_sequence=100,
        ),
        speed_comparable=True,
    )
    model = ModelInfo(
        name=target,
        source="random-weights",
        path="x",
        parameters=8,
        weights_bytes=15 * GIB,
        dtype="bf16",
        config_sha256="0" * 64,
    )
    return MeasurementRecord(
        id=make_record_id(target, draft, "transformers", created_at),
        created_at=created_at,
        status="ok",
        backend="transformers",
        mode="greedy",
        temperature=1.0,
        seed=0,
        k=k,
        max_new_tokens=32,
        random_weights=False,
        acceptance_meaningful=True,
        hardware=HardwareInfo(device="cuda", gpu_name="NVIDIA H100 80GB HBM3", gpu_count=1, catalog_gpu=gpu),
        software=SoftwareInfo(python="3.11", platform="linux"),
        target=model,
        draft=model.model_copy(update={"name": draft, "weights_bytes": 2 * GIB}),
        dtype="bf16",
        draft_dtype="bf16",
        prompts_files=["p.jsonl"],
        prompts_sha256="1" * 64,
        prompts_count=2,
        tasks={t: 1 for t in counts},
        alpha=stats.alpha,
        mean_accepted_len=stats.mean_accepted_len,
        acceptance_by_position=stats.acceptance_by_position,
        tokens_per_s=80.0,
        baseline_tokens_per_s=45.0,
        speedup=1.8,
        peak_memory_bytes=19 * GIB,
        nvml_available=True,
        predicted=prediction,
        errors_frac={"peak_memory": -0.05, "speedup": 0.11, "target_weights": 0.0},
        verdict_by_task=verdicts_by_task(counts, {t: 1 for t in counts}, k),
        acceptance=stats,
        acceptance_by_task={t: acceptance_stats(c, k) for t, c in counts.items()},
        speculative=SpeedMeasurement(
            prompts=2, output_tokens=64, decode_tokens=62, ttft_s=0.06, tpot_s=0.011, tokens_per_s=80.0, wall_s=0.8
        ),
        baseline=SpeedMeasurement(
            prompts=2, output_tokens=64, decode_tokens=62, ttft_s=0.05, tpot_s=0.02, tokens_per_s=45.0, wall_s=1.4
        ),
        memory=MemoryMeasurement(
            peak_memory_bytes=19 * GIB,
            peak_memory_source="NVML process peak",
            torch=TorchMemory(device="cuda", torch_max_allocated_bytes=17 * GIB, torch_max_reserved_bytes=18 * GIB),
            target_weights_bytes=15 * GIB,
            draft_weights_bytes=2 * GIB,
            kv_cache_peak_bytes=GIB // 8,
            activation_peak_bytes=GIB // 4,
            non_torch_bytes=GIB,
        ),
        nvml=nvml,
    )
