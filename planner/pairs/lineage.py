"""How a draft is related to its target, from the catalog's ``lineage`` (data/models.json).

One relation per pair, used by the lineage check (:mod:`planner.pairs.compatibility`) and by the
acceptance prior (:mod:`planner.pairs.acceptance`):

* ``distilled``: one model was distilled from the other, both share a teacher, or the draft was
  distilled from a model of the target's own family and generation (Llama-3.2-1B was distilled from
  Llama-3.1-8B and -70B logits, Llama 3.2 model card);
* ``same_generation``: same family and generation (trained together: Qwen2.5-0.5B and -72B);
* ``other_generation``: same family, another generation (Qwen3 target, Qwen2.5 draft);
* ``different_family``.

No engine checks lineage; a same-family draft is a proxy for matching tokenizers and output
distributions (docs/compatibility.md).

>>> from planner.catalog.lookup import get_model
>>> lineage_relation(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
'distilled'
>>> lineage_relation(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"))
'same_generation'
>>> lineage_relation(get_model("Qwen3-32B"), get_model("Qwen2.5-7B"))
'other_generation'
"""

from __future__ import annotations

from typing import Literal

from planner.catalog.lookup import list_models
from planner.catalog.schemas import ModelSpec

Relation = Literal["distilled", "same_generation", "other_generation", "different_family"]
RELATIONS: tuple[Relation, ...] = ("distilled", "same_generation", "other_generation", "different_family")


def _family(spec: ModelSpec) -> str:
    return spec.lineage.family.strip().lower()


def _teachers(spec: ModelSpec) -> set[str]:
    return {t.lower() for t in spec.lineage.distilled_from or []}


def distillation_link(target: ModelSpec, draft: ModelSpec) -> str | None:
    """A sentence naming the distillation link between the two models, or None."""
    t_teachers, d_teachers = _teachers(target), _teachers(draft)
    if target.id.lower() in d_teachers:
        return f"{draft.id} was distilled from {target.id}"
    if draft.id.lower() in t_teachers:
        return f"{target.id} was distilled from {draft.id}"
    shared = sorted(t_teachers & d_teachers)
    if shared:
        return f"both were distilled from {', '.join(shared)}"
    if target.lineage.generation is not None:
        siblings = [
            m.id
            for m in list_models()
            if m.id.lower() in d_teachers
            and _family(m) == _family(target)
            and m.lineage.generation == target.lineage.generation
        ]
        if siblings:
            return (
                f"{draft.id} was distilled from {', '.join(siblings)}, of the target's own "
                f"{target.lineage.family} {target.lineage.generation} generation"
            )
    return None


def lineage_relation(target: ModelSpec, draft: ModelSpec) -> Relation:
    """The relation of ``draft`` to ``target`` (see the module docstring for the order)."""
    if distillation_link(target, draft) is not None:
        return "distilled"
    if _family(target) != _family(draft):
        return "different_family"
    if target.lineage.generation is not None and target.lineage.generation == draft.lineage.generation:
        return "same_generation"
    return "other_generation"
