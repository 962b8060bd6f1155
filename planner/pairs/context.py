"""What every compatibility check reads about a draft/target pair, gathered once: :class:`PairContext`.

A check is a function ``(ctx: PairContext) -> Check`` (one module each under
:mod:`planner.pairs.checks`); :func:`planner.pairs.compatibility.check_pair` builds the context and
composes them. Tokenizer parity is decided here once: real ``tokenizer.json`` files win when given,
else the catalog identity (data/tokenizers.json), where a shared ``base`` means the same regular
vocabulary with other special tokens.

>>> from planner.catalog.lookup import get_model
>>> ctx = PairContext.build(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"))
>>> ctx.parity, ctx.relation, ctx.draft_tp
('same', 'same_generation', 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from pydantic import BaseModel

from planner.catalog.lookup import get_tokenizer
from planner.catalog.schemas import ModelSpec, TokenizerSpec
from planner.errors import InputError
from planner.model.parallelism import check_tp
from planner.pairs.lineage import Relation, lineage_relation
from planner.pairs.rules import EngineRule, load_rules
from planner.pairs.size_ratio import parameter_ratio
from planner.pairs.tokenizers import TokenizerVocab, VocabComparison, compare_vocabs

Status = Literal["pass", "warn", "fail"]
#: How two vocabularies relate: same mapping, same regular vocabulary only, different, or unknown.
Parity = Literal["same", "same_base", "different", "unknown"]


class Check(BaseModel):
    """One named check of a pair: its status and a sentence a person can act on, with its sources."""

    name: str
    status: Status
    #: A sentence a person can act on.
    detail: str
    evidence: list[str] | None = None


def catalog_tokenizer(spec: ModelSpec) -> TokenizerSpec | None:
    """The model's tokenizer identity in the catalog (None for an imported config)."""
    return None if spec.tokenizer is None else get_tokenizer(spec.tokenizer)


def tokenizer_root(tok: TokenizerSpec) -> str:
    """The regular vocabulary a tokenizer builds on: its ``base``, else itself."""
    return tok.base or tok.id


def _parity(
    target: ModelSpec, draft: ModelSpec, comparison: VocabComparison | None
) -> tuple[Parity, TokenizerSpec | None, TokenizerSpec | None]:
    tt, dt = catalog_tokenizer(target), catalog_tokenizer(draft)
    if comparison is not None:
        if comparison.identical:
            return "same", tt, dt
        return ("same_base" if comparison.regular_identical else "different"), tt, dt
    if tt is None or dt is None:
        return "unknown", tt, dt
    if tt.id == dt.id:
        return "same", tt, dt
    return ("same_base" if tokenizer_root(tt) == tokenizer_root(dt) else "different"), tt, dt


@dataclass(frozen=True)
class PairContext:
    """Everything the checks need about one pair on one engine, computed once."""

    target: ModelSpec
    draft: ModelSpec
    engine: str
    #: What the serving engine enforces on a draft (data/compatibility_rules.json).
    rule: EngineRule
    target_tp: int
    draft_tp: int
    #: The real-file comparison, when both tokenizer.json files were given.
    comparison: VocabComparison | None
    parity: Parity
    target_tokenizer: TokenizerSpec | None
    draft_tokenizer: TokenizerSpec | None
    relation: Relation

    @cached_property
    def parameter_ratio(self) -> float:
        """Target total parameters over draft total parameters (exact counts), counted when a check first asks:
        a pair another check already rejects never has its sizes counted."""
        return parameter_ratio(self.target, self.draft)

    @classmethod
    def build(
        cls,
        target: ModelSpec,
        draft: ModelSpec,
        *,
        engine: str = "vllm",
        target_tp: int = 1,
        draft_tp: int | None = None,
        target_tokenizer: TokenizerVocab | None = None,
        draft_tokenizer: TokenizerVocab | None = None,
    ) -> PairContext:
        """Validate the inputs and gather the pair's facts (draft TP defaults to the target's)."""
        rule = load_rules().engine(engine)
        check_tp(target.architecture, target_tp, "tp")
        if draft_tp is not None and draft_tp < 1:
            raise InputError("draft_tp", draft_tp, "an integer >= 1")
        if (target_tokenizer is None) != (draft_tokenizer is None):
            missing = "draft_tokenizer" if draft_tokenizer is None else "target_tokenizer"
            raise InputError(missing, None, "a tokenizer.json for both models (they are compared with each other)")
        comparison = (
            compare_vocabs(target_tokenizer, draft_tokenizer)
            if target_tokenizer is not None and draft_tokenizer is not None
            else None
        )
        parity, tt, dt = _parity(target, draft, comparison)
        return cls(
            target=target,
            draft=draft,
            engine=engine,
            rule=rule,
            target_tp=target_tp,
            draft_tp=target_tp if draft_tp is None else draft_tp,
            comparison=comparison,
            parity=parity,
            target_tokenizer=tt,
            draft_tokenizer=dt,
            relation=lineage_relation(target, draft),
        )
