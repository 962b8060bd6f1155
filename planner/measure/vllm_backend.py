"""The same job through vLLM: ``vllm.LLM`` with a draft-model ``speculative_config``, tensor parallel on the node.

Needs a GPU machine with the ``vllm`` package; without it :func:`measure_vllm` raises an
``InputError`` naming the transformers backend instead. Tensor parallelism (default: every visible
GPU) is how the harness scales past one GPU. The baseline is a second engine without the draft.
Acceptance comes from vLLM's own counters (``LLM.get_metrics()``), read before and after each task's
prompts and converted by :mod:`planner.measure.vllm_metrics` (docs/acceptance.md).
Prompts run as one batch per task, so speed is throughput at that batch, and the prediction is the
``vllm`` engine's plan and the serving simulator's run of one offline batch of that size (prefill included).

This module imports vllm only inside :func:`measure_vllm`; it has not been run in this project's
CI (no GPU there): the metric parsing and conversion it relies on are unit-tested on real metric text.
"""

from __future__ import annotations

import gc
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from planner.acceptance_math import alpha_from_tau
from planner.catalog.lookup import get_weight_format
from planner.errors import InputError
from planner.measure.acceptance_counts import AcceptanceStats, TaskVerdict, task_verdict
from planner.measure.nvml_sampler import NvmlSampler
from planner.measure.options import MeasureOptions
from planner.measure.prediction import comparison, predict
from planner.measure.prompts import load_prompts
from planner.measure.record import MeasurementRecord, MemoryMeasurement, make_record_id, save_record_where, utc_now
from planner.measure.torch_memory import TorchMemory
from planner.measure.vllm_metrics import SpecAcceptance, acceptance_from_counters, counter_delta, counters_from_metrics


def _stats(m: SpecAcceptance) -> AcceptanceStats:
    """A SpecAcceptance in the record's acceptance shape (counts are vLLM's, histogram unknown)."""
    return AcceptanceStats(
        k=m.k,
        steps=round(m.drafts or 0),
        drafted_tokens=round(m.drafted_tokens or 0),
        accepted_tokens=round(m.accepted_tokens or 0),
        alpha=m.alpha_first_position if m.alpha_first_position is not None else m.alpha,
        alpha_from_tau=m.alpha,
        mean_accepted_len=m.mean_accepted_len,
        draft_acceptance_rate=m.draft_acceptance_rate,
        acceptance_by_position=m.acceptance_by_position,
        conditional_acceptance_by_position=[],
        accepted_count_histogram=[],
    )


def _model_dir(source: str, random_weights: bool, scratch: Path, name: str) -> str:
    """vLLM takes a folder; a bare config.json (random weights) is placed in one."""
    path = Path(source)
    if path.is_dir():
        return str(path)
    if not random_weights:
        raise InputError(name, source, "a local model folder (or --random-weights with a config.json)")
    folder = scratch / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return str(folder)


