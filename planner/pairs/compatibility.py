"""Can this draft speculate for this target? A verdict from named checks, each with its reason.

:func:`check_pair` gathers the pair's facts once into a :class:`~planner.pairs.context.PairContext`
and runs every check of :mod:`planner.pairs.checks` over it (rules and sources in
``data/compatibility_rules.json``):

* ``tokenizer``: same token→id mapping (real ``tokenizer.json`` files win when given);
* ``vocab_size``: equal ``vocab_size``; a padding-only difference warns with the workarounds;
* ``lineage``: family, generation, distillation link and RoPE;
* ``parameter_ratio``: the size band, with measured counter-evidence outside it;
* ``engine``: the serving engine's draft TP rule and context handling;
* ``head_target`` (speculator heads only): the target the head was trained on, its hidden size and vocabulary.

The verdict is ``incompatible`` when any check fails, ``compatible_with_warnings`` when any warns.

>>> from planner.catalog.lookup import get_model
>>> v = check_pair(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
>>> v.verdict, round(v.parameter_ratio, 1), v.check("parameter_ratio").status
('compatible_with_warnings', 57.1, 'warn')
>>> check_pair(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B")).check("tokenizer").status
'fail'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from planner.catalog.schemas import ModelSpec
from planner.pairs.checks import CHECK_NAMES, CHECKS
from planner.pairs.context import Check, PairContext, Status
from planner.pairs.lineage import Relation
from planner.pairs.tokenizers import TokenizerVocab, VocabComparison

Verdict = Literal["compatible", "compatible_with_warnings", "incompatible"]

__all__ = ["CHECK_NAMES", "Check", "PairVerdict", "Status", "Verdict", "check_pair", "rejects", "verdict_of"]


class PairVerdict(BaseModel):
    target: str
    draft: str
    engine: str
    target_tp: int
    draft_tp: int
    verdict: Verdict
    parameter_ratio: float
    lineage_relation: Relation
    checks: list[Check]
    #: The real-file comparison, when tokenizer files were given.
    vocab_comparison: VocabComparison | None = None

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)


def rejects(target: ModelSpec, draft: ModelSpec, *, engine: str = "vllm") -> bool:
    """True when some check fails ``draft`` for ``target`` on ``engine`` (:func:`check_pair`'s ``incompatible``),
    found by running the checks in order up to the first failure: a pair whose tokenizers differ is rejected before
    its sizes are counted (counting a family no formula covers builds it on the meta device)."""
    ctx = PairContext.build(target, draft, engine=engine)
    return any(found is not None and found.status == "fail" for found in (check(ctx) for check in CHECKS))


def verdict_of(checks: list[Check]) -> Verdict:
    """``incompatible`` if any check fails, ``compatible_with_warnings`` if any warns, else ``compatible``."""
    statuses = {c.status for c in checks}
    if "fail" in statuses:
        return "incompatible"
    return "compatible_with_warnings" if "warn" in statuses else "compatible"


def check_pair(
    target: ModelSpec,
    draft: ModelSpec,
    *,
    engine: str = "vllm",
    target_tp: int = 1,
    draft_tp: int | None = None,
    target_tokenizer: TokenizerVocab | None = None,
    draft_tokenizer: TokenizerVocab | None = None,
) -> PairVerdict:
    """The verdict for ``draft`` speculating for ``target`` on ``engine`` (draft TP defaults to the target's)."""
    ctx = PairContext.build(
        target,
        draft,
        engine=engine,
        target_tp=target_tp,
        draft_tp=draft_tp,
        target_tokenizer=target_tokenizer,
        draft_tokenizer=draft_tokenizer,
    )
    checks = [found for check in CHECKS if (found := check(ctx)) is not None]
    return PairVerdict(
        target=target.id,
        draft=draft.id,
        engine=engine,
        target_tp=target_tp,
        draft_tp=ctx.draft_tp,
        verdict=verdict_of(checks),
        parameter_ratio=ctx.parameter_ratio,
        lineage_relation=ctx.relation,
        checks=checks,
        vocab_comparison=ctx.comparison,
    )
