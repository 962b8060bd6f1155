"""The decision matrix: every way to speculate for a target on a node, checked, sized, timed, ranked.

The candidates are the comparison teams make: separate draft models, the EAGLE / EAGLE-3 heads published
for the target, the target's own MTP module where its checkpoint has one, and draft-free n-gram lookup.
For each smaller catalog (or imported) model: the compatibility verdict and its ``Check`` objects
(:mod:`planner.pairs.compatibility`, carried by the row as they are), the draft's weights per GPU,
its share of the KV pool and the concurrency it costs (:mod:`planner.memory.plan`), the predicted
speedup at batch 1 and at the chosen batch, the optimal K and break-even α
(:mod:`planner.speed.estimate`) at the α of :func:`planner.pairs.acceptance.acceptance_prior`
(the user's α > measured > published > prior, each labelled). Compatible drafts that fit rank by predicted speedup at
the chosen batch; drafts that do not fit follow; incompatible ones sink to the bottom with the reason.

The matrix is a view of the design-space search (:mod:`planner.decisions.search`): its compatible candidates are the
search's speculators around the scenario's deployment (its node type, layout, precision, batch cap and K, its other
settings kept: ``SearchSpace.base``), each row's deployment, memory plan and α the search's for that point, so a
draft the matrix ranks is one Explore tries, planned the same way. The candidates the search leaves out (another
tokenizer, a release without the method) are listed with the check that fails, and their memory as the engine would
plan it.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> base = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8)
>>> matrix = decision_matrix(base, batch_size=8)
>>> matrix.rows[0].draft.startswith("meta-llama/Llama-3.2"), matrix.rows[-1].verdict
(True, 'incompatible')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from planner.catalog.schemas import ModelSpec, SpeculatorKind
from planner.catalog.speculators import mtp_layer_count, speculator_kind
from planner.decisions.candidates import candidate_drafts
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.space import NO_OBJECTIVES, SearchSpace, SearchWorkload
from planner.decisions.search.speculators import Speculator
from planner.defaults import SELECTION_BATCH_SIZE
from planner.deployment import Deployment
from planner.engines.releases import method_support
from planner.errors import InputError, PlannerError
from planner.memory.types import MemoryPlan
from planner.pairs.compatibility import check_pair
from planner.pairs.context import Check
from planner.pairs.size_ratio import param_count
from planner.speed.estimate import SpeedWorkload
from planner.speed.policy import speculation_rules
from planner.speed.step_cache import estimate_speed_cached, plan_memory_cached
from planner.units import GIB


class MatrixRow(BaseModel):
    rank: int = 0
    draft: str
    #: draft_model, eagle, eagle3, mtp or ngram.
    method: str = "draft_model"
    verdict: str
    #: Target over draft parameters (None for n-gram lookup, which has no model).
    parameter_ratio: float | None
    #: Every compatibility check of the pair, in the verdict's order, with its status, detail and sources.
    checks: list[Check]
    fits: bool
    #: The engine would start with it (nothing in the plan's ``start_problems``).
    starts: bool = True
    memory_problems: list[str]
    draft_weights_bytes_per_gpu: int | None = None
    draft_kv_share_frac: float | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    lost_concurrency: float | None = None
    alpha: float | None = None
    alpha_source: str | None = None
    alpha_detail: str | None = None
    speedup_batch_1: float | None = None
    speedup_at_batch: float | None = None
    optimal_k_at_batch: int | None = None
    break_even_alpha: float | None = None
    speed_verdict: str | None = None
    #: Why there is no speed estimate for a compatible draft that fits (the error's message).
    speed_problem: str | None = None
    why_lower: str = ""

    def check(self, name: str) -> Check:
        """The named check (tokenizer, vocab_size, lineage, parameter_ratio, engine)."""
        return next(c for c in self.checks if c.name == name)


class DecisionMatrix(BaseModel):
    target: str
    node: str
    engine: str
    tp: int
    batch_size: int
    alpha_override: float | None
    baseline_max_concurrency: float
    baseline_kv_cache_tokens: int
    rows: list[MatrixRow]
    assumptions: list[str]


@dataclass(frozen=True)
class _Load:
    """The load every candidate is timed at, and the concurrency of the target alone."""

    batch_size: int
    prompt_tokens: int
    output_tokens: int
    baseline_concurrency: float


@dataclass(frozen=True)
class _Found:
    """What the design-space search found for one speculator at the scenario's layout: its deployment and memory
    plan (or why it could not be planned), and the speculator with its α."""

    dep: Deployment | None
    plan: MemoryPlan | None
    problem: str | None
    speculator: Speculator


class _SearchView:
    """The design-space search around ``base`` (:class:`planner.decisions.search.SearchSpace` with ``base``): its
    node type and layout, precision, batch cap and K, every speculator; each point planned as the search plans it."""

    def __init__(self, base, extra, alpha, measured, draft_free, prompt_tokens, output_tokens) -> None:
        methods = ("none", "draft_model", "eagle", "eagle3") + (("mtp", "ngram") if draft_free else ())
        space = SearchSpace.build(
            target=base.target.id,
            nodes=(base.node_id or f"{base.gpu_count}x {base.gpu.id}",),
            engines=(base.engine,),
            methods=methods,
            ks=(base.num_speculative_tokens,),
            dtypes=(f"{base.target_format.id}:{base.kv_dtype}",),
            batch_caps=(base.max_num_seqs,) if base.max_num_seqs else None,
            tps=(base.tp,),
            entered_alpha=alpha,
            measured_alphas=measured,
            imported=tuple(extra),
            base=base,
        )
        workload = SearchWorkload(concurrency=1, prompt_tokens=prompt_tokens, output_tokens=output_tokens)
        self.evaluator = Evaluator(space, workload, NO_OBJECTIVES, view=True)
        self.found: dict[str, _Found] = {}
        self.plain: MemoryPlan | None = None
        for point in self.evaluator.points():
            found = self._found(point)
            if point.method == "none":
                self.plain = found.plan
            else:
                self.found[point.draft or point.method] = found

    def _found(self, point) -> _Found:
        ev = self.evaluator
        try:
            dep = ev.deployment(point)
            plan = ev.memory_plan(point, ev.plan_key(point))
        except PlannerError as exc:
            dep, plan, problem = None, None, str(exc)
        else:
            problem = None
        return _Found(dep, plan, problem, ev.speculator_of(point))


def _fill(row: MatrixRow, plan: MemoryPlan, load: _Load) -> None:
    """The candidate's memory figures from its plan."""
    row.fits, row.starts = plan.fits, plan.starts
    row.memory_problems = plan.problems
    row.draft_weights_bytes_per_gpu = plan.per_gpu.draft_weights_bytes
    row.draft_kv_share_frac = plan.draft_kv_share_frac
    row.kv_cache_tokens = plan.kv_cache_tokens
    row.max_concurrency = plan.max_concurrency
    row.lost_concurrency = round(load.baseline_concurrency - plan.max_concurrency, 2)


