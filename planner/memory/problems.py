"""What is wrong with a memory plan, and which of it stops the engine from starting.

Each problem names the engine rule it comes from. ``fits`` is the memory verdict; a plan ``starts`` when the
engine would also accept it at start-up: its draft loader takes the pair's vocabularies and draft TP
(:mod:`planner.pairs.compatibility`, ``data/engine_releases.json``), the release runs the speculative method,
one ``max_model_len`` request fits the KV cache where the engine checks that, and nothing over-commits the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.deployment import Deployment
from planner.engines.context_limit import derived_max_model_len
from planner.engines.profiles import EngineProfile
from planner.engines.releases import engine_releases, method_support
from planner.memory.budget_rules import budget_rule
from planner.memory.types import MemoryPlan
from planner.pairs.checks.head_target import head_geometry_problem
from planner.pairs.compatibility import check_pair
from planner.pairs.rules import load_rules
from planner.units import fmt_gib

#: The speculative method a deployment with a catalog draft model runs.
DRAFT_METHOD = "draft_model"


@dataclass
class Findings:
    """Problems of a plan: ``start`` lists those that stop start-up (also in ``problems``)."""

    problems: list[str] = field(default_factory=list)
    start: list[str] = field(default_factory=list)
    fits: bool = True

    def add(self, text: str, *, stops_start: bool = False, fits: bool = True) -> None:
        self.problems.append(text)
        if stops_start:
            self.start.append(text)
        self.fits = self.fits and fits


def deployment_problems(dep: Deployment, plan: MemoryPlan, profile: EngineProfile, share=None) -> Findings:
    """Problems of ``plan``, whether the deployment fits and what stops the engine from starting. ``share``
    (:class:`planner.memory.budget.SharedBudget`) keeps the context's and the pair's problems, which neither K nor
    the batch cap changes, for the next plan of the family."""
    found = Findings()
    gpu = plan.per_gpu
    weights = gpu.weights_bytes
    releases = engine_releases(dep.engine)
    if weights > gpu.total_bytes:
        found.add(
            f"weights need {fmt_gib(weights)} per GPU but the GPU reports {fmt_gib(gpu.total_bytes)}",
            stops_start=True,
            fits=False,
        )
    elif gpu.kv_cache_bytes <= 0 or plan.num_blocks <= 0:
        found.add(
            f"no memory is left for the KV cache: the {fmt_gib(gpu.memory_limit_bytes)} budget is taken by weights "
            f"({fmt_gib(weights)}), activations ({fmt_gib(gpu.torch_peak_increase_bytes)}) and runtime overheads",
            stops_start=True,
            fits=False,
        )
    elif budget_rule(profile).POOLED and not plan.admits_max_model_len:
        refuses = releases.refuses_len_above_kv
        found.add(
            f"one request of max_model_len {plan.max_model_len:,} tokens needs more KV cache than the "
            f"{plan.kv_cache_tokens:,} tokens available"
            + (" (the engine refuses to start)" if refuses else " (the engine starts but cannot serve such a request)")
            + f"; at most about {plan.kv_cache_tokens:,} tokens fit",
            stops_start=refuses,
            fits=False,
        )
    if gpu.free_bytes < 0:
        found.add(
            f"the plan over-commits the GPU by {fmt_gib(-gpu.free_bytes)} (out of memory at start-up)",
            stops_start=True,
            fits=False,
        )
    fixed = (
        _fixed_problems(dep, profile, plan)
        if share is None
        else share.get(("problems",), lambda: _fixed_problems(dep, profile, plan))
    )
    for text, stops_start, fits in fixed:
        found.add(text, stops_start=stops_start, fits=fits)
    if dep.target_format.id == "bf16" and not dep.gpu.supports_bf16:
        found.add(f"{dep.gpu.name} has no bf16 support: use --dtype fp16", stops_start=True, fits=False)
    return found


def _fixed_problems(dep: Deployment, profile: EngineProfile, plan: MemoryPlan) -> tuple[tuple[str, bool, bool], ...]:
    """The context's and the speculation's problems, as (text, stops start, fits): the same at every K and cap."""
    found = _Recorded()
    _context_problems(dep, profile, found)
    if dep.is_speculative:
        _speculation_problems(dep, profile, plan, found)
    return tuple(found.calls)


@dataclass
class _Recorded(Findings):
    """Findings that also keep each ``add`` as made, to be replayed on another plan's findings."""

    calls: list[tuple[str, bool, bool]] = field(default_factory=list)

    def add(self, text: str, *, stops_start: bool = False, fits: bool = True) -> None:
        self.calls.append((text, stops_start, fits))
        super().add(text, stops_start=stops_start, fits=fits)


def _context_problems(dep: Deployment, profile: EngineProfile, found: Findings) -> None:
    """A max_model_len above the length the engine derives from the config: refused in the engine's words, or a
    risk when the user sets the engine's override (data/engine_releases.json ``context_limit``)."""
    limit = engine_releases(dep.engine).context_limit
    if limit is None or dep.max_model_len is None:
        return
    derived = derived_max_model_len(dep.target.config, limit.derivation)
    if derived is None or dep.max_model_len <= derived:
        return
    releases = f"releases {profile.min_version} to <{profile.max_version}"
    if dep.allow_long_max_model_len:
        found.add(
            f"max_model_len {dep.max_model_len:,} is above the {derived:,} tokens {profile.engine_name} derives from "
            f"the config; you set {limit.override_env}, so it starts with a warning, at a risk: {limit.risk} "
            f"({releases}; {limit.source})"
        )
        return
    message = limit.message.format(max_model_len=dep.max_model_len, derived=derived)
    found.add(
        f'{profile.engine_name} refuses max_model_len {dep.max_model_len:,}: "{message}" ({releases}; {limit.source})',
        stops_start=True,
    )


