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
0.714
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.errors import InputError
from planner.pairs.acceptance import AcceptanceEstimate, acceptance_prior
from planner.pairs.draft_free import draft_free_acceptance


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
