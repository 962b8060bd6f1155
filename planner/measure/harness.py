"""One measured job: load the pair, sample memory, run baseline and speculative decoding, predict, record.

:func:`measure` is what ``python -m planner measure`` and ``bench/validate_gpu.py`` call. A CUDA
out-of-memory anywhere (loading either model, or generating) is caught and recorded as a
``did_not_fit`` record with the memory at the time: a data point, not an error. The run's results
become a record in :mod:`planner.measure.assemble`; :mod:`planner.measure.summaries` adds them up.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import torch

from planner.measure import torch_memory
from planner.measure.assemble import JobOutcome, assemble_record
from planner.measure.environment import prediction_gpu
from planner.measure.model_loading import load_model, resolve_device, resolve_dtype, token_codec
from planner.measure.nvml_sampler import NvmlSampler
from planner.measure.options import MeasureOptions
from planner.measure.prompts import PromptSet, load_prompts
from planner.measure.record import DidNotFit, MeasurementRecord, save_record_where
from planner.measure.speculative_run import DecodeSettings, PromptResult, run_prompts
from planner.measure.vllm_backend import measure_vllm

__all__ = ["MeasureOptions", "measure"]


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()


def _release_gpu_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _did_not_fit(stage: str, exc: BaseException, sampler: NvmlSampler, device: str) -> DidNotFit:
    """The out-of-memory data point: the stage, the error's first line and the memory at that moment."""
    latest = sampler.latest()
    now = torch_memory.read(device)
    return DidNotFit(
        stage=stage,
        message=str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__,
        torch_allocated_bytes=now.torch_allocated_bytes,
        torch_reserved_bytes=now.torch_reserved_bytes,
        nvml_device_used_bytes=sum(s.device_used_bytes for s in latest) or None,
        nvml_process_used_bytes=sum(s.process_used_bytes or 0 for s in latest) or None,
    )


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
        did_not_fit = _did_not_fit(stage, exc, sampler, device)
        results = []
    torch_mem = torch_memory.read(device)
    nvml = sampler.stop()
    record = assemble_record(
        options,
        JobOutcome(
            device=device,
            dtype=dtype,
            draft_dtype=draft_dtype,
            prompts=prompts,
            gpu=gpu,
            target=target,
            draft=draft,
            tokenizer=tokenizer,
            results=results,
            nvml=nvml,
            torch_mem=torch_mem,
            did_not_fit=did_not_fit,
        ),
    )
    del target, draft, results  # the next job (bench/validate_gpu.py runs several) starts from an empty GPU
    _release_gpu_memory()
    if options.save:
        record.notes.append(save_record_where(record, options.out).message)
    return record
