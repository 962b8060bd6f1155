"""A measured job's outcome turned into a :class:`~planner.measure.record.MeasurementRecord`.

The harness runs the job and hands over a :class:`JobOutcome`; :func:`assemble_record` adds the
acceptance statistics, the planner's prediction for the same deployment and the relative errors
(``(predicted − measured) / measured``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from planner.catalog.schemas import GpuSpec
from planner.measure import torch_memory
from planner.measure.acceptance_counts import acceptance_stats, verdicts_by_task
from planner.measure.environment import hardware_info, software_info
from planner.measure.model_loading import LoadedModel
from planner.measure.nvml_sampler import NvmlResult
from planner.measure.options import MeasureOptions
from planner.measure.prediction import Prediction, comparison, predict
from planner.measure.prompts import PromptSet
from planner.measure.record import DidNotFit, MeasurementRecord, PromptSummary, make_record_id, utc_now
from planner.measure.speculative_run import PromptResult
from planner.measure.summaries import memory_summary, model_info, speed_summary


@dataclass
class JobOutcome:
    """What one run left behind: where it ran, what loaded, the per-prompt results and the memory readings."""

    device: str
    dtype: str
    draft_dtype: str
    prompts: PromptSet
    gpu: GpuSpec | None
    target: LoadedModel | None
    draft: LoadedModel | None
    tokenizer: str
    results: list[PromptResult]
    nvml: NvmlResult
    torch_mem: torch_memory.TorchMemory
    #: Set when CUDA ran out of memory: the stage and the memory at that moment.
    did_not_fit: DidNotFit | None


def assemble_record(options: MeasureOptions, job: JobOutcome) -> MeasurementRecord:
    """The record of one job: measured figures, acceptance, the prediction beside them and their errors."""
    device, dtype, draft_dtype, prompts, gpu = job.device, job.dtype, job.draft_dtype, job.prompts, job.gpu
    target, draft, tokenizer, results = job.target, job.draft, job.tokenizer, job.results
    nvml, torch_mem, did_not_fit = job.nvml, job.torch_mem, job.did_not_fit
    created = utc_now()
    target_name = target.name if target else Path(options.target).stem
    draft_name = draft.name if draft else Path(options.draft).stem
    memory = memory_summary(device, nvml, torch_mem, target, draft, results)
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