def measure_vllm(options: MeasureOptions) -> MeasurementRecord:
    """Run baseline and speculative engines over the prompts; return (and save) the record."""
    try:
        import vllm
    except ImportError:
        raise InputError(
            "backend", "vllm", "transformers: the vllm package is not installed (the vLLM backend needs a GPU machine)"
        ) from None
    import torch

    from planner.measure.environment import hardware_info, prediction_gpu, software_info
    from planner.measure.model_loading import byte_codec, resolve_dtype

    if not torch.cuda.is_available():
        raise InputError("device", "cpu", "a CUDA GPU: the vLLM backend runs on GPUs only")
    device = "cuda"
    dtype = resolve_dtype(options.dtype, device)
    tp = options.tensor_parallel_size or torch.cuda.device_count()
    prompts = load_prompts(options.prompts)
    if options.prompts_per_task:
        prompts = prompts.limited(options.prompts_per_task)
    by_task: dict[str, list[str]] = {}
    for p in prompts.prompts:
        by_task.setdefault(p.task, []).append(p.prompt)
    scratch = Path(tempfile.mkdtemp(prefix="planner-vllm-"))
    target_dir = _model_dir(options.target, options.random_weights, scratch, "target")
    draft_dir = _model_dir(options.draft, options.random_weights, scratch, "draft")
    target_config = json.loads((Path(target_dir) / "config.json").read_text())
    draft_config = json.loads((Path(draft_dir) / "config.json").read_text())
    longest = max(len(p.prompt.encode()) for p in prompts.prompts) + options.max_new_tokens
    common: dict[str, Any] = {
        "model": target_dir,
        "dtype": get_weight_format(dtype).torch_dtype,
        "tensor_parallel_size": tp,
        "seed": options.seed,
        "max_model_len": longest + options.k + 8,
        "disable_log_stats": False,
        "trust_remote_code": False,
    }
    launched = dict(options.engine_args or {})
    launched_spec = launched.pop("speculative_config", None) or {}
    common |= launched  # a generated launch command's knobs: the run starts what the plan launches
    tp = common["tensor_parallel_size"]
    if options.random_weights:
        common |= {"load_format": "dummy", "skip_tokenizer_init": True}
    sampling = vllm.SamplingParams(
        temperature=0.0 if options.mode == "greedy" else options.temperature,
        max_tokens=options.max_new_tokens,
        ignore_eos=True,
        seed=options.seed,
    )
    vocab = min(int(target_config.get("vocab_size", 0)), int(draft_config.get("vocab_size", 0)))

    def as_inputs(texts: list[str]) -> list[Any]:
        if options.random_weights:
            codec = byte_codec(vocab)
            return [{"prompt_token_ids": codec.encode(t)} for t in texts]
        return texts

    def run(engine: Any) -> tuple[dict[str, Any], float, int]:
        acceptance: dict[str, Any] = {}
        wall, tokens = 0.0, 0
        for task, texts in sorted(by_task.items()):
            before = counters_from_metrics(engine.get_metrics())
            start = time.perf_counter()
            outputs = engine.generate(as_inputs(texts), sampling, use_tqdm=False)
            wall += time.perf_counter() - start
            tokens += sum(len(o.outputs[0].token_ids) for o in outputs)
            acceptance[task] = acceptance_from_counters(
                counter_delta(counters_from_metrics(engine.get_metrics()), before), options.k
            )
        return acceptance, wall, tokens

    sampler = NvmlSampler(options.sample_interval_s).start()
    status, problems = "ok", []
    base_wall = base_tokens = spec_wall = spec_tokens = 0
    spec_acceptance: dict[str, Any] = {}
    try:
        baseline_engine = vllm.LLM(**common)
        _, base_wall, base_tokens = run(baseline_engine)
        del baseline_engine
        gc.collect()
        torch.cuda.empty_cache()
        spec_engine = vllm.LLM(
            **common,
            speculative_config={
                "draft_tensor_parallel_size": tp,
                **launched_spec,
                "model": draft_dir,
                "num_speculative_tokens": options.k,
            },
        )
        spec_acceptance, spec_wall, spec_tokens = run(spec_engine)
        del spec_engine
    except Exception as exc:
        if "out of memory" not in str(exc).lower():
            sampler.stop()
            raise
        status = "did_not_fit"
        problems.append(f"CUDA out of memory: {str(exc).splitlines()[0][:300]}")
    nvml = sampler.stop()
    gc.collect()
    counters = [m for m in spec_acceptance.values() if m is not None]
    total = None
    if counters:
        drafts = sum(m.drafts for m in counters)
        accepted = sum(m.accepted_tokens for m in counters)
        total = _stats(
            SpecAcceptance(
                source="vLLM V1 counters",
                k=options.k,
                mean_accepted_len=1 + accepted / drafts,
                alpha=0.0,
                drafts=drafts,
                accepted_tokens=accepted,
                drafted_tokens=drafts * options.k,
            )
        )

        total.alpha = total.alpha_from_tau = alpha_from_tau(min(options.k + 1.0, total.mean_accepted_len), options.k)
    gpu = prediction_gpu(device, options.gpu)
    batch = max(1, round(len(prompts.prompts) / max(1, len(by_task))))
    prediction = predict(
        target_config=target_config,
        target_name=Path(options.target).name,
        draft_config=draft_config,
        draft_name=Path(options.draft).name,
        gpu=gpu,
        dtype=dtype,
        draft_dtype=dtype,
        k=options.k,
        max_model_len=common["max_model_len"],
        prompt_tokens=max(1, longest - options.max_new_tokens),
        output_tokens=options.max_new_tokens,
        mean_accepted_len=total.mean_accepted_len if total else None,
        engine="vllm",
        tp=tp,
        batch_size=batch,
        offline_batch=True,
    )
    speedup = (spec_tokens / spec_wall) / (base_tokens / base_wall) if spec_wall and base_wall else None
    verdicts: dict[str, TaskVerdict] = {
        task: task_verdict(task, _stats(m), len(by_task[task]), meaningful=not options.random_weights)
        for task, m in spec_acceptance.items()
        if m is not None
    }
    peak = nvml.peak_process_total_bytes or nvml.peak_device_increase_bytes
    created = utc_now()
    record = MeasurementRecord(
        id=make_record_id(Path(options.target).name, Path(options.draft).name, "vllm", created, k=options.k),
        created_at=created,
        status=status,
        backend="vllm",
        mode=options.mode,
        temperature=options.temperature,
        seed=options.seed,
        k=options.k,
        max_new_tokens=options.max_new_tokens,
        random_weights=options.random_weights,
        acceptance_meaningful=not options.random_weights,
        hardware=hardware_info(device, nvml, gpu),
        software=software_info(),
        target=None,
        draft=None,
        dtype=dtype,
        draft_dtype=dtype,
        tensor_parallel_size=tp,
        prompts_files=prompts.files,
        prompts_sha256=prompts.sha256,
        prompts_count=len(prompts.prompts),
        tasks=prompts.tasks,
        alpha=total.alpha if total else None,
        mean_accepted_len=total.mean_accepted_len if total else None,
        acceptance_by_position=[],
        tokens_per_s=spec_tokens / spec_wall if spec_wall else None,
        baseline_tokens_per_s=base_tokens / base_wall if base_wall else None,
        speedup=speedup,
        peak_memory_bytes=peak,
        nvml_available=nvml.available,
        predicted=prediction,
        errors_frac=comparison(prediction, {"peak_memory": peak, "speedup": speedup}),
        verdict_by_task=verdicts,
        acceptance=total,
        acceptance_by_task={t: _stats(m) for t, m in spec_acceptance.items() if m is not None},
        memory=MemoryMeasurement(
            peak_memory_bytes=peak,
            peak_memory_source="NVML (vLLM pre-allocates its gpu_memory_utilization budget)",
            torch=TorchMemory(device=device),
            target_weights_bytes=0,
            draft_weights_bytes=0,
        ),
        nvml=nvml,
        notes=[f"vLLM {vllm.__version__}, TP {tp}, batch of {batch} prompts per task; speedup = throughput ratio"]
        + ([f"engine configured by the launch command {options.launch_source}: {launched}"] if launched else []),
        problems=problems,
    )
    if options.save:
        record.notes.append(save_record_where(record, options.out).message)
    return record
