"""Can this draft speculate for this target? A verdict from five named checks, each with its reason.

Checks (rules and sources in ``data/compatibility_rules.json``; notes in docs/compatibility.md):

* ``tokenizer``: same token→id mapping. Real ``tokenizer.json`` files win when given
  (:mod:`planner.pairs.tokenizers`); otherwise the catalog identity (data/tokenizers.json), where a
  shared ``base`` means the same regular vocabulary with other special tokens (a warning);
* ``vocab_size``: equal ``vocab_size``; a padding-only difference over the same vocabulary (Qwen
  152,064 vs 151,936) warns, naming the engines that reject it and the workaround;
* ``lineage``: family, generation, distillation link (planner/pairs/lineage.py) and RoPE (another RoPE
  type or base warns; a different scaling factor over the same type and base is only noted);
* ``parameter_ratio``: the default 10x-50x band passes, outside warns with measured counter-evidence,
  under 5x or over 200x fails unless this very pair measured a speedup;
* ``engine``: the serving engine's draft TP rule and context handling.

The verdict is ``incompatible`` when any check fails, ``compatible_with_warnings`` when any warns.

>>> from planner.catalog.lookup import get_model
>>> v = check_pair(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
>>> v.verdict, round(v.parameter_ratio, 1), v.check("parameter_ratio").status
('compatible_with_warnings', 57.1, 'warn')
>>> check_pair(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B")).check("tokenizer").status
'fail'
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from planner.catalog.lookup import get_tokenizer, list_models
from planner.catalog.schemas import ModelSpec, TokenizerSpec
from planner.errors import InputError
from planner.model.parallelism import check_tp, tp_problem
from planner.pairs.acceptance import PairEvidence, evidence_ratios, published_evidence
from planner.pairs.lineage import Relation, distillation_link, lineage_relation
from planner.pairs.rules import EngineRule, load_rules
from planner.pairs.size_ratio import active_parameter_ratio, param_count, parameter_ratio
from planner.pairs.tokenizers import TokenizerVocab, VocabComparison, compare_vocabs

Status = Literal["pass", "warn", "fail"]
Verdict = Literal["compatible", "compatible_with_warnings", "incompatible"]
CHECK_NAMES = ("tokenizer", "vocab_size", "lineage", "parameter_ratio", "engine")


class Check(BaseModel):
    name: str
    status: Status
    #: A sentence a person can act on.
    detail: str
    evidence: list[str] | None = None


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


# ----- tokenizer and vocabulary -------------------------------------------------------------------


def _catalog_tokenizer(spec: ModelSpec) -> TokenizerSpec | None:
    return None if spec.tokenizer is None else get_tokenizer(spec.tokenizer)


def _root(tok: TokenizerSpec) -> str:
    return tok.base or tok.id


#: How two vocabularies relate: same mapping, same regular vocabulary only, different, or unknown.
Parity = Literal["same", "same_base", "different", "unknown"]


def _parity(
    target: ModelSpec, draft: ModelSpec, comparison: VocabComparison | None
) -> tuple[Parity, TokenizerSpec | None, TokenizerSpec | None]:
    tt, dt = _catalog_tokenizer(target), _catalog_tokenizer(draft)
    if comparison is not None:
        if comparison.identical:
            return "same", tt, dt
        return ("same_base" if comparison.regular_identical else "different"), tt, dt
    if tt is None or dt is None:
        return "unknown", tt, dt
    if tt.id == dt.id:
        return "same", tt, dt
    return ("same_base" if _root(tt) == _root(dt) else "different"), tt, dt


def _tokenizer_check(
    target: ModelSpec, draft: ModelSpec, parity: Parity, tt, dt, comparison, rule: EngineRule
) -> Check:
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
    if parity == "unknown":
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
    source = [tt.source if isinstance(tt.source, str) else "; ".join(tt.source)]
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
                f"{tt.id} and {dt.id} share the regular vocabulary of {_root(tt)}"
                + (f" ({tt.regular_tokens:,} tokens)" if tt.regular_tokens else "")
                + f" but their special tokens differ{f' ({counts})' if counts else ''}: chat-template and "
                "special-token positions may be drafted wrongly, lowering acceptance. Compare the "
                "tokenizer.json files to see which tokens differ, or pick a draft with the target's exact "
                "tokenizer"
            ),
            evidence=[*source, dt.source if isinstance(dt.source, str) else "; ".join(dt.source)],
        )
    return _different_tokenizers(
        f"{target.id} uses {tt.id} and {draft.id} uses {dt.id}: the token→id mappings differ", rule, source
    )


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


def _short(name: str) -> str:
    """'vLLM (V1, method draft_model)' -> 'vLLM'."""
    return name.split(" (", maxsplit=1)[0]


def _same_padding_drafts(target: ModelSpec) -> list[str]:
    """Smaller catalog models with the target's tokenizer family and exactly its vocab_size."""
    tt = _catalog_tokenizer(target)
    if tt is None:
        return []
    size = param_count(target).total_params
    found = []
    for model in list_models():
        tok = _catalog_tokenizer(model)
        if (
            model.id != target.id
            and tok is not None
            and _root(tok) == _root(tt)
            and model.config.get("vocab_size", target.architecture.vocab_size) == target.architecture.vocab_size
            and model.architecture.vocab_size == target.architecture.vocab_size
            and param_count(model).total_params < size
        ):
            found.append((param_count(model).total_params, model.id))
    return [model_id for _, model_id in sorted(found)[:3]]


