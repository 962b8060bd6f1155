"""The ways to speculate a search tries for one target on one engine, each with its assumed acceptance α.

Separate draft models are the catalog's smaller models (``planner.decisions.selection.candidate_drafts``)
that :func:`planner.pairs.check_pair` does not call incompatible; heads (EAGLE, EAGLE-3) are those the
catalog lists as trained for the target; MTP runs the target's own layers where its checkpoint has them;
n-gram lookup needs no model. A draft-free method is tried only where the engine's release runs it
(:func:`planner.engines.releases.method_support`). α is the user's where given (``AlphaGiven``: one for every
speculator, one for the learned ones, measurements by speculator), else
:func:`planner.speed.deployment_acceptance`'s (measured, published or the lineage/size prior).

>>> from planner.catalog.lookup import get_model, get_gpu
>>> found = speculators(get_model("Llama-3.1-8B"), "vllm", ("ngram",))
>>> [(s.method, s.label) for s in found], 0 < found[0].alpha < 1
([('ngram', 'n-gram lookup')], True)
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.lookup import get_gpu, list_speculators
from planner.catalog.schemas import ModelSpec
from planner.catalog.speculators import mtp_layer_count, speculator_kind
from planner.decisions.candidates import candidate_drafts
from planner.deployment import Deployment
from planner.engines.releases import method_support
from planner.pairs.compatibility import check_pair, rejects
from planner.speed.deployment_acceptance import deployment_acceptance


@dataclass(frozen=True)
class Speculator:
    """One way to propose tokens: ``method`` and the draft model or head (None for n-gram and MTP)."""

    method: str
    draft: ModelSpec | None
    alpha: float
    alpha_source: str
    #: Where α comes from in a sentence (the pair's measurement, publication or prior).
    alpha_detail: str = ""

    @property
    def draft_id(self) -> str | None:
        return None if self.draft is None else self.draft.id

    @property
    def label(self) -> str:
        if self.draft is not None:
            return self.draft.id
        return {"mtp": "MTP layers", "ngram": "n-gram lookup", "none": "no speculation"}[self.method]

    def deployment_fields(self) -> dict:
        """The Deployment keywords that select this speculator."""
        if self.method == "none":
            return {}
        if self.draft is not None:
            return {"draft": self.draft}
        return {"method": self.method}


NO_SPECULATION = Speculator(method="none", draft=None, alpha=0.0, alpha_source="")


@dataclass(frozen=True)
class AlphaGiven:
    """The acceptance a user gave: one for every speculator (``every``), one for the learned ones (``learned``:
    draft models, heads, MTP; n-gram lookup keeps its own, a property of the prompts), and measurements by
    speculator (a draft's id, ``ngram`` or ``mtp``)."""

    every: float | None = None
    learned: float | None = None
    measured: tuple[tuple[str, float], ...] = ()


def _speculator(target: ModelSpec, method: str, draft: ModelSpec | None, given: AlphaGiven) -> Speculator:
    """The speculator with its α: the user's when given ("entered"), else as :func:`deployment_acceptance` gives
    it: measured, published or the prior (it depends on the pair, not on the GPUs)."""
    fields = {"draft": draft} if draft is not None else {"method": method}
    if given.every is not None:
        return Speculator(method, draft, given.every, "entered", "your value")
    probe = Deployment.build(target=target, gpu=get_gpu("h100-sxm-80gb"), **fields)
    estimate = deployment_acceptance(
        probe,
        measured_alpha=dict(given.measured).get(draft.id if draft is not None else method),
        entered_alpha=None if method == "ngram" else given.learned,
    )
    return Speculator(method, draft, estimate.alpha, estimate.source, estimate.detail)


def speculators(
    target: ModelSpec,
    engine: str,
    methods: tuple[str, ...],
    *,
    drafts: tuple[str, ...] | None = None,
    extra: tuple[ModelSpec, ...] = (),
    alpha: AlphaGiven | None = None,
    engine_version: str | None = None,
    target_tp: int = 1,
) -> list[Speculator]:
    """Every speculator of ``methods`` (``none`` first when asked) that ``engine`` (at ``engine_version``, None: its
    newest profiled release) can run for ``target`` at ``target_tp``: only the draft models and heads of ``drafts``
    where given (by id; ``extra``: models the catalog does not have), each at the α given where given."""
    out: list[Speculator] = [NO_SPECULATION] if "none" in methods else []
    given = alpha or AlphaGiven()

    def wanted(d: ModelSpec) -> bool:
        return drafts is None or d.id in drafts

    models = []
    if "draft_model" in methods:
        # a model the engine would reject (another tokenizer, say) is left out before its size is counted
        models += candidate_drafts(
            target,
            extra,
            keep=lambda d: d.speculator is None and wanted(d) and not rejects(target, d, engine=engine),
        )
    heads = [
        h
        for h in [*list_speculators(), *(m for m in extra if m.speculator is not None)]
        if target.id in h.speculator.targets and h.speculator.kind in methods and wanted(h)
    ]
    for draft in {d.id: d for d in [*models, *heads]}.values():
        if check_pair(target, draft, engine=engine, target_tp=target_tp).verdict == "incompatible":
            continue
        out.append(_speculator(target, speculator_kind(draft), draft, given))
    for method in ("mtp", "ngram"):
        if method not in methods or (method == "mtp" and not mtp_layer_count(target)):
            continue
        if not method_support(engine, engine_version, method).supported:
            continue
        out.append(_speculator(target, method, None, given))
    return out


def why_not_tried(target: ModelSpec, engine: str, draft: ModelSpec | None, method: str | None) -> str:
    """Why :func:`speculators` leaves out ``draft`` (or the draft-free ``method``) for ``target`` on ``engine``, in
    words: the engine rejects the pair, a check calls it incompatible, it is not smaller than the target, or the
    engine's release does not run the method."""
    if draft is None:
        if method == "mtp" and not mtp_layer_count(target):
            return f"{target.short_name} has no MTP layers"
        support = method_support(engine, None, method or "ngram")
        since = f" (first in {support.first_release})" if support.first_release else ""
        return f"{engine} does not run speculative method {method}{since}"
    verdict = check_pair(target, draft, engine=engine)
    failed = next((c for c in verdict.checks if c.status == "fail"), None)
    if verdict.verdict == "incompatible":
        return f"{draft.id} is incompatible with {target.short_name}" + (f": {failed.detail}" if failed else "")
    if draft.speculator is not None:
        return f"{draft.id} is a head trained for {', '.join(draft.speculator.targets)}, not for {target.id}"
    return f"{draft.id} is not smaller than {target.short_name}: a draft must have fewer parameters"
