"""Whether a workload can run on a deployment at all, before any speed verdict: the reasons it cannot, and fixes.

A speed verdict (RECOMMEND / ENABLE / DISABLE) is given only for a workload that can run. It cannot when:

* a request (prompt + output) is longer than the target's context window: no engine serves it;
* a request is longer than the deployment's max model length: vLLM refuses the prompt ("The decoder prompt
  (length N) is longer than the maximum model length of M", ``vllm/v1/engine/processor.py``), SGLang and
  TensorRT-LLM likewise cap a request at their configured length;
* the memory plan does not fit, or the engine would refuse to start (:func:`planner.memory.plan_memory`).

Each reason appears once, and each fix is a change that was re-planned and fits and starts.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.speed.workload import SpeedWorkload
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-l40s-48gb"), tp=1, method="ngram",
...                          max_model_len=8192)
>>> check = runnable(dep, SpeedWorkload.build(alpha=0.2, prompt_tokens=200_000, output_tokens=128))
>>> check.ok, "context window" in check.reasons[0]
(False, True)
"""

from __future__ import annotations

from pydantic import BaseModel

from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory.plan import plan_memory
from planner.speed.estimate import SpeedEstimate
from planner.speed.workload import SpeedWorkload


class Runnability(BaseModel):
    """Why a workload cannot run on a deployment (empty: it can), and the changes that would let it."""

    reasons: list[str] = []
    fixes: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.reasons

    def describe(self) -> str:
        """One sentence: the reasons, then the fix to try first (or that none was found)."""
        text = "cannot run: " + "; ".join(self.reasons)
        if self.fixes:
            return f"{text}. Fix: {self.fixes[0]}"
        return f"{text}. No change searched makes it run"


def _plan_fixes(dep: Deployment) -> tuple[list[str], list[str]]:
    """The memory plan's problems (each once) and its fixes that fit and start, best first."""
    try:
        plan = plan_memory(dep)
    except PlannerError as exc:
        return [str(exc)], []
    if plan.fits and plan.starts:
        return [], []
    reasons = list(dict.fromkeys(plan.start_problems + plan.problems))
    fixes = [f"{s.change} ({s.detail})" for s in plan.suggestions if s.fits and s.starts]
    return reasons, fixes


def runnable(dep: Deployment, workload: SpeedWorkload) -> Runnability:
    """The reasons ``workload`` cannot run on ``dep`` and the fixes, best first (see the module docstring)."""
    prompt, output = workload.prompt_tokens, workload.output_tokens
    length = prompt + output
    context = dep.target.architecture.max_position_embeddings
    max_len = dep.resolved_max_model_len
    request = f"a request of {prompt:,} prompt + {output:,} output tokens ({length:,})"
    if context is not None and length > context:
        return Runnability(
            reasons=[f"{request} is longer than {dep.target.short_name}'s context window of {context:,} tokens"],
            fixes=[f"shorten prompt + output to at most {min(context, max_len):,} tokens"],
        )
    if length > max_len:
        reason = f"{request} is longer than the max model length of {max_len:,} tokens: the engine refuses it"
        longer = dep.replace(max_model_len=length)
        problems, fixes = _plan_fixes(longer)
        if not problems:
            fixes = [f"raise the max model length to {length:,} tokens"]
        else:
            fixes = [f"raise the max model length to {length:,} tokens and {fix}" for fix in fixes]
        fixes.append(f"shorten prompt + output to at most {max_len:,} tokens")
        return Runnability(reasons=[reason], fixes=fixes)
    reasons, fixes = _plan_fixes(dep)
    return Runnability(reasons=reasons, fixes=fixes)


def gate_verdict(estimate: SpeedEstimate, check: Runnability) -> SpeedEstimate:
    """``estimate`` with no speed verdict when the workload cannot run (verdict ``cannot_run``, the reason)."""
    if check.ok:
        return estimate
    return estimate.model_copy(update={"verdict": "cannot_run", "verdict_reason": check.describe()})
