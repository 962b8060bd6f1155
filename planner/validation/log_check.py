"""A start-up log beside the planner's ``size`` for the deployment the log describes.

The log's facts (:mod:`planner.validation.engine_log`) give the model, GPU, parallelism, engine and knobs;
the model and GPU names are mapped to the catalog with :mod:`planner.catalog.name_matching` (or given by the
user), the device total is the one the log printed, and :func:`planner.memory.plan.plan_memory` sizes
that deployment exactly as ``python -m planner size`` would. Each logged quantity is then shown next
to the prediction with ``error = (predicted − logged) / logged``.

>>> from planner.facts import REPO_ROOT
>>> text = (REPO_ROOT / "tests/fixtures/engine_logs/vllm-v1-019-llmd-llama31-8b-16k.log").read_text()
>>> check = check_log(text, gpu="h100-sxm-80gb")
>>> check.applicable, check.deployment.engine, abs(check.row("kv_cache_tokens").error_frac) < 0.01
(True, 'vllm', True)
"""

from __future__ import annotations

from pydantic import BaseModel

from planner.catalog.hardware import nearest_gpu_by_total
from planner.catalog.lookup import get_gpu, get_model
from planner.catalog.name_matching import match_gpu, match_model
from planner.catalog.schemas import GpuSpec, ModelSpec
from planner.deployment import Deployment
from planner.engines.names import find_engine_id
from planner.engines.profiles import engine_profile, engine_profiles
from planner.errors import PlannerError
from planner.launch import read_launch_command
from planner.memory.plan import plan_memory
from planner.memory.types import MEMORY_COMPONENTS
from planner.model.dtypes import precision_id
from planner.units import fmt_gib
from planner.validation.engine_log import EngineLogFacts, parse_engine_log
from planner.validation.log_launch import apply_launch_command

#: Log facts still named apart from MEMORY_COMPONENTS (the parser's own field names).
_LOGGED = {"torch_peak_increase": "activation_peak_bytes", "non_torch_increase": "non_torch_bytes"}


class ComparisonRow(BaseModel):
    quantity: str
    unit: str
    logged: float | None
    predicted: float | None
    error_frac: float | None


class DeploymentSummary(BaseModel):
    target: str
    draft: str | None
    gpu: str
    gpu_count: int
    gpu_memory_bytes: int | None
    engine: str
    engine_version: str | None
    engine_profile: str
    tp: int
    pp: int
    dtype: str
    kv_dtype: str
    memory_fraction: float
    max_model_len: int
    k: int | None


class LogCheck(BaseModel):
    facts: EngineLogFacts
    applicable: bool
    reason: str | None = None
    deployment: DeploymentSummary | None = None
    rows: list[ComparisonRow] = []
    fits: bool | None = None
    problems: list[str] = []
    notes: list[str] = []

    def row(self, quantity: str) -> ComparisonRow:
        return next(r for r in self.rows if r.quantity == quantity)


def _err(predicted: float | None, logged: float | None) -> float | None:
    if predicted is None or not logged:
        return None
    return (predicted - logged) / logged


def _model(facts: EngineLogFacts, wanted: str | None) -> tuple[ModelSpec | None, str | None, str]:
    """(catalog model, weight format the name implies, how it was found)."""
    if wanted:
        match = match_model(wanted)
        if match is None:
            return get_model(wanted), None, f"model {wanted} (given)"  # raises with the catalog's suggestions
        return match.model, match.weight_format, f"model {wanted} (given) -> {match.model.id}"
    if not facts.model:
        return None, None, "the log names no model: pass one (--model)"
    match = match_model(facts.model)
    if match is None:
        return None, None, f"model {facts.model!r} is not in the catalog: pass the catalog id (--model)"
    how = f"model {facts.model} -> {match.model.id}" + ("" if match.exact else " (by its base name)")
    return match.model, match.weight_format, how