def _evaluate(row: MatrixRow, key: str, build: Callable[[], Deployment], view: _SearchView, load: _Load) -> MatrixRow:
    """A compatible candidate: the search's point for it, its memory, then its speed at its α. An incompatible one
    (the search does not try it): its memory alone, as the engine would plan it, to show what it would cost."""
    if row.verdict == "incompatible":
        try:
            _fill(row, plan_memory_cached(build()), load)
        except PlannerError as exc:
            row.memory_problems = [str(exc)]
        return row
    found = view.found.get(key)
    if found is None:
        row.memory_problems = ["the design-space search does not try this candidate on this layout"]
        return row
    if found.plan is None or found.dep is None:
        row.memory_problems = [found.problem or "no memory plan"]
        return row
    _fill(row, found.plan, load)
    return _time(row, found.dep, found, load)


def _row(base: Deployment, draft: ModelSpec, view: _SearchView, load: _Load) -> MatrixRow:
    """A separate draft model or a head: the pair's checks, then its memory and speed."""
    verdict = check_pair(base.target, draft, engine=base.engine, target_tp=base.tp)
    row = MatrixRow(
        draft=draft.id,
        method=speculator_kind(draft),
        verdict=verdict.verdict,
        parameter_ratio=verdict.parameter_ratio,
        checks=verdict.checks,
        fits=False,
        memory_problems=[],
    )
    return _evaluate(row, draft.id, lambda: base.with_draft(draft), view, load)


