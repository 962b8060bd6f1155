"""The acceptance α a deployment's speculator is assumed to reach: measured, published, or the prior.

One entry point for every command and page: a separate draft model or a head uses its pair's evidence and the
lineage/size prior (:func:`planner.pairs.acceptance_prior`); n-gram lookup and a target's MTP module use
:func:`planner.pairs.draft_free_acceptance` (n-gram by kind of task). The estimate says which source it used.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> base = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8)
>>> deployment_acceptance(base.with_draft(get_model("Llama-3.2-1B"))).source
'prior'
>>> deployment_acceptance(base.with_method("ngram"), task="grounded").alpha
0.754
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.errors import InputError
from planner.pairs.acceptance import AcceptanceEstimate, acceptance_prior
from planner.pairs.draft_free import draft_free_acceptance
from planner.speed.workload import SpeedWorkload


def deployment_acceptance(
    deployment: Deployment,
    *,
    measured_alpha: float | None = None,
    entered_alpha: float | None = None,
    task: str | None = None,
) -> AcceptanceEstimate:
    """α for ``deployment``'s speculator: the user's (``entered_alpha``), measured, published or prior.

    ``task`` picks the n-gram prompt kind (ignored otherwise).
    """
    method = deployment.speculative_method
    if method is None:
        raise InputError("draft", None, "a draft model, a head, --method mtp or --method ngram to speculate with")
    if deployment.draft is not None:
        return acceptance_prior(
            deployment.target, deployment.draft, measured_alpha=measured_alpha, entered_alpha=entered_alpha
        )
    return draft_free_acceptance(
        deployment.target,
        method,  # type: ignore[arg-type]
        task=task,
        measured_alpha=measured_alpha,
        entered_alpha=entered_alpha,
    )


ACCEPTANCE_FIELDS = ("alpha", "mean_accepted_len", "draft_acceptance_rate")


def workload_for(deployment: Deployment, *, task: str | None = None, **fields) -> tuple[SpeedWorkload, str, str]:
    """The workload every page, command and export estimates at, with where its α comes from.

    No acceptance figure given: α is the speculator's own (:func:`deployment_acceptance`: measured, published
    or the prior of its kind, n-gram and MTP included), never one α for every speculator. No ``k`` given: the
    deployment's K (the sidebar's, ``--num-speculative-tokens``; the same default for every kind), so the verdict is
    read at the K the user serves with and the optimal K is reported beside it. Returns (workload, source,
    detail).

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-l40s-48gb"), tp=1, method="ngram")
    >>> w, source, _ = workload_for(dep)
    >>> round(w.alpha, 2), w.k, source
    (0.2, 5, 'prior')
    """
    given = {name: fields.pop(name) for name in ACCEPTANCE_FIELDS if fields.get(name) is not None}
    for name in ACCEPTANCE_FIELDS:
        fields.pop(name, None)
    if given:
        source, detail = "entered", "your value"
    else:
        assumed = deployment_acceptance(deployment, task=task)
        given, source, detail = {"alpha": assumed.alpha}, assumed.source, assumed.detail
    workload = SpeedWorkload.build(**fields, **given)
    if workload.k is None:
        workload = workload.model_copy(update={"k": workload.resolved_k(deployment)})
    return workload, source, detail
