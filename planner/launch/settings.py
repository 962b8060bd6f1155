"""What a launch command sets: the deployment's engine knobs, each resolved by the plan, and which were assumed.

``launch_settings`` reads every value from the deployment and its memory plan (the plan's ``limits`` hold the engine
defaults it applied), so a command never carries a second copy of a default. A plan that does not fit or would not
start gets no command: ``NotLaunchableError`` carries the plan's reason.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.19.0")
>>> s = launch_settings(dep)
>>> s.memory_fraction, s.max_num_seqs, s.max_model_len, sorted(s.assumed)[:2]
(0.9, 1024, 131072, ['max_model_len', 'max_num_batched_tokens'])
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.catalog.lookup import get_model
from planner.catalog.schemas import GpuSpec, SpeculatorKind
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory import plan_memory
from planner.memory.types import MemoryPlan


class NotLaunchableError(PlannerError):
    """The plan cannot be launched as it stands (it does not fit, would not start, or a flag is missing)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"no launch command: {reason}", field="deployment")
        self.reason = reason


SpeculativeMethodOrNone = SpeculatorKind | None


class LaunchSettings(BaseModel):
    """The values a launch command sets; equal settings mean the same deployment on the same GPUs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: str
    release: str
    target: str
    speculator: str | None = None
    method: SpeculativeMethodOrNone = None
    draft_tp: int | None = None
    num_speculative_tokens: int | None = None
    tp: int
    pp: int
    dtype: str | None = None
    kv_dtype: str
    memory_fraction: float
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    enforce_eager: bool = False
    #: Fields the plan filled in because the deployment left them to the engine (not compared).
    assumed: tuple[str, ...] = ()

    def same_deployment(self, other: LaunchSettings) -> bool:
        """Equal in every launched value (``assumed`` is bookkeeping, not a value)."""
        return self.model_dump(exclude={"assumed"}) == other.model_dump(exclude={"assumed"})


def plan_reason(plan: MemoryPlan) -> str | None:
    """Why the plan cannot be launched, in the plan's words, or None when it fits and starts."""
    if plan.fits and plan.starts:
        return None
    reasons = [*plan.start_problems, *(p for p in plan.problems if p not in plan.start_problems)]
    verdict = "does not fit" if not plan.fits else "would not start"
    return f"the plan {verdict}: " + ("; ".join(reasons) if reasons else "see the memory plan")


def launch_settings(dep: Deployment, plan: MemoryPlan | None = None, *, release: str | None = None) -> LaunchSettings:
    """The launched values of ``dep``, as its plan resolves them (``release``: the recorded release written for)."""
    plan = plan if plan is not None else plan_memory(dep, with_suggestions=False)
    reason = plan_reason(plan)
    if reason:
        raise NotLaunchableError(reason)
    limits = plan.limits
    assumed = [
        name
        for name, given in (
            ("memory_fraction", dep.memory_fraction),
            ("max_model_len", dep.max_model_len),
            ("max_num_seqs", dep.max_num_seqs),
            ("max_num_batched_tokens", dep.max_num_batched_tokens),
            ("draft_tp", dep.draft_tp if dep.speculator is not None else 0),
            ("release", dep.engine_version if release is None else release),
        )
        if given is None
    ]
    spec = dep.is_speculative
    return LaunchSettings(
        engine=dep.engine,
        release=release or dep.engine_version or "",
        target=dep.target.id,
        speculator=dep.draft.id if dep.draft is not None else None,
        method=dep.speculative_method,
        draft_tp=dep.resolved_draft_tp,
        num_speculative_tokens=dep.num_speculative_tokens if spec else None,
        tp=dep.tp,
        pp=dep.pp,
        dtype=dep.dtype,
        kv_dtype=dep.kv_dtype,
        memory_fraction=limits.memory_fraction,
        max_model_len=plan.max_model_len,
        max_num_seqs=limits.max_num_seqs,
        max_num_batched_tokens=limits.max_num_batched_tokens,
        enforce_eager=dep.enforce_eager,
        assumed=tuple(assumed),
    )


def deployment_from_settings(
    settings: LaunchSettings, gpu: GpuSpec, gpu_count: int | None = None, node_id: str | None = None
) -> Deployment:
    """The deployment a launch command starts, on ``gpu_count`` GPUs of ``gpu`` (default: tp x pp)."""
    draft = get_model(settings.speculator) if settings.speculator else None
    return Deployment.build(
        target=get_model(settings.target),
        draft=draft,
        method=settings.method if draft is None else None,
        gpu=gpu,
        gpu_count=gpu_count or settings.tp * settings.pp,
        node_id=node_id,
        tp=settings.tp,
        pp=settings.pp,
        draft_tp=settings.draft_tp,
        dtype=settings.dtype,
        kv_dtype=settings.kv_dtype,
        engine=settings.engine,
        engine_version=settings.release if settings.release[:1].isdigit() else None,
        memory_fraction=settings.memory_fraction,
        max_model_len=settings.max_model_len,
        max_num_seqs=settings.max_num_seqs,
        max_num_batched_tokens=settings.max_num_batched_tokens,
        enforce_eager=settings.enforce_eager,
        **({"num_speculative_tokens": settings.num_speculative_tokens} if settings.num_speculative_tokens else {}),
    )