def _vocab_check(target: ModelSpec, draft: ModelSpec, parity: Parity, tt, dt, comparison, rule: EngineRule) -> Check:
    rules = load_rules()
    tv, dv = target.architecture.vocab_size, draft.architecture.vocab_size
    if tv == dv:
        return Check(name="vocab_size", status="pass", detail=f"both have vocab_size {tv:,}")
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
        same_padding = _same_padding_drafts(target)
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


# ----- lineage, ratio, engine -----------------------------------------------------------------------


def _rope(spec: ModelSpec) -> tuple[str, object, object]:
    cfg = spec.config
    scaling = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    return spec.architecture.rope_type, cfg.get("rope_theta"), factor


def _fmt_rope(rope: tuple[str, object, object]) -> str:
    kind, theta, factor = rope
    return f"{kind}" + (f" x{factor}" if factor else "") + (f", θ {theta:g}" if theta else "")


def _lineage_check(target: ModelSpec, draft: ModelSpec, relation: Relation) -> Check:
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
        evidence=["data/models.json lineage (model cards)"],
    )


def _log_distance(a: float, b: float) -> float:
    return abs(math.log(a) - math.log(b))


def _counter_evidence(ratio: float, side: Literal["below", "above"]) -> PairEvidence | None:
    """The measured pair nearest in ratio on the same side of the band that measured a speedup > 1."""
    rules = load_rules().parameter_ratio
    best: tuple[float, float, PairEvidence] | None = None
    for row, r in evidence_ratios():
        if row.speedup is None or row.speedup <= 1:
            continue
        if (side == "below" and r >= rules.band_low) or (side == "above" and r <= rules.band_high):
            continue
        key = (_log_distance(r, ratio), -row.speedup)
        if best is None or key < best[:2]:
            best = (*key, row)
    return None if best is None else best[2]


