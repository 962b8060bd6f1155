"""The models that could draft for a target: the catalog's and the imported ones with fewer parameters, then the heads
trained for it. The design-space search tries those its checks pass (:mod:`planner.decisions.search.speculators`); the
decision matrix lists them all (:mod:`planner.decisions.selection`).

>>> from planner.catalog.lookup import get_model
>>> ids = [d.id for d in candidate_drafts(get_model("Llama-3.1-8B"))]
>>> "meta-llama/Llama-3.2-1B" in ids, "meta-llama/Llama-3.1-70B" in ids
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from planner.catalog.lookup import list_models, list_speculators
from planner.catalog.schemas import ModelSpec
from planner.pairs.size_ratio import param_count


def candidate_drafts(
    target: ModelSpec, extra: Iterable[ModelSpec] = (), keep: Callable[[ModelSpec], bool] | None = None
) -> list[ModelSpec]:
    """Catalog and imported models with fewer parameters than the target (the target itself excluded), then the
    catalog's speculator heads trained for this target; with ``keep``, only the models and heads it keeps (a model
    is asked before its size is counted)."""
    target_params = param_count(target).total_params
    seen, out = set(), []
    for spec in [*list_models(), *extra]:
        if spec.id in seen or spec.id == target.id:
            continue
        seen.add(spec.id)
        if keep is not None and not keep(spec):
            continue
        if param_count(spec).total_params < target_params:
            out.append(spec)
    heads = [h for h in list_speculators() if target.id in h.speculator.targets and h.id not in seen]
    return out + [h for h in heads if keep is None or keep(h)]
