"""Acceptance α of a draft/target pair: the user's, measured, published, or the acceptance prior, in that order.

* ``entered``: an α the user typed (one value for every pair, shown as "your value"), taken as given;
* ``measured``: an α measured for this pair (planner/measure), taken as given;
* ``published``: the median α of the published measurements of this very pair in
  ``data/pair_evidence.json`` whose acceptance converts to α (τ or ρ with K, via
  :mod:`planner.acceptance_math`);
* ``prior``: ``data/acceptance_priors.json`` by lineage relation (:mod:`planner.pairs.lineage`) and
  parameter ratio r: ``α(r) = α_10 − slope · log10(r / 10)``, clipped to the observed range. The
  file states how each number was fitted; :func:`refit_priors` redoes the fit and
  ``python -m bench.acceptance_priors`` prints its error against every observation.

The published rows live in :mod:`planner.pairs.evidence`; this module holds the prior (its data file,
its fit) and :func:`acceptance_prior`, which picks the α a prediction uses. Both files are read lazily,
once, and validated by pydantic.

>>> from planner.catalog.lookup import get_model
>>> est = acceptance_prior(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"))
>>> est.source, round(est.alpha, 2)
('published', 0.92)
>>> est = acceptance_prior(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
>>> est.source, est.relation, round(est.alpha, 2)
('prior', 'distilled', 0.84)
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.acceptance_math import alpha_from_tau, check_alpha
from planner.catalog.lookup import get_model
from planner.catalog.schemas import ModelSpec
from planner.defaults import ACCEPTANCE_ALPHA
from planner.facts import data_cache, load_model
from planner.pairs.evidence import evidence_ratios, load_pair_evidence, published_evidence
from planner.pairs.lineage import RELATIONS, Relation, lineage_relation
from planner.pairs.size_ratio import param_count, parameter_ratio

#: The ratio at which each relation's prior intercept is stated.
REFERENCE_RATIO = 10.0


class PriorObservation(BaseModel):
    """An α observation the prior is fitted on: α directly, or τ with K; sizes given or from the catalog."""

    model_config = ConfigDict(extra="forbid")

    label: str
    relation: Relation
    sweep: str | None = None
    alpha: float | None = Field(default=None, ge=0, le=1)
    tau: float | None = Field(default=None, ge=1)
    k: int | None = Field(default=None, ge=1)
    k_note: str | None = None
    target_params: float | None = Field(default=None, gt=0)
    draft_params: float | None = Field(default=None, gt=0)
    target_model: str | None = None
    draft_model: str | None = None
    params_source: str
    temperature: float | None = None
    task: str
    source: str = Field(min_length=1)
    reliability: Literal["reported", "computed", "unverified"]

    @model_validator(mode="after")
    def _complete(self) -> PriorObservation:
        if self.alpha is None and (self.tau is None or self.k is None):
            raise ValueError("an observation needs alpha, or tau with k")
        if (self.target_params is None) == (self.target_model is None):
            raise ValueError("give exactly one of target_params or target_model")
        if (self.draft_params is None) == (self.draft_model is None):
            raise ValueError("give exactly one of draft_params or draft_model")
        return self

    @property
    def resolved_alpha(self) -> float:
        return self.alpha if self.alpha is not None else alpha_from_tau(self.tau, self.k)  # type: ignore[arg-type]

    @property
    def ratio(self) -> float:
        def size(params: float | None, model: str | None) -> float:
            return params if params is not None else param_count(get_model(model)).total_params  # type: ignore[arg-type]

        return size(self.target_params, self.target_model) / size(self.draft_params, self.draft_model)


class PriorRelation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Relation
    alpha_at_ratio_10: float = Field(ge=0, le=1)
    slope_applies: bool
    basis: Literal["fit", "assumption"]
    derivation: str
    source: list[str] = Field(min_length=1)


class AcceptancePriors(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    formula: str
    slope_per_decade: float = Field(ge=0)
    slope_derivation: str
    alpha_min: float = Field(ge=0, le=1)
    alpha_max: float = Field(ge=0, le=1)
    clip_derivation: str
    relations: list[PriorRelation]
    observations: list[PriorObservation] = Field(min_length=1)

    @model_validator(mode="after")
    def _every_relation(self) -> AcceptancePriors:
        missing = set(RELATIONS) - {r.id for r in self.relations}
        if missing:
            raise ValueError(f"relations lack {sorted(missing)}")
        return self

    def relation(self, relation: Relation) -> PriorRelation:
        return next(r for r in self.relations if r.id == relation)


class AcceptanceEstimate(BaseModel):
    """The α a prediction uses, where it came from, and a sentence saying so."""

    alpha: float = Field(ge=0, le=1)
    source: Literal["entered", "measured", "published", "prior"]
    detail: str
    relation: Relation | None = None
    parameter_ratio: float | None = None
    #: For a prior: "fit" (fitted to observations) or "assumption" (no observation of the relation).
    basis: str | None = None
    #: How the prior's numbers were obtained (from the data file).
    derivation: str | None = None
    evidence: list[str] = []


@data_cache
def load_acceptance_priors() -> AcceptancePriors:
    return load_model("acceptance_priors.json", AcceptancePriors)

    evidence_ratios.cache_clear()


def prior_alpha(relation: Relation, ratio: float) -> float:
    """The documented prior α for a relation at parameter ratio ``ratio`` (clipped)."""
    priors = load_acceptance_priors()
    rel = priors.relation(relation)
    alpha = rel.alpha_at_ratio_10
    if rel.slope_applies:
        alpha -= priors.slope_per_decade * math.log10(ratio / REFERENCE_RATIO)
    return min(max(alpha, priors.alpha_min), priors.alpha_max)


class PriorFit(BaseModel):
    """The prior's parameters redone from the observations (see data/acceptance_priors.json)."""

    slope_per_decade: float
    sweep_slopes: dict[str, float]
    alpha_at_ratio_10: dict[str, float]
    alpha_min: float
    alpha_max: float
    #: (label, relation, ratio, observed α) of every point the fit used.
    points: list[tuple[str, str, float, float]]


