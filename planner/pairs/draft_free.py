"""Acceptance of the methods without a separate draft model: n-gram lookup (by kind of task) and a target's MTP.

n-gram lookup accepts a token when the prompt already contains the continuation, so its α depends on the task,
not on a model pair: ``data/draft_free_acceptance.json`` holds one α per kind of task, each inverted from a
published end-to-end speedup with the planner's speed model (``python -m bench.fit_draft_free_acceptance``).
An MTP module's α is what the model's authors report for it (DeepSeek-V3: 85-90% for the second token).

>>> from planner.catalog.lookup import get_model
>>> est = draft_free_acceptance(get_model("Llama-3.1-70B"), "ngram")
>>> est.source, est.alpha, est.basis
('prior', 0.197, 'fit')
>>> draft_free_acceptance(get_model("Llama-3.1-70B"), "ngram", task="grounded").alpha
0.754
>>> draft_free_acceptance(get_model("DeepSeek-V3"), "mtp").source
'published'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.acceptance_math import check_alpha
from planner.catalog.schemas import ModelSpec
from planner.errors import InputError
from planner.facts import data_cache, load_model
from planner.pairs.acceptance import AcceptanceEstimate

DraftFreeMethod = Literal["ngram", "mtp"]
SpeedupMetric = Literal["served", "tpot"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NgramFit(_Strict):
    """The published case an n-gram α is inverted from (the planner predicts ``speedup`` at this α)."""

    target: str
    gpu: str
    tp: int = Field(ge=1)
    k: int = Field(ge=1)
    batch_size: int = Field(ge=1)
    prompt_tokens: int = Field(ge=1)
    output_tokens: int = Field(ge=1)
    speedup: float = Field(gt=0)
    #: What the published speedup compares: requests served (end-to-end latency, throughput) or TPOT.
    metric: SpeedupMetric = "served"


class NgramTask(_Strict):
    task: str
    label: str
    alpha: float = Field(ge=0, le=1)
    fit: NgramFit
    derivation: str
    source: str = Field(min_length=1)


class NgramAcceptance(_Strict):
    default_task: str
    tasks: tuple[NgramTask, ...] = Field(min_length=1)

    def task(self, name: str | None) -> NgramTask:
        wanted = name or self.default_task
        for task in self.tasks:
            if task.task == wanted:
                return task
        raise InputError("task", name, f"one of {', '.join(t.task for t in self.tasks)}")


class MtpAcceptance(_Strict):
    target: str
    alpha: float = Field(ge=0, le=1)
    k: int = Field(ge=1)
    derivation: str
    source: str = Field(min_length=1)


class DraftFreeAcceptance(_Strict):
    description: str
    ngram: NgramAcceptance
    mtp: tuple[MtpAcceptance, ...]


@data_cache
def load_draft_free_acceptance() -> DraftFreeAcceptance:
    return load_model("draft_free_acceptance.json", DraftFreeAcceptance)


def draft_free_acceptance(
    target: ModelSpec,
    method: DraftFreeMethod,
    *,
    task: str | None = None,
    measured_alpha: float | None = None,
    entered_alpha: float | None = None,
) -> AcceptanceEstimate:
    """The α to assume for ``method`` on ``target``: the user's, measured, else the published MTP α or the
    n-gram task α."""
    if entered_alpha is not None:
        alpha = check_alpha(entered_alpha, "alpha")
        return AcceptanceEstimate(alpha=alpha, source="entered", detail=f"α = {alpha:.3f}, your value (as given)")
    if measured_alpha is not None:
        alpha = check_alpha(measured_alpha, "measured_alpha")
        return AcceptanceEstimate(alpha=alpha, source="measured", detail=f"α = {alpha:.3f} as measured")
    facts = load_draft_free_acceptance()
    if method == "ngram":
        found = facts.ngram.task(task)
        return AcceptanceEstimate(
            alpha=found.alpha,
            source="prior",
            basis="fit",
            detail=(
                f"assumed α = {found.alpha:.2f} for n-gram lookup on {found.label}: it depends on how much of the "
                "output repeats the prompt, so measure it on your prompts to replace it"
            ),
            derivation=found.derivation,
            evidence=[found.source],
        )
    if method == "mtp":
        row = next((m for m in facts.mtp if m.target == target.id), None)
        if row is None:
            raise InputError(
                "alpha", None, f"a measured acceptance for {target.short_name}'s MTP module (none is published)"
            )
        return AcceptanceEstimate(
            alpha=row.alpha,
            source="published",
            detail=f"α = {row.alpha:.2f} published for {target.short_name}'s MTP module: {row.derivation}",
            evidence=[row.source],
        )
    raise InputError("method", method, "ngram or mtp")
