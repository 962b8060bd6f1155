"""What one measured job's raw results add up to: the models loaded, decode speed, and memory by source.

Pure bookkeeping over the traces and readings the harness collected; each memory figure says which
reading it came from (NVML process peak, NVML device peak increase, or torch's reserved peak), the
way vLLM's memory profiling names each figure for what it measures.
"""

from __future__ import annotations

import hashlib
import json

from planner.measure import torch_memory
from planner.measure.model_loading import LoadedModel
from planner.measure.nvml_sampler import NvmlResult
from planner.measure.record import MemoryMeasurement, ModelInfo, SpeedMeasurement
from planner.measure.speculative_run import PromptResult, Trace


def model_info(loaded: LoadedModel) -> ModelInfo:
    text = json.dumps(loaded.config, sort_keys=True, default=str)
    return ModelInfo(
        name=loaded.name,
        source=loaded.source,
        path=loaded.path,
        model_type=loaded.config.get("model_type"),
        parameters=loaded.parameters,
        weights_bytes=loaded.weights_bytes,
        dtype=loaded.dtype,
        config_sha256=hashlib.sha256(text.encode()).hexdigest(),
        notes=loaded.notes,
    )


def speed_summary(traces: list[Trace]) -> SpeedMeasurement:
    decode_tokens = sum(t.decode_tokens for t in traces)
    emitted = sum(t.emitted_tokens for t in traces)
    wall = sum(t.wall_s for t in traces)
    return SpeedMeasurement(
        prompts=len(traces),
        output_tokens=sum(len(t.tokens) for t in traces),
        decode_tokens=decode_tokens,
        ttft_s=sum(t.ttft_s for t in traces) / len(traces),
        tpot_s=sum(t.decode_s for t in traces) / decode_tokens if decode_tokens else 0.0,
        tokens_per_s=emitted / wall if wall > 0 else 0.0,
        wall_s=wall,
        draft_s=sum(t.draft_s for t in traces),
        verify_s=sum(t.verify_s for t in traces),
    )


def memory_summary(
    device: str,
    nvml: NvmlResult,
    torch_mem: torch_memory.TorchMemory,
    target: LoadedModel | None,
    draft: LoadedModel | None,
    results: list[PromptResult],
) -> MemoryMeasurement:
    target_kv = max((r.speculative.target_kv_bytes for r in results), default=0)
    draft_kv = max((r.speculative.draft_kv_bytes for r in results), default=0)
    weights = (target.weights_bytes if target else 0) + (draft.weights_bytes if draft else 0)
    mem = MemoryMeasurement(
        torch=torch_mem,
        target_weights_bytes=target.weights_bytes if target else 0,
        draft_weights_bytes=draft.weights_bytes if draft else 0,
        target_kv_peak_bytes=target_kv,
        draft_kv_peak_bytes=draft_kv,
        kv_cache_peak_bytes=target_kv + draft_kv,
        notes=dict(torch_memory.NOTES),
    )
    mem.notes["kv_cache_peak_bytes"] = "largest key/value tensors of the two DynamicCaches during verification"
    mem.notes["activation_peak_bytes"] = "torch peak allocated minus weights minus peak KV (prefill/verify buffers)"
    if not device.startswith("cuda"):
        mem.peak_memory_source = "cpu run: no GPU memory"
        return mem
    if nvml.available:
        mem.nvml_process_peak_bytes = nvml.peak_process_total_bytes
        mem.nvml_device_peak_bytes = sum(nvml.peak_device_used_bytes.values()) or None
        mem.nvml_device_baseline_bytes = sum(nvml.baseline_device_used_bytes.values()) or None
    if mem.nvml_process_peak_bytes:
        mem.peak_memory_bytes, mem.peak_memory_source = mem.nvml_process_peak_bytes, "NVML process peak"
    elif nvml.available and nvml.peak_device_increase_bytes:
        mem.peak_memory_bytes = nvml.peak_device_increase_bytes
        mem.peak_memory_source = "NVML device peak minus the reading before the run (no per-process figure)"
    elif torch_mem.torch_max_reserved_bytes is not None:
        mem.peak_memory_bytes = torch_mem.torch_max_reserved_bytes
        mem.peak_memory_source = "torch max_memory_reserved (NVML unavailable: CUDA context not included)"
    if torch_mem.torch_max_allocated_bytes is not None:
        mem.activation_peak_bytes = max(0, torch_mem.torch_max_allocated_bytes - weights - mem.kv_cache_peak_bytes)
    if mem.nvml_process_peak_bytes and torch_mem.torch_max_reserved_bytes is not None:
        mem.non_torch_bytes = max(0, mem.nvml_process_peak_bytes - torch_mem.torch_max_reserved_bytes)
    return mem