def _ratio_check(target: ModelSpec, draft: ModelSpec, ratio: float) -> Check:
    rules = load_rules().parameter_ratio
    active = active_parameter_ratio(target, draft)
    moe = f" (active parameters {active:.1f}x)" if abs(active - ratio) / ratio > 0.01 else ""
    band = f"the {rules.band_low:g}x-{rules.band_high:g}x band"
    if rules.band_low <= ratio <= rules.band_high:
        return Check(
            name="parameter_ratio", status="pass", detail=f"{ratio:.1f}x{moe}, inside {band}", evidence=rules.source
        )
    measured = published_evidence(target, draft)
    speedups = [e for e in measured if e.speedup is not None]
    side: Literal["below", "above"] = "below" if ratio < rules.band_low else "above"
    fails = ratio < rules.fail_below or ratio > rules.fail_above
    why = (
        "the draft is so large that its forwards eat the gain"
        if side == "below"
        else "so small a draft accepts less (Leviathan et al. 2023, Table 3)"
    )
    evidence = [*rules.source, *sorted({e.source for e in measured})]
    if measured:
        shown = "; ".join(e.describe() for e in measured[:3])
        found = f"measured for this pair: {shown}"
    else:
        nearest = _counter_evidence(ratio, side)
        found = "no published measurement of this pair"
        if nearest is not None:
            r = next(row_ratio for row, row_ratio in evidence_ratios() if row is nearest)
            found += f"; the nearest measured pair {side} the band ({r:.0f}x) ran {nearest.describe()}"
            evidence.append(nearest.source)
    if fails:
        limit = f"under {rules.fail_below:g}x" if side == "below" else f"over {rules.fail_above:g}x"
        if rules.measured_pair_overrides_fail and any(e.speedup > 1 for e in speedups):
            return Check(
                name="parameter_ratio",
                status="warn",
                detail=(
                    f"{ratio:.1f}x{moe} is {limit}, which the planner's default band fails, "
                    f"but evidence says otherwise: {found}"
                ),
                evidence=evidence,
            )
        return Check(
            name="parameter_ratio",
            status="fail",
            detail=(
                f"{ratio:.1f}x{moe} is {limit}: {why}"
                + ("" if ratio > 1.0 + 1e-9 else "; a draft as large as the target cannot be faster than it")
                + f"; {found}. Choose a draft {rules.band_low:g}x-{rules.band_high:g}x smaller than the target"
            ),
            evidence=evidence,
        )
    return Check(
        name="parameter_ratio",
        status="warn",
        detail=f"{ratio:.1f}x{moe} is outside {band} ({why}); {found}",
        evidence=evidence,
    )


def _engine_check(target: ModelSpec, draft: ModelSpec, rule: EngineRule, target_tp: int, draft_tp: int) -> Check:
    problems: list[str] = []
    if rule.draft_tp_rule == "equal" and draft_tp != target_tp:
        problems.append(f"draft TP {draft_tp} must equal the target's TP {target_tp}: {rule.draft_tp_detail}")
    if rule.draft_tp_rule == "one_or_equal" and draft_tp not in (1, target_tp):
        problems.append(f"draft TP {draft_tp} must be 1 or the target's TP {target_tp}: {rule.draft_tp_detail}")
    problem = tp_problem(draft.architecture, draft_tp)
    if problem:
        problems.append(f"the draft cannot run at TP {draft_tp}: {problem}")
    if problems:
        return Check(
            name="engine",
            status="fail",
            detail=f"{rule.name}: " + "; ".join(problems),
            evidence=rule.source,
        )
    t_ctx, d_ctx = target.architecture.max_position_embeddings, draft.architecture.max_position_embeddings
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


def _verdict(checks: list[Check]) -> Verdict:
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
    rule = load_rules().engine(engine)
    check_tp(target.architecture, target_tp, "tp")
    if draft_tp is not None and draft_tp < 1:
        raise InputError("draft_tp", draft_tp, "an integer >= 1")
    if (target_tokenizer is None) != (draft_tokenizer is None):
        missing = "draft_tokenizer" if draft_tokenizer is None else "target_tokenizer"
        raise InputError(missing, None, "a tokenizer.json for both models (they are compared with each other)")
    resolved_draft_tp = target_tp if draft_tp is None else draft_tp
    comparison = (
        compare_vocabs(target_tokenizer, draft_tokenizer)
        if target_tokenizer is not None and draft_tokenizer is not None
        else None
    )
    parity, tt, dt = _parity(target, draft, comparison)
    ratio = parameter_ratio(target, draft)
    relation = lineage_relation(target, draft)
    checks = [
        _tokenizer_check(target, draft, parity, tt, dt, comparison, rule),
        _vocab_check(target, draft, parity, tt, dt, comparison, rule),
        _lineage_check(target, draft, relation),
        _ratio_check(target, draft, ratio),
        _engine_check(target, draft, rule, target_tp, resolved_draft_tp),
    ]
    return PairVerdict(
        target=target.id,
        draft=draft.id,
        engine=engine,
        target_tp=target_tp,
        draft_tp=resolved_draft_tp,
        verdict=_verdict(checks),
        parameter_ratio=ratio,
        lineage_relation=relation,
        checks=checks,
        vocab_comparison=comparison,
    )
