"""The ``vocab_size`` check: equal ``vocab_size`` passes; a padding-only difference warns.

A padding-only difference over the same vocabulary (Qwen 152,064 vs 151,936) warns, naming the
engines that reject it, the workarounds (data/compatibility_rules.json) and catalog drafts with the
target's padding; a different vocabulary fails unless the engine then treats the pair as two
tokenizers.

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> vocab_size_check(PairContext.build(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"))).status
'warn'
"""

from __future__ import annotations

from planner.catalog.lookup import list_models
from planner.catalog.schemas import ModelSpec
from planner.pairs.context import Check, PairContext, catalog_tokenizer, tokenizer_root
from planner.pairs.rules import load_rules
from planner.pairs.size_ratio import param_count


def _short(name: str) -> str:
    """'vLLM (V1, method draft_model)' -> 'vLLM'."""
    return name.split(" (", maxsplit=1)[0]


def same_padding_drafts(target: ModelSpec) -> list[str]:
    """Smaller catalog models with the target's tokenizer family and exactly its vocab_size (three smallest)."""
    tt = catalog_tokenizer(target)
    if tt is None:
        return []
    size = param_count(target).total_params
    found = []
    for model in list_models():
        tok = catalog_tokenizer(model)
        if (
            model.id != target.id
            and tok is not None
            and tokenizer_root(tok) == tokenizer_root(tt)
            and model.config.get("vocab_size", target.architecture.vocab_size) == target.architecture.vocab_size
            and model.architecture.vocab_size == target.architecture.vocab_size
            and param_count(model).total_params < size
        ):
            found.append((param_count(model).total_params, model.id))
    return [model_id for _, model_id in sorted(found)[:3]]


def vocab_size_check(ctx: PairContext) -> Check:
    """Equal sizes pass; padding over the same vocabulary warns; a different vocabulary fails (or warns)."""
    rules = load_rules()
    rule, parity, comparison = ctx.rule, ctx.parity, ctx.comparison
    tt, dt = ctx.target_tokenizer, ctx.draft_tokenizer
    tv, dv = ctx.target.architecture.vocab_size, ctx.draft.architecture.vocab_size
    if tv == dv:
        return Check(name="vocab_size", status="pass", detail=f"both have vocab_size {tv:,}")
    if ctx.draft.is_head:  # a head is not loaded by the draft-model loader: the head_target check answers for it
        return Check(
            name="vocab_size",
            status="warn",
            detail=f"vocab_size {tv:,} vs the head's {dv:,}: {rule.head_vocab_detail or 'see the head_target check'}",
            evidence=rule.source,
        )
    if comparison is not None:
        ids_needed = max(comparison.a_id_count, comparison.b_id_count)
    else:
        ids_needed = max((tok.tokens or 0) for tok in (tt, dt) if tok is not None) if (tt or dt) else 0
    padding_only = parity in ("same", "same_base") and min(tv, dv) >= ids_needed
    rejecting = [_short(r.name) for r in rules.engines if r.vocab_size_rule == "equal"]
    rejecting += [o.name for o in rules.other_runtimes if not o.accepts_padding_only]
    tolerant = [o.name for o in rules.other_runtimes if o.accepts_padding_only]
    hf = [_short(r.name) for r in rules.engines if r.vocab_size_rule == "decides_tokenizer"]
    sources = [
        *rule.source,
        *(w.source for w in rules.padding_workarounds),
        *(f"{o.name}: {o.vocab_rule} ({o.source})" for o in rules.other_runtimes),
    ]
    if padding_only:
        same_padding = same_padding_drafts(ctx.target)
        alternatives = f"; or use a draft with the target's padding: {', '.join(same_padding)}" if same_padding else ""
        workarounds = "; ".join(w.text for w in rules.padding_workarounds)
        return Check(
            name="vocab_size",
            status="warn",
            detail=(
                f"vocab_size differs only by padding ({tv:,} vs {dv:,}) over the same vocabulary "
                f"({ids_needed:,} ids used): {', '.join(rejecting)} reject unequal sizes"
                + (f"; {', '.join(hf)} treats it as different tokenizers (universal assisted generation)" if hf else "")
                + (f"; {', '.join(tolerant)} accepts it" if tolerant else "")
                + f". Workarounds: {workarounds}{alternatives}"
            ),
            evidence=sources,
        )
    if parity == "unknown":
        return Check(
            name="vocab_size",
            status="fail",
            detail=(
                f"vocab_size differs ({tv:,} vs {dv:,}) and the tokenizers are unknown: {rule.name} "
                f"{rule.vocab_size_detail}. If both share one tokenizer and the difference is padding, "
                "supply the tokenizer.json files to show it"
            ),
            evidence=rule.source,
        )
    if rule.vocab_size_rule == "decides_tokenizer":
        return Check(
            name="vocab_size",
            status="warn",
            detail=f"vocabulary {tv:,} vs {dv:,}: {rule.name} {rule.vocab_size_detail}",
            evidence=rule.source,
        )
    return Check(
        name="vocab_size",
        status="fail",
        detail=(
            f"vocabulary {tv:,} vs {dv:,}: different vocabularies, not padding; {rule.name} "
            f"{rule.vocab_size_detail}. Choose a draft with the target's vocabulary"
        ),
        evidence=rule.source,
    )
