"""One measured job: load the pair, sample memory, run baseline and speculative decoding, predict, record.

:func:`measure` is what ``python -m planner measure`` and ``bench/validate_gpu.py`` call. A CUDA
out-of-memory anywhere (loading either model, or generating) is caught and recorded as a
``did_not_fit`` record with the memory at the time: a data point, not an error.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import torch

from planner.catalog.schemas import GpuSpec
from planner.measure import torch_memory
from planner.measure.acceptance_counts import acceptance_stats, verdicts_by_task
from planner.measure.environment import hardware_info, prediction_gpu, software_info
from planner.measure.model_loading import LoadedModel, load_model, resolve_device, resolve_dtype, token_codec
from planner.measure.nvml_sampler import NvmlResult, NvmlSampler
from planner.measure.options import MeasureOptions
from planner.measure.prediction import Prediction, comparison, predict
from planner.measure.prompts import PromptSet, load_prompts
from planner.measure.record import (
    DidNotFit,
    MeasurementRecord,
    MemoryMeasurement,
    ModelInfo,
    PromptSummary,
    SpeedMeasurement,
    make_record_id,
    save_record,
    utc_now,
)
from planner.measure.speculative_run import DecodeSettings, PromptResult, Trace, run_prompts
from planner.measure.vllm_backend import measure_vllm


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


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()


def _release_gpu_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _memory(
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


def measure(options: MeasureOptions, *, progress: Callable[[str], None] | None = None) -> MeasurementRecord:
    """Run the job ``options`` describe and return its record (saved unless ``options.save`` is False)."""
    if options.backend == "vllm":
        return measure_vllm(options)
    device = resolve_device(options.device)
    dtype = resolve_dtype(options.dtype, device)
    draft_dtype = resolve_dtype(options.draft_dtype or options.dtype, device, "draft_dtype")
    prompts: PromptSet = load_prompts(options.prompts)
    if options.prompts_per_task:
        prompts = prompts.limited(options.prompts_per_task)
    gpu = prediction_gpu(device, options.gpu)
    target = draft = None
    results: list[PromptResult] = []
    did_not_fit = None
    tokenizer = ""
    stage = "loading the target"
    sampler = NvmlSampler(options.sample_interval_s).start()
    torch_memory.reset_peaks(device)
    settings = None
    try:
        target = load_model(
            options.target, random_weights=options.random_weights, device=device, dtype=dtype, seed=options.seed
        )
        stage = "loading the draft"
        draft = load_model(
            options.draft,
            random_weights=options.random_weights,
            device=device,
            dtype=draft_dtype,
            seed=options.seed,
            field_name="draft",
        )
        vocab = min(target.vocab_size, draft.vocab_size)
        codec = token_codec(target, vocab)
        tokenizer = codec.name
        encoded = [(p.task, codec.encode(p.prompt)) for p in prompts.prompts]
        settings = DecodeSettings(
            k=options.k,
            max_new_tokens=options.max_new_tokens,
            mode=options.mode,
            temperature=options.temperature,
            seed=options.seed,
            vocab_size=vocab,
        )
        stage = "generating"
        results = run_prompts(target, draft, encoded, settings, device, warmup=options.warmup, progress=progress)
    except Exception as exc:
        if not _is_oom(exc):
            sampler.stop()
            raise
        latest = sampler.latest()
        now = torch_memory.read(device)
        did_not_fit = DidNotFit(
            stage=stage,
            message=str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__,
            torch_allocated_bytes=now.torch_allocated_bytes,
            torch_reserved_bytes=now.torch_reserved_bytes,
            nvml_device_used_bytes=sum(s.device_used_bytes for s in latest) or None,
            nvml_process_used_bytes=sum(s.process_used_bytes or 0 for s in latest) or None,
        )
        results = []
    torch_mem = torch_memory.read(device)
    nvml = sampler.stop()
    record = _assemble(
        options,
        device,
        dtype,
        draft_dtype,
        prompts,
        gpu,
        target,
        draft,
        tokenizer,
        results,
        nvml,
        torch_mem,
        did_not_fit,
    )
    del target, draft, results  # the next job (bench/validate_gpu.py runs several) starts from an empty GPU
    _release_gpu_memory()
    if options.save:
        path = save_record(record, options.out)
        record.notes.append(f"saved to {path}")
    return record


def _assemble(
    options: MeasureOptions,
    device: str,
    dtype: str,
    draft_dtype: str,
    prompts: PromptSet,
    gpu: GpuSpec | None,
    target: LoadedModel | None,
    draft: LoadedModel | None,
    tokenizer: str,
    results: list[PromptResult],
    nvml: NvmlResult,
    torch_mem: torch_memory.TorchMemory,
    did_not_fit: DidNotFit | None,
) -> MeasurementRecord:
    created = utc_now()
    target_name = target.name if target else Path(options.target).stem
    draft_name = draft.name if draft else Path(options.draft).stem
    memory = _memory(device, nvml, torch_mem, target, draft, results)
    counts = [n for r in results for n in r.speculative.accepted_per_step]
    stats = acceptance_stats(counts, options.k) if results else None
    by_task_counts: dict[str, list[int]] = {}
    prompts_by_task: dict[str, int] = {}
    for r in results:
        by_task_counts.setdefault(r.task, []).extend(r.speculative.accepted_per_step)
        prompts_by_task[r.task] = prompts_by_task.get(r.task, 0) + 1
    meaningful = not options.random_weights
    spec = speed_summary([r.speculative for r in results]) if results else None
    base = speed_summary([r.baseline for r in results]) if results else None
    speedup = base.tpot_s / spec.tpot_s if spec and base and spec.tpot_s > 0 else None
    longest = max((r.prompt_tokens for r in results), default=0) + options.max_new_tokens
    mean_prompt = round(sum(r.prompt_tokens for r in results) / len(results)) if results else 0
    if target is not None and draft is not None:
        prediction = predict(
            target_config=target.config,
            target_name=target.name,
            draft_config=draft.config,
            draft_name=draft.name,
            gpu=gpu,
            dtype=dtype,
            draft_dtype=draft_dtype,
            k=options.k,
            max_model_len=longest,
            prompt_tokens=mean_prompt,
            output_tokens=options.max_new_tokens,
            mean_accepted_len=stats.mean_accepted_len if stats else None,
            gpu_memory_bytes=torch_mem.device_total_bytes,
            on_gpu=device.startswith("cuda"),
        )
    else:
        prediction = Prediction(applicable=False, reason="the models did not load: nothing to predict")
    measured = {
        "target_weights": memory.target_weights_bytes or None,
        "draft_weights": memory.draft_weights_bytes or None,
        "kv_cache": memory.kv_cache_peak_bytes or None,
        "peak_memory": memory.peak_memory_bytes,
        "activation": memory.activation_peak_bytes,
        "non_torch": memory.non_torch_bytes,
        "speedup": speedup,
        "tpot": spec.tpot_s if spec else None,
        "baseline_tpot": base.tpot_s if base else None,
        "ttft": spec.ttft_s if spec else None,
        "baseline_ttft": base.ttft_s if base else None,
    }
    notes = [f"decode settings: {options.mode}, K = {options.k}, {options.max_new_tokens} new tokens, EOS ignored"]
    if options.random_weights:
        notes.append("random weights: memory and speed are real, acceptance is not meaningful")
    if did_not_fit is not None:
        notes.append(f"did not fit: CUDA out of memory while {did_not_fit.stage}")
    matches = [r.outputs_match for r in results if r.outputs_match is not None]
    return MeasurementRecord(
        id=make_record_id(target_name, draft_name, "transformers", created, k=options.k),
        created_at=created,
        status="did_not_fit" if did_not_fit else "ok",
        backend="transformers",
        mode=options.mode,
        temperature=options.temperature,
        seed=options.seed,
        k=options.k,
        max_new_tokens=options.max_new_tokens,
        random_weights=options.random_weights,
        acceptance_meaningful=meaningful,
        hardware=hardware_info(device, nvml, gpu),
        software=software_info(),
        target=model_info(target) if target else None,
        draft=model_info(draft) if draft else None,
        dtype=dtype,
        draft_dtype=draft_dtype,
        tokenizer=tokenizer,
        prompts_files=prompts.files,
        prompts_sha256=prompts.sha256,
        prompts_count=len(prompts.prompts),
        tasks=prompts.tasks,
        alpha=stats.alpha if stats else None,
        mean_accepted_len=stats.mean_accepted_len if stats else None,
        acceptance_by_position=stats.acceptance_by_position if stats else [],
        tokens_per_s=spec.tokens_per_s if spec else None,
        baseline_tokens_per_s=base.tokens_per_s if base else None,
        speedup=speedup,
        peak_memory_bytes=memory.peak_memory_bytes,
        nvml_available=nvml.available,
        predicted=prediction,
        errors_frac=comparison(prediction, measured),
        verdict_by_task=verdicts_by_task(by_task_counts, prompts_by_task, options.k, meaningful=meaningful),
        acceptance=stats,
        acceptance_by_task={t: acceptance_stats(c, options.k) for t, c in sorted(by_task_counts.items())},
        speculative=spec,
        baseline=base,
        outputs_match_baseline=all(matches) if matches else None,
        memory=memory,
        nvml=nvml,
        did_not_fit=did_not_fit,
        per_prompt=[
            PromptSummary(
                index=r.index,
                task=r.task,
                prompt_tokens=r.prompt_tokens,
                accepted_per_step=r.speculative.accepted_per_step,
                outputs_match=r.outputs_match,
            )
            for r in results
        ],
        notes=notes,
    )