def _time(row: MatrixRow, dep: Deployment, found: _Found, load: _Load) -> MatrixRow:
    """Speedups at batch 1 and at the load's batch at the row's α, each at its optimal K.

    An MTP module drafts as many tokens as it has layers: its published α is for that K, and vLLM warns that
    reusing a layer for more tokens "may result in lower acceptance rate" (``vllm/config/speculative.py``).
    """
    speculator = found.speculator
    row.alpha, row.alpha_source, row.alpha_detail = speculator.alpha, speculator.alpha_source, speculator.alpha_detail
    fixed_k = mtp_layer_count(dep.target) if dep.speculative_method == "mtp" else None
    try:
        at_1, at_b = (
            estimate_speed_cached(
                dep,
                SpeedWorkload.build(
                    batch_size=batch,
                    alpha=speculator.alpha,
                    prompt_tokens=load.prompt_tokens,
                    output_tokens=load.output_tokens,
                    k=fixed_k,
                ),
            )
            for batch in (1, load.batch_size)
        )
    except PlannerError as exc:
        row.speed_problem = str(exc)
        return row
    row.speedup_batch_1 = at_1.speedup if fixed_k else at_1.speedup_at_optimal_k
    row.speedup_at_batch = at_b.speedup if fixed_k else at_b.speedup_at_optimal_k
    row.optimal_k_at_batch = fixed_k or at_b.optimal_k
    row.break_even_alpha = at_b.break_even_alpha
    # a candidate that does not fit or would not start gets no speed verdict (its speedups stay as figures)
    row.speed_verdict = at_b.verdict if row.fits and row.starts else "cannot_run"
    return row


def _draft_free_row(alone: Deployment, method: SpeculatorKind, view: _SearchView, load: _Load) -> MatrixRow:
    """n-gram lookup or the target's MTP module: no pair to check, only whether the engine release runs it."""
    support = method_support(alone.engine, alone.engine_version, method)
    release = alone.engine_version or "its newest profiled release"
    if support.supported:
        detail = f"{alone.engine} {release} runs {method}"
    else:
        since = f"; first in {support.first_release}" if support.first_release else ""
        detail = f"{alone.engine} {release} does not run speculative method {method}{since}"
    check = Check(
        name="engine", status="pass" if support.supported else "fail", detail=detail, evidence=[support.source]
    )
    dep = alone.with_method(method)
    row = MatrixRow(
        draft=dep.speculator_name,
        method=method,
        verdict="compatible" if support.supported else "incompatible",
        parameter_ratio=None
        if dep.speculator is None
        else param_count(alone.target).total_params / param_count(dep.speculator).total_params,
        checks=[check],
        fits=False,
        memory_problems=[],
    )
    return _evaluate(row, method, lambda: dep, view, load)


def _sort_key(row: MatrixRow) -> tuple:
    group = 2 if row.verdict == "incompatible" else (0 if row.fits else 1)
    return (group, -(row.speedup_at_batch or 0.0), row.draft)


def _first_sentence(text: str) -> str:
    return text.split(". ", maxsplit=1)[0].split("; ", maxsplit=1)[0].rstrip(".")


def _why_lower(row: MatrixRow, top: MatrixRow, batch_size: int) -> str:
    if row.verdict == "incompatible":
        failed = next((c for c in row.checks if c.status == "fail"), None)
        first = f"{failed.name}: {failed.detail}" if failed else ""
        return "incompatible — " + (_first_sentence(first) or "a check failed")
    if not row.fits:
        return "does not fit — " + (
            _first_sentence(row.memory_problems[0]) if row.memory_problems else "no KV cache left"
        )
    if row.speedup_at_batch is None:
        return "no speed estimate — " + (f"speed: {row.speed_problem}" if row.speed_problem else "")
    return (
        f"predicted {row.speedup_at_batch:.2f}x at batch {batch_size} vs {top.speedup_at_batch:.2f}x for "
        f"{top.draft} (α {row.alpha:.2f}, {row.alpha_source})"
    )