def _gpu(facts: EngineLogFacts, wanted: str | None) -> tuple[GpuSpec | None, str]:
    if wanted:
        return get_gpu(wanted), f"GPU {wanted} (given)"
    if facts.gpu_name and (gpu := match_gpu(facts.gpu_name)):
        return gpu, f"GPU {facts.gpu_name} -> {gpu.id}"
    if facts.gpu_memory_total_bytes:
        total = facts.gpu_memory_total_bytes
        gpu = nearest_gpu_by_total(total)
        return gpu, f"GPU not named in the log: stand-in {gpu.id}, nearest to the logged {fmt_gib(total, 2)} total"
    return None, "the log states neither the GPU nor its memory: pass one (--gpu)"


def _weight_format(facts: EngineLogFacts, from_name: str | None) -> str | None:
    if from_name:
        return from_name
    return precision_id(facts.quantization or "") or precision_id(facts.dtype or "")


def _engine_version(facts: EngineLogFacts, engine: str, notes: list[str]) -> str | None:
    """The log's release when the planner profiles it; else where :func:`unversioned_release` places the log."""
    if facts.engine_version:
        try:
            engine_profile(engine, facts.engine_version)
            return facts.engine_version
        except PlannerError:
            notes.append(f"release {facts.engine_version} is outside the profiled ones: newest profile used")
            return None
    release, why = unversioned_release(engine, facts.kv_sized_after_warmup, facts.cudagraph_profiling_enabled)
    if why:
        notes.append(why)
    return release


def unversioned_release(
    engine: str, sized_after_warmup: bool | None, cudagraph_profiling: bool | None
) -> tuple[str | None, str | None]:
    """The release a start-up log that prints none is planned at, and why (None, None: the newest profile).

    A log says how it sized the KV cache: after warm-up (vLLM 0.34's extensible cache, its "Memory after warmup"
    line), or from its profiling estimate, subtracting the CUDA-graph estimate or not (``cudagraph_profiling``:
    the line it prints either way, None where it prints none). It is placed at the newest profile that sizes it so.

    >>> unversioned_release("vllm", None, True)
    ('0.28.0', 'no release in the log; it subtracts CUDA-graph memory: profile vllm-v1-0.28')
    """
    profiles = engine_profiles(engine)
    measured = [p for p in profiles if p.budget_rule == "measured_after_warmup"]
    if sized_after_warmup and measured:
        newest = measured[-1]
        return newest.min_version, f"no release in the log; it sizes the KV cache after warm-up: profile {newest.id}"
    estimated = [p for p in profiles if p.budget_rule != "measured_after_warmup"]
    if cudagraph_profiling is not None and len({p.cudagraph_subtracted for p in estimated}) > 1:
        # the newest profile that behaves as the log does (a log that states the flag is a recent release; one
        # that sized its cache from an estimate is older than the extensible KV cache)
        profile = next(p for p in reversed(estimated) if p.cudagraph_subtracted == cudagraph_profiling)
        state = "subtracts" if cudagraph_profiling else "estimates but does not subtract"
        return profile.min_version, f"no release in the log; it {state} CUDA-graph memory: profile {profile.id}"
    if measured and estimated:  # a log of a KV cache sized after warm-up says so; this one sized it from its estimate
        profile = estimated[-1]
        why = f"no release in the log, which sizes the KV cache from its profiling estimate: profile {profile.id}"
        return profile.min_version, why
    return None, None