#: How a problem names each speculative method.
METHOD_WORDS: dict[str, str] = {
    "draft_model": "a separate draft model",
    "eagle": "EAGLE heads",
    "eagle3": "EAGLE-3 heads",
    "mtp": "multi-token prediction (MTP)",
    "ngram": "n-gram speculation",
}


def _speculation_problems(dep: Deployment, profile: EngineProfile, plan: MemoryPlan, found: Findings) -> None:
    """What the engine rejects about the speculative method and the pair, then the plan's own draft issues."""
    method = dep.speculative_method
    support = method_support(dep.engine, dep.engine_version, method)
    if not support.supported:
        since = f"; releases from {support.first_release} run it" if support.first_release else ""
        said = f': "{support.engine_message}"' if support.engine_message else ""
        found.add(
            f"{profile.engine_name} {dep.engine_version or ''} does not run {METHOD_WORDS[method]} "
            f"(speculative method {method}; it refuses the speculative config at start-up{said}){since} "
            f"(releases {profile.min_version} to <{profile.max_version}; "
            f"{support.engine_message_source or support.source})".replace("  ", " "),
            stops_start=True,
        )
    if method == "eagle3" and support.supported:
        releases = engine_releases(dep.engine)
        model_type = str(dep.target.config.get("model_type") or dep.target.architecture.model_type)
        refusal = releases.eagle3_refusal(dep.engine_version, model_type)
        if refusal:
            found.add(
                f'{profile.engine_name} refuses EAGLE-3 on a {model_type} target: "{refusal}" (releases '
                f"{profile.min_version} to <{profile.max_version}; {releases.eagle3_source(dep.engine_version)})",
                stops_start=True,
            )
    if dep.speculator is None:  # n-gram: no model, no weights, no KV of its own
        return
    if dep.draft is not None:
        _pair_problems(dep, profile, found)
    spec = dep.speculator
    draft = spec.architecture
    if spec.is_head:
        if draft.max_position_embeddings and draft.max_position_embeddings < plan.max_model_len:
            found.add(
                f"the head was trained at {draft.max_position_embeddings:,} tokens; the engine raises its context "
                f"to the target's, but acceptance past {draft.max_position_embeddings:,} tokens is outside its "
                "training range"
            )
        if dep.resolved_draft_tp != dep.tp:
            found.add(
                f"vLLM V1 and SGLang run EAGLE and MTP heads at the target's TP ({dep.tp}), whatever the draft TP "
                f"setting says; the plan keeps the draft TP {dep.resolved_draft_tp} you gave"
            )
    elif draft.max_position_embeddings and draft.max_position_embeddings < plan.max_model_len:
        found.add(
            f"the draft's context ({draft.max_position_embeddings:,}) is shorter than max_model_len "
            f"({plan.max_model_len:,}); vLLM crashes on longer requests (issue #57941)"
        )
    if not profile.draft_weights_budgeted:
        found.add(
            f"{profile.id} does not count the draft's {fmt_gib(plan.per_gpu.draft_weights_bytes)} of weights in "
            "its budget (issue #9995): keep gpu_memory_utilization low enough to leave room for them"
        )
    if dep.pp > 1 and not profile.draft_with_pipeline_parallel:
        found.add(
            f"{profile.engine_name} does not run draft-model speculative decoding with pipeline parallelism",
            stops_start=True,
        )


def _pair_problems(dep: Deployment, profile: EngineProfile, found: Findings) -> None:
    """The compatibility checks that stop the engine (planner.pairs.compatibility): vocabularies, draft TP, and a
    head whose geometry does not match the target's hidden states."""
    releases = engine_releases(dep.engine)
    verdict = check_pair(dep.target, dep.draft, engine=dep.engine, target_tp=dep.tp, draft_tp=dep.resolved_draft_tp)
    target_vocab, draft_vocab = dep.target.architecture.vocab_size, dep.draft.architecture.vocab_size
    vocab_rejected = (
        dep.speculative_method == DRAFT_METHOD and releases.rejects_unequal_vocab and target_vocab != draft_vocab
    )
    for check in verdict.checks:
        if check.status != "fail":
            continue
        if check.name in ("tokenizer", "vocab_size", "engine"):
            stops = check.name == "engine" or (check.name == "vocab_size" and vocab_rejected)
            found.add(f"{check.name}: {check.detail}", stops_start=stops)
            vocab_rejected = vocab_rejected and check.name != "vocab_size"
        elif check.name == "head_target":
            geometry = head_geometry_problem(dep.target, dep.draft)  # a head the engine cannot load at all
            found.add(f"{check.name}: {check.detail}", stops_start=geometry is not None)
    if vocab_rejected:
        rule = load_rules().engine(dep.engine)
        found.add(
            f"vocabulary: the target's vocab_size {target_vocab:,} differs from the draft's {draft_vocab:,} and "
            f"{profile.engine_name}'s draft loader rejects unequal sizes ({rule.vocab_size_detail})",
            stops_start=True,
        )