def decision_matrix(
    base: Deployment,
    *,
    batch_size: int = SELECTION_BATCH_SIZE,
    alpha: float | None = None,
    measured_alphas: Mapping[str, float] | None = None,
    extra_drafts: Iterable[ModelSpec] = (),
    prompt_tokens: int | None = None,
    output_tokens: int | None = None,
    draft_free: bool = True,
) -> DecisionMatrix:
    """Rank every candidate for ``base`` (its target, node, engine, precisions; its draft ignored).

    ``prompt_tokens`` and ``output_tokens`` default to the speed rules' default workload
    (``data/speculation_rules.json``), as the Performance page's estimate does.

    ``alpha`` assumes one acceptance for every learned candidate (draft models, heads, MTP; the user's value,
    labelled "entered"), n-gram lookup keeping its own;
    ``measured_alphas`` gives per-candidate measurements (labelled "measured"; keyed by draft id, or ``ngram`` /
    ``mtp``); ``draft_free`` adds n-gram lookup and the target's MTP module.
    """
    if batch_size < 1:
        raise InputError("batch_size", batch_size, "an integer >= 1")
    defaults = speculation_rules().default_workload
    prompt_tokens = defaults.prompt_tokens if prompt_tokens is None else prompt_tokens
    output_tokens = defaults.output_tokens if output_tokens is None else output_tokens
    alone = base.without_draft()
    measured = dict(measured_alphas or {})
    view = _SearchView(base, extra_drafts, alpha, measured, draft_free, prompt_tokens, output_tokens)
    baseline = view.plain if view.plain is not None else plan_memory_cached(alone)
    load = _Load(batch_size, prompt_tokens, output_tokens, baseline.max_concurrency)
    rows = [_row(alone, draft, view, load) for draft in candidate_drafts(base.target, extra_drafts)]
    if draft_free:
        methods: list[SpeculatorKind] = ["ngram"] + (["mtp"] if mtp_layer_count(base.target) else [])
        # one assumed α is a statement about learned drafts; n-gram lookup's α is a property of the prompts (how
        # much of the output repeats them), so it keeps its own evidence and never wins on an α it cannot reach
        rows += [_draft_free_row(alone, method, view, load) for method in methods]
    rows.sort(key=_sort_key)
    for rank, row in enumerate(rows, start=1):
        row.rank = rank
        if rank > 1:
            row.why_lower = _why_lower(row, rows[0], batch_size)
    return DecisionMatrix(
        target=base.target.id,
        node=base.node_id or f"{base.gpu_count}x {base.gpu.id}",
        engine=base.engine,
        tp=base.tp,
        batch_size=batch_size,
        alpha_override=alpha,
        baseline_max_concurrency=baseline.max_concurrency,
        baseline_kv_cache_tokens=baseline.kv_cache_tokens,
        rows=rows,
        assumptions=[
            "α per pair: your value when entered (for draft models, heads and MTP; n-gram lookup keeps its own), "
            "else a measurement, else a published measurement of the pair, "
            "else the prior fitted on published pairs of the same lineage and size ratio — each row says which",
            "n-gram lookup: α for open-ended prompts; prompts the output copies "
            "(summaries, code edits) accept far more — measure yours",
            f"speedups are at the optimal K for {prompt_tokens}-token prompts and {output_tokens}-token outputs",
            "drafts run at the target's TP where they can, else TP 1 (replicated on every rank)",
        ],
    )


def matrix_table(matrix: DecisionMatrix):
    """The matrix as a pandas DataFrame (units in column names), for the page, the CLI --csv and reports."""

    import pandas as pd  # noqa: PLC0415 (only the table needs pandas; ranking does not)

    return pd.DataFrame(
        [
            {
                "rank": r.rank,
                "draft": r.draft,
                "method": r.method,
                "verdict": r.verdict,
                "ratio (x)": None if r.parameter_ratio is None else round(r.parameter_ratio, 1),
                **{f"check {c.name}": c.status for c in r.checks},
                "fits": r.fits,
                "draft weights / GPU (GiB)": None
                if r.draft_weights_bytes_per_gpu is None
                else r.draft_weights_bytes_per_gpu / GIB,
                "draft KV share (%)": None if r.draft_kv_share_frac is None else 100 * r.draft_kv_share_frac,
                "lost concurrency": r.lost_concurrency,
                "α": r.alpha,
                "α source": r.alpha_source,
                "speedup @ batch 1": r.speedup_batch_1,
                f"speedup @ batch {matrix.batch_size}": r.speedup_at_batch,
                "optimal K": r.optimal_k_at_batch,
                "break-even α": r.break_even_alpha,
                "speed verdict": r.speed_verdict,
                "why lower": r.why_lower,
            }
            for r in matrix.rows
        ]
    )
