"""The ``engine`` check: the serving engine's draft tensor-parallel rule and context handling.

The draft TP must satisfy the engine's rule (data/compatibility_rules.json) and divide the draft's
heads; a draft with a shorter context than the target warns with the ``max_model_len`` to keep.

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> ctx = PairContext.build(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"), target_tp=8, draft_tp=1)
>>> engine_check(ctx).status
'fail'
"""

from __future__ import annotations

from planner.catalog.speculators import HEAD_WORDS
from planner.model.parallelism import tp_problem
from planner.pairs.context import Check, PairContext


def heads_refusal(rule, arch, tp: int) -> str | None:
    """The engine's own words refusing ``arch`` at ``tp`` (its attention heads do not split), else None."""
    if arch.num_attention_heads % tp == 0 or rule.heads_over_tp_message is None:
        return None
    said = rule.heads_over_tp_message.format(heads=arch.num_attention_heads, tp=tp)
    return f'"{said}" ({rule.heads_over_tp_source})'


def engine_check(ctx: PairContext) -> Check:
    """Fail when the engine's draft-TP rule or the draft's heads forbid the TP; warn on a shorter context."""
    rule, target_tp, draft_tp = ctx.rule, ctx.target_tp, ctx.draft_tp
    if ctx.draft.is_head:
        return _head_engine_check(ctx)
    problems: list[str] = []
    refused = heads_refusal(rule, ctx.draft.architecture, target_tp) if rule.draft_tp_rule == "equal" else None
    if refused:  # the draft must run at the target's TP, and the engine's config check refuses it there
        problems.append(f"the draft runs at the target's TP {target_tp} and the engine refuses it: {refused}")
    elif rule.draft_tp_rule == "equal" and draft_tp != target_tp:
        problems.append(f"draft TP {draft_tp} must equal the target's TP {target_tp}: {rule.draft_tp_detail}")
    if rule.draft_tp_rule == "one_or_equal" and draft_tp not in (1, target_tp):
        problems.append(f"draft TP {draft_tp} must be 1 or the target's TP {target_tp}: {rule.draft_tp_detail}")
    problem = tp_problem(ctx.draft.architecture, draft_tp)
    if problem and not (refused and draft_tp == target_tp):  # said once
        own = heads_refusal(rule, ctx.draft.architecture, draft_tp)
        problems.append(f"the draft cannot run at TP {draft_tp}: {own or problem}")
    if problems:
        return Check(
            name="engine",
            status="fail",
            detail=f"{rule.name}: " + "; ".join(problems),
            evidence=rule.source,
        )
    t_ctx, d_ctx = ctx.target.architecture.max_position_embeddings, ctx.draft.architecture.max_position_embeddings
    if t_ctx and d_ctx and d_ctx < t_ctx:
        return Check(
            name="engine",
            status="warn",
            detail=(
                f"{rule.name}: draft TP {draft_tp} with target TP {target_tp} is allowed, but the draft's context "
                f"({d_ctx:,} tokens) is shorter than the target's ({t_ctx:,}): {rule.context_detail}. Keep "
                f"max_model_len at or below {d_ctx:,}"
            ),
            evidence=rule.source,
        )
    return Check(
        name="engine",
        status="pass",
        detail=f"{rule.name}: draft TP {draft_tp} with target TP {target_tp} is allowed",
        evidence=rule.source,
    )


def _head_engine_check(ctx: PairContext) -> Check:
    """A head runs beside the target at the target's TP (vLLM V1's EagleProposer builds it in the target's
    parallel groups; SGLang's EAGLE worker shares the target's TP): its attention heads must split over it. The
    refusal is the engine's own (``heads_over_tp_message`` in data/compatibility_rules.json)."""
    problem = tp_problem(ctx.draft.architecture, ctx.target_tp)
    kind = HEAD_WORDS[ctx.draft.speculator.kind].split(" ", 1)[1]
    if problem:
        own = heads_refusal(ctx.rule, ctx.draft.architecture, ctx.target_tp)
        return Check(
            name="engine",
            status="fail",
            detail=f"the {kind} runs at the target's TP {ctx.target_tp} and cannot split over it: {own or problem}",
        )
    return Check(
        name="engine",
        status="pass",
        detail=f"the {kind} runs beside the target at its TP {ctx.target_tp}; its layers split over it",
    )
