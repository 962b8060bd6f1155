"""The ``tokenizer`` check: do draft and target map text to the same token ids?

Real ``tokenizer.json`` files win when given (:mod:`planner.pairs.tokenizers`); otherwise the catalog
identity (data/tokenizers.json), where a shared ``base`` means the same regular vocabulary with other
special tokens (a warning). Different mappings fail, unless the engine speculates across tokenizers
(Hugging Face universal assisted generation), which warns.

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> tokenizer_check(PairContext.build(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B"))).status
'fail'
"""

from __future__ import annotations

from planner.pairs.context import Check, PairContext, tokenizer_root
from planner.pairs.rules import EngineRule


def _sources(tok) -> str:
    return tok.source if isinstance(tok.source, str) else "; ".join(tok.source)


def _different_tokenizers(what: str, rule: EngineRule, source: list[str]) -> Check:
    if rule.different_tokenizer == "universal_assisted_generation":
        return Check(
            name="tokenizer",
            status="warn",
            detail=f"{what}; {rule.name} can still speculate only via {rule.heterogeneous_option}",
            evidence=[*source, *rule.source],
        )
    option = f" (it only runs with {rule.heterogeneous_option})" if rule.heterogeneous_option else ""
    return Check(
        name="tokenizer",
        status="fail",
        detail=(
            f"{what}, so the draft's token ids mean other tokens to the target and almost nothing is "
            f"accepted; {rule.name} rejects such a pair{option}. Choose a draft with the target's tokenizer"
        ),
        evidence=[*source, *rule.source],
    )


def tokenizer_check(ctx: PairContext) -> Check:
    """Same token→id mapping: pass; same regular vocabulary only: warn; different: the engine's rule."""
    target, draft, parity, rule = ctx.target, ctx.draft, ctx.parity, ctx.rule
    tt, dt, comparison = ctx.target_tokenizer, ctx.draft_tokenizer, ctx.comparison
    if comparison is not None:
        source = ["tokenizer.json files compared with the tokenizers library"]
        if parity == "same":
            return Check(name="tokenizer", status="pass", detail=comparison.summary(), evidence=source)
        if parity == "same_base":
            detail = (
                f"{comparison.summary()}. Regular text tokenizes identically, but prompts using these "
                "special tokens (chat template, reasoning markers) are drafted differently: expect lower "
                "acceptance on them, or pick a draft with the target's exact tokenizer"
            )
            return Check(name="tokenizer", status="warn", detail=detail, evidence=source)
        return _different_tokenizers(comparison.summary(), rule, source)
    if parity == "unknown" or tt is None or dt is None:
        missing = " and ".join(s.id for s in (target, draft) if s.tokenizer is None)
        return Check(
            name="tokenizer",
            status="warn",
            detail=(
                f"cannot confirm tokenizer parity: {missing} has no tokenizer identity in the catalog "
                "(an imported config). Supply both tokenizer.json files (--target-tokenizer, "
                "--draft-tokenizer, or the upload on the page) to compare the real vocabularies"
            ),
        )
    source = [_sources(tt)]
    if parity == "same":
        return Check(
            name="tokenizer",
            status="pass",
            detail=f"both use the {tt.name} tokenizer ({tt.id}): identical token→id mapping",
            evidence=source,
        )
    if parity == "same_base":
        counts = (
            f"{tt.special_tokens} vs {dt.special_tokens}"
            if tt.special_tokens and dt.special_tokens and tt.special_tokens != dt.special_tokens
            else ""
        )
        return Check(
            name="tokenizer",
            status="warn",
            detail=(
                f"{tt.id} and {dt.id} share the regular vocabulary of {tokenizer_root(tt)}"
                + (f" ({tt.regular_tokens:,} tokens)" if tt.regular_tokens else "")
                + f" but their special tokens differ{f' ({counts})' if counts else ''}: chat-template and "
                "special-token positions may be drafted wrongly, lowering acceptance. Compare the "
                "tokenizer.json files to see which tokens differ, or pick a draft with the target's exact "
                "tokenizer"
            ),
            evidence=[*source, _sources(dt)],
        )
    return _different_tokenizers(
        f"{target.id} uses {tt.id} and {draft.id} uses {dt.id}: the token→id mappings differ", rule, source
    )