def check_log(
    text: str | bytes,
    *,
    model: str | None = None,
    gpu: str | None = None,
    draft: str | None = None,
    tp: int | None = None,
    pp: int | None = None,
    memory_fraction: float | None = None,
    launch_command: str | None = None,
    launch_options: str | None = None,
) -> LogCheck:
    """Parse ``text`` and compare what it logged with the planner's plan for the same deployment.

    ``model``, ``gpu``, ``draft``, ``tp``, ``pp`` and ``memory_fraction`` fill in (or override) what the
    log does not say. ``launch_command`` (the command that produced the log, with TensorRT-LLM's options file
    in ``launch_options``) sets every knob it states (:mod:`planner.validation.log_launch`).
    """
    facts = parse_engine_log(text)
    check = LogCheck(facts=facts, applicable=False)
    engine = find_engine_id(facts.engine)
    if engine is None:
        check.reason = "no serving-engine start-up lines recognised (vLLM, SGLang or TensorRT-LLM)"
        return check
    if launch_command and not model:
        try:
            model = read_launch_command(launch_command, options_file=launch_options).target
        except PlannerError as exc:
            check.reason = f"the launch command cannot be read: {exc}"
            return check
    target, name_format, how = _model(facts, model)
    check.notes.append(how)
    device, gpu_how = _gpu(facts, gpu)
    check.notes.append(gpu_how)
    if target is None or device is None:
        check.reason = how if target is None else gpu_how
        return check
    draft_spec = get_model(draft) if draft else None
    if draft_spec is None and facts.draft_model:
        matched = match_model(facts.draft_model)
        draft_spec = matched.model if matched else None
    if facts.speculative_method and draft_spec is None:
        check.notes.append(
            f"speculative method {facts.speculative_method}: its draft is not a catalog model, "
            "so the plan is for the target alone (the logged KV also holds the draft's layers)"
        )
    tp = tp or facts.tensor_parallel_size or 1
    pp = pp or facts.pipeline_parallel_size or 1
    fields = dict(
        target=target,
        draft=draft_spec,
        gpu=device,
        gpu_count=tp * pp,
        gpu_memory_bytes=facts.gpu_memory_total_bytes,
        tp=tp,
        pp=pp,
        dtype=_weight_format(facts, name_format),
        kv_dtype="fp8" if precision_id(facts.kv_cache_dtype or "", "kv") == "fp8" else "auto",
        engine=engine,
        engine_version=_engine_version(facts, engine, check.notes),
        memory_fraction=memory_fraction or facts.gpu_memory_utilization,
        max_model_len=facts.max_model_len,
        max_num_batched_tokens=facts.max_num_batched_tokens,
        max_num_seqs=facts.max_num_seqs,
        enforce_eager=bool(facts.enforce_eager),
    )
    if draft_spec is not None and facts.num_speculative_tokens:
        fields["num_speculative_tokens"] = facts.num_speculative_tokens
    try:
        if launch_command:
            fields = apply_launch_command(
                fields, launch_command, facts.engine_version, engine, check.notes, options_file=launch_options
            )
            draft_spec = fields["draft"]
        dep = Deployment.build(**fields)
        plan = plan_memory(dep, with_suggestions=False)
    except PlannerError as exc:
        check.reason = f"the planner cannot size this deployment: {exc}"
        return check
    g = plan.per_gpu
    check.applicable, check.fits, check.problems = True, plan.fits, plan.problems
    check.deployment = DeploymentSummary(
        target=target.id,
        draft=draft_spec.id if draft_spec else None,
        gpu=device.id,
        gpu_count=dep.gpu_count,
        gpu_memory_bytes=dep.gpu_memory_bytes,
        engine=engine,
        engine_version=dep.engine_version,
        engine_profile=plan.engine_profile,
        tp=tp,
        pp=pp,
        dtype=dep.target_format.id,
        kv_dtype=dep.kv_dtype,
        memory_fraction=plan.limits.memory_fraction,
        max_model_len=plan.max_model_len,
        k=dep.num_speculative_tokens if draft_spec else None,
    )
    pairs = [
        ("gpu_memory_total", "bytes", facts.gpu_memory_total_bytes, g.total_bytes),
        *(
            (name, "bytes", getattr(facts, _LOGGED.get(name, f"{name}_bytes")), getattr(g, f"{name}_bytes"))
            for name in MEMORY_COMPONENTS
        ),
        ("kv_cache_tokens", "tokens", facts.kv_cache_tokens, plan.kv_cache_tokens),
        ("max_concurrency", "requests", facts.max_concurrency, plan.max_concurrency),
    ]
    check.rows = [
        ComparisonRow(quantity=q, unit=u, logged=logged, predicted=predicted, error_frac=_err(predicted, logged))
        for q, u, logged, predicted in pairs
        if logged is not None
    ]
    return check
