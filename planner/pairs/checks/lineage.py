"""The ``lineage`` check: shared training (family, generation, distillation) and RoPE.

Distilled or same-generation pairs pass; another generation or family warns (lower acceptance);
another RoPE type or base warns; a different scaling factor over the same type and base is only
noted. Relations come from :mod:`planner.pairs.lineage` over data/models.json.

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> lineage_check(PairContext.build(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))).status
'pass'
"""

from __future__ import annotations

from planner.catalog.schemas import ModelSpec
from planner.catalog.speculators import HEAD_WORDS
from planner.pairs.context import Check, PairContext, Status
from planner.pairs.lineage import distillation_link


def _rope(spec: ModelSpec) -> tuple[str, object, object]:
    cfg = spec.config
    scaling = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    return spec.architecture.rope_type, cfg.get("rope_theta"), factor


def _fmt_rope(rope: tuple[str, object, object]) -> str:
    kind, theta, factor = rope
    return f"{kind}" + (f" x{factor}" if factor else "") + (f", θ {theta:g}" if theta else "")


def lineage_check(ctx: PairContext) -> Check:
    """Pass for a distilled or same-generation draft with the target's RoPE; warn otherwise.

    A speculator head has no lineage of its own (its layer is trained on one target's hidden states, with its
    own RoPE settings): it passes here and the ``head_target`` check decides.
    """
    target, draft, relation = ctx.target, ctx.draft, ctx.relation
    if draft.is_head:
        return Check(
            name="lineage",
            status="pass",
            detail=(
                f"{draft.short_name} is {HEAD_WORDS[draft.speculator.kind]}: what matters is the target it was "
                "trained on (the head_target check), not a family or RoPE of its own"
            ),
        )
    t, d = target.lineage, draft.lineage
    classes = f"{target.architecture.model_type} / {draft.architecture.model_type}"
    describe = {
        "distilled": f"shared training lineage: {distillation_link(target, draft)}",
        "same_generation": f"same family and generation ({t.family} {t.generation})",
        "other_generation": (
            f"same family ({t.family}) but another generation ({t.generation} vs {d.generation}), "
            "trained separately: expect lower acceptance than a same-generation or distilled draft"
        ),
        "different_family": (
            f"different families ({t.family} vs {d.family}): no shared training, so output distributions "
            "differ; no engine checks this, but acceptance is usually low"
        ),
    }[relation]
    status: Status = "pass" if relation in ("distilled", "same_generation") else "warn"
    rope_t, rope_d = _rope(target), _rope(draft)
    rope = f"RoPE {_fmt_rope(rope_t)}"
    if rope_t[:2] != rope_d[:2]:
        status = "warn"
        rope = (
            f"RoPE differs (target {_fmt_rope(rope_t)}, draft {_fmt_rope(rope_d)}): every position is encoded "
            "with other frequencies, so the draft's predictions drift from the target's; prefer a draft with "
            "the target's RoPE type and base"
        )
    elif rope_t != rope_d:
        rope = (
            f"same RoPE type and base, another scaling factor (target {_fmt_rope(rope_t)}, draft "
            f"{_fmt_rope(rope_d)}): only the long-wavelength components are stretched differently"
        )
    parts = [describe, f"architectures {classes}", rope]
    if t.base_model:
        parts.append(f"the target is fine-tuned from {t.base_model}")
    return Check(
        name="lineage",
        status=status,
        detail="; ".join(parts),
        evidence=["the model catalog's lineage (model cards)"],
    )
