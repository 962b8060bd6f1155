"""The memory plan a user asks for: the engine's budget (:mod:`planner.memory.budget`), its problems and,
when it does not fit, the ranked fixes (:mod:`planner.memory.fixes`).

>>> from planner.catalog.lookup import get_model, get_gpu
>>> from planner.deployment import Deployment
>>> plan = plan_memory(Deployment.build(target=get_model("Llama-3.1-70B"), gpu=get_gpu("h100-sxm-80gb")))
>>> plan.fits, plan.suggestions[0].fits
(False, True)
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.memory.budget import plan_budget
from planner.memory.fixes import suggestions_for
from planner.memory.types import MemoryPlan


def plan_memory(dep: Deployment, *, with_suggestions: bool = True, compare_without_draft: bool = True) -> MemoryPlan:
    """The per-GPU memory plan of ``dep``; with ``with_suggestions``, ranked fixes unless it fits and starts;
    ``compare_without_draft=False`` leaves out the plan of the target alone (``kv_cache_tokens_without_draft``)."""
    plan = plan_budget(dep, compare_without_draft=compare_without_draft)
    if with_suggestions and not (plan.fits and plan.starts):
        plan.suggestions = suggestions_for(dep, plan)
    return plan
