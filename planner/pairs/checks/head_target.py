"""The ``head_target`` check: a speculator head proposes only for the target it was trained on.

An EAGLE / EAGLE-3 head reads the target's hidden states (EAGLE-3: three of them through ``fc``, ``3 x H``
inputs) and embeds tokens with the target's embedding, so it needs the target's hidden size and vocabulary
(``vllm/model_executor/models/llama_eagle3.py``: ``fc`` of ``target_hidden_size * 3`` inputs; ``compute_logits``
maps the draft vocabulary into ``vocab_size``); a different geometry fails when the engine loads it. With the
same geometry, a head trained on another checkpoint loads but proposes from hidden states it never saw. The
check runs for heads only (a separate draft model has no such tie).

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> head = get_model("EAGLE3-LLaMA3.1-Instruct-8B")
>>> head_target_check(PairContext.build(get_model("Qwen2.5-7B"), head)).status
'fail'
>>> head_target_check(PairContext.build(get_model("Llama-3.1-8B"), get_model("Llama-3.2-1B"))) is None
True
"""

from __future__ import annotations

from planner.catalog.schemas import ModelSpec
from planner.model.architecture import unwrap_layer_config
from planner.pairs.context import Check, PairContext
from planner.pairs.rules import EngineRule

LOADERS = [
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/llama_eagle3.py",
    "https://github.com/vllm-project/vllm/blob/main/vllm/v1/spec_decode/eagle.py",
]


def head_hidden_size(head: ModelSpec) -> int:
    """The target hidden size a head reads: ``target_hidden_size`` when its config names one, else its own."""
    named = head.config.get("target_hidden_size") or unwrap_layer_config(head.config).get("target_hidden_size")
    return named if isinstance(named, int) else head.architecture.hidden_size


def head_geometry_problem(target: ModelSpec, head: ModelSpec) -> str | None:
    """Why the engine cannot load ``head`` beside ``target`` at all (its ``fc`` reads another hidden size), else
    None. A different vocabulary loads (see :func:`head_vocab_problem`)."""
    t = target.architecture
    reads = head_hidden_size(head)
    if reads != t.hidden_size:
        return (
            f"it reads hidden states of size {reads:,} but {target.short_name}'s are {t.hidden_size:,}: the engine "
            "cannot load it"
        )
    return None


def head_vocab_problem(target: ModelSpec, head: ModelSpec, rule: EngineRule) -> str | None:
    """A head over another vocabulary: the engine loads it (its own words in ``head_vocab_detail``) but it embeds
    and proposes by ids that are not the target's, else None."""
    t, h = target.architecture, head.architecture
    if h.vocab_size == t.vocab_size:
        return None
    return f"its vocabulary ({h.vocab_size:,} tokens) is not {target.short_name}'s ({t.vocab_size:,}): " + (
        rule.head_vocab_detail or "it embeds and maps tokens by the target's ids"
    )


def _trained_for(head: ModelSpec) -> str:
    block = head.speculator
    return block.trained_on or (", ".join(block.targets) if block.targets else "an unknown target")


def head_target_check(ctx: PairContext) -> Check | None:
    """Fail when the head was trained for another target or cannot read this one's hidden states; None for drafts."""
    head, target = ctx.draft, ctx.target
    if not head.is_head:
        return None
    block = head.speculator
    trained = _trained_for(head)
    geometry = head_geometry_problem(target, head) or head_vocab_problem(target, head, ctx.rule)
    lead = f"{head.id} was trained on {trained}'s hidden states"
    if geometry is not None:
        return Check(
            name="head_target",
            status="fail",
            detail=f"{lead}; it cannot propose for {target.short_name}: {geometry}",
            evidence=LOADERS,
        )
    if block.targets and target.id not in block.targets:
        return Check(
            name="head_target",
            status="fail",
            detail=(
                f"{lead}; it cannot propose for {target.short_name} (same geometry, so the engine would load it, "
                "but its proposals would rarely be accepted)"
            ),
            evidence=LOADERS,
        )
    if not block.targets:
        return Check(
            name="head_target",
            status="warn",
            detail=(
                f"an imported {block.kind} head trained on {trained}: its geometry fits {target.short_name}; use it "
                f"only if it was trained on {target.short_name}'s hidden states"
            ),
        )
    if block.trained_on and block.trained_on != target.id:
        return Check(
            name="head_target",
            status="warn",
            detail=(
                f"{lead}; {target.short_name} has the same geometry (the catalog lists the base id), so serve "
                f"{block.trained_on} for the published acceptance"
            ),
            evidence=head.source if isinstance(head.source, list) else [head.source],
        )
    return Check(name="head_target", status="pass", detail=f"{lead}: it is this target's head")