def _least_squares_slope(points: list[tuple[float, float]]) -> float:
    xs = [math.log10(r) for r, _ in points]
    ys = [a for _, a in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum((x - mean_x) ** 2 for x in xs)


def fit_points() -> list[tuple[str, str, float, float]]:
    """Every (label, relation, ratio, α) the prior rests on: its observations plus convertible evidence of
    separate draft models (a head's acceptance says nothing about a draft model's, so head rows stay out)."""
    points = [(o.label, o.relation, o.ratio, o.resolved_alpha) for o in load_acceptance_priors().observations]
    for row in load_pair_evidence():
        if row.alpha is not None:
            target, draft = get_model(row.target), get_model(row.draft)
            if draft.speculator is not None:
                continue
            label = f"{row.target_measured} + {row.draft_measured}, {row.task}"
            points.append((label, lineage_relation(target, draft), parameter_ratio(target, draft), row.alpha))
    return points


def refit_priors() -> PriorFit:
    """Redo the fit the data file documents: median sweep slope, per-relation median intercept."""
    priors = load_acceptance_priors()
    sweeps: dict[str, list[tuple[float, float]]] = {}
    for obs in priors.observations:
        if obs.sweep:
            sweeps.setdefault(obs.sweep, []).append((obs.ratio, obs.resolved_alpha))
    slopes = {name: _least_squares_slope(pts) for name, pts in sweeps.items() if len(pts) >= 2}
    slope = -statistics.median(slopes.values())
    points = fit_points()
    intercepts = {
        relation: statistics.median(
            a + slope * math.log10(r / REFERENCE_RATIO) for _, rel, r, a in points if rel == relation
        )
        for relation in RELATIONS
        if any(rel == relation for _, rel, _, _ in points)
    }
    alphas = [a for *_, a in points]
    return PriorFit(
        slope_per_decade=slope,
        sweep_slopes=slopes,
        alpha_at_ratio_10=intercepts,
        alpha_min=min(alphas),
        alpha_max=max(alphas),
        points=points,
    )


def acceptance_prior(
    target: ModelSpec,
    draft: ModelSpec,
    *,
    measured_alpha: float | None = None,
    entered_alpha: float | None = None,
) -> AcceptanceEstimate:
    """The α to assume for ``draft`` speculating for ``target``: the user's, measured, published, or prior.

    ``entered_alpha`` is a value the user typed (source "entered", never "measured"); ``measured_alpha``
    one measured for this pair.
    """
    ratio = parameter_ratio(target, draft)
    relation = lineage_relation(target, draft)
    if entered_alpha is not None:
        alpha = check_alpha(entered_alpha, "alpha")
        return AcceptanceEstimate(
            alpha=alpha,
            source="entered",
            detail=f"α = {alpha:.3f}, your value (typed in, used for this pair as given)",
            relation=relation,
            parameter_ratio=ratio,
        )
    if measured_alpha is not None:
        alpha = check_alpha(measured_alpha, "measured_alpha")
        return AcceptanceEstimate(
            alpha=alpha,
            source="measured",
            detail=f"α = {alpha:.3f} as measured for this pair",
            relation=relation,
            parameter_ratio=ratio,
        )
    rows = [e for e in published_evidence(target, draft) if e.alpha is not None]
    if not rows and draft.is_head:
        return _head_assumption(target, draft, ratio, relation)
    if rows:
        alphas = [e.alpha for e in rows]
        alpha = statistics.median(alphas)  # type: ignore[type-var]
        listed = "; ".join(f"α {e.alpha:.3f} from {e.describe()}" for e in rows[:2])
        if len(rows) > 2:
            listed += f"; and {len(rows) - 2} more"
        return AcceptanceEstimate(
            alpha=alpha,
            source="published",
            detail=f"median α of {len(rows)} published measurement(s) of this pair: {listed}",
            relation=relation,
            parameter_ratio=ratio,
            evidence=sorted({e.source for e in rows}),
        )
    priors = load_acceptance_priors()
    rel = priors.relation(relation)
    alpha = prior_alpha(relation, ratio)
    how = "at its size ratio" if rel.slope_applies else "the same at every size ratio"
    return AcceptanceEstimate(
        alpha=alpha,
        source="prior",
        detail=(
            f"assumed α = {alpha:.2f} ({rel.basis}): no measurement of this pair, so the prior fitted on published "
            f"{relation.replace('_', ' ')} pairs, {how} ({ratio:.1f}x fewer parameters); measure the pair to "
            "replace it"
        ),
        relation=relation,
        parameter_ratio=ratio,
        basis=rel.basis,
        derivation=rel.derivation,
        evidence=rel.source,
    )


def head_prior_alphas(kind: str) -> list[float]:
    """α of every published measurement of a head of ``kind`` (the evidence the head prior rests on)."""
    alphas = []
    for row in load_pair_evidence():
        draft = get_model(row.draft)
        if row.alpha is not None and draft.speculator is not None and draft.speculator.kind == kind:
            alphas.append(row.alpha)
    return alphas


def _head_assumption(target: ModelSpec, head: ModelSpec, ratio: float, relation: Relation) -> AcceptanceEstimate:
    """A head without a published α of its own: the median α published for heads of its kind, else the default.

    The draft-model prior is fitted on separate draft models by parameter ratio and lineage; neither describes a
    head (one layer reading the target's own hidden states), so heads have their own: the median of the published
    measurements of other heads of the same kind (``data/pair_evidence.json``), stated as an assumption.
    """
    kind = head.speculator.kind
    alphas = head_prior_alphas(kind)
    if alphas:
        alpha = statistics.median(alphas)
        return AcceptanceEstimate(
            alpha=alpha,
            source="prior",
            detail=(
                f"assumed α = {alpha:.2f}: no published acceptance of {head.short_name} with {target.short_name}, "
                f"so the median of {len(alphas)} published measurement(s) of {kind} heads in the planner's catalog; "
                "measure the pair to replace it"
            ),
            relation=relation,
            parameter_ratio=ratio,
            basis="fit",
        )
    return AcceptanceEstimate(
        alpha=ACCEPTANCE_ALPHA,
        source="prior",
        detail=(
            f"assumed α = {ACCEPTANCE_ALPHA:.2f} (the planner's default): no published acceptance of a {kind} head "
            "in the planner's catalog, and the draft-model prior (fitted on separate draft models by parameter "
            "ratio) does not apply to heads; measure the pair to replace it"
        ),
        relation=relation,
        parameter_ratio=ratio,
        basis="assumption",
    )
