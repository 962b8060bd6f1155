"""The rules the speed model applies: verdict thresholds, acceptance advisories, the K search range, defaults.

They are the planner's default policy: they live in ``data/speculation_rules.json`` with their public
rationale (docs/speculation-policy.md), can be edited there, and every estimate states them. The verdict
follows the predicted speedup at the user's load and K; the acceptance levels (55% and 65% per-token
acceptance) only add advisory warnings, stated in the convention the user gave (α, τ or ρ) with the
conversion shown.

>>> rules = speculation_rules()
>>> rules.verdict.recommend_min_speedup, rules.advisory.warn_below_alpha, rules.k_search.max_k
(1.3, 0.55, 16)
>>> rules.verdict.decide(speedup=1.7, k=4, at="batch 1")[0], rules.verdict.decide(speedup=0.9, k=4, at="batch 1")[0]
('recommend', 'disable')
>>> rules.advisory.warnings(alpha=0.5, k=4, convention="draft_acceptance_rate")[0][:50]
'ρ = 0.234 (α = 0.500) is below ρ = 0.278 at K = 4 '
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.acceptance_math import draft_acceptance_rate, expected_tokens_per_step
from planner.errors import CatalogError, first_pydantic_error
from planner.facts import data_cache, read_data_file

RULES_FILE = "speculation_rules.json"
#: ``cannot_run``: the workload cannot run on the deployment (planner.speed.runnable), so no speed verdict is given.
Verdict = Literal["recommend", "enable", "disable", "cannot_run"]


class VerdictRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    recommend_min_speedup: float = Field(gt=1)
    enable_min_speedup: float = Field(ge=1)
    source: str = Field(min_length=1)

    def decide(self, *, speedup: float, k: int, at: str) -> tuple[Verdict, str]:
        """The verdict from the predicted ``speedup`` at draft length ``k`` and the load ``at``."""
        where = f"at K = {k} and {at}"
        if speedup >= self.recommend_min_speedup:
            return "recommend", f"predicted speedup {speedup:.2f} ≥ {self.recommend_min_speedup} {where}"
        if speedup > self.enable_min_speedup:
            return "enable", (
                f"predicted speedup {speedup:.2f} > {self.enable_min_speedup} {where}, "
                f"short of {self.recommend_min_speedup} for recommend"
            )
        return "disable", f"predicted speedup {speedup:.2f} ≤ {self.enable_min_speedup} {where}"

    def as_dict(self) -> dict[str, float]:
        return self.model_dump(exclude={"source"})


_SYMBOL = {"alpha": "α", "mean_accepted_len": "τ", "draft_acceptance_rate": "ρ"}


class AdvisoryRules(BaseModel):
    """Acceptance levels that warn, never decide: below ``warn_below_alpha`` drafts rarely pay."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    warn_below_alpha: float = Field(ge=0, le=1)
    aim_above_alpha: float = Field(ge=0, le=1)
    source: str = Field(min_length=1)

    def as_dict(self) -> dict[str, float]:
        return self.model_dump(exclude={"source"})

    def warnings(self, *, alpha: float, k: int, convention: str) -> list[str]:
        """Advisories for ``alpha`` at ``k``, in the user's ``convention`` with the conversion shown."""
        notes = []
        for level, words in (
            (self.warn_below_alpha, "drafts below it rarely pay"),
            (self.aim_above_alpha, "aim above it"),
        ):
            if alpha >= level:
                continue
            symbol = _SYMBOL[convention]
            value, threshold = _in_convention(alpha, k, convention), _in_convention(level, k, convention)
            conversion = {
                "alpha": "",
                "mean_accepted_len": "; τ = (1 − α^(K+1)) / (1 − α)",
                "draft_acceptance_rate": "; ρ = (τ − 1) / K with τ = (1 − α^(K+1)) / (1 − α)",
            }[convention]
            shown = "" if convention == "alpha" else f" (α = {alpha:.3f})"
            notes.append(
                f"{symbol} = {value:.3f}{shown} is below {symbol} = {threshold:.3f} at K = {k} "
                f"(α = {level}{conversion}): {words}; the verdict follows the predicted speedup"
            )
            break
        return notes


def _in_convention(alpha: float, k: int, convention: str) -> float:
    if convention == "alpha":
        return alpha
    if convention == "mean_accepted_len":
        return expected_tokens_per_step(alpha, k)
    return draft_acceptance_rate(alpha, k)


class KSearch(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_k: int = Field(ge=1)
    max_k: int = Field(ge=1, le=64)
    source: str = Field(min_length=1)

    @property
    def ks(self) -> range:
        return range(self.min_k, self.max_k + 1)


class DefaultWorkload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    batch_size: int = Field(ge=1)
    prompt_tokens: int = Field(ge=1)
    output_tokens: int = Field(ge=1)
    source: str = Field(min_length=1)


class TreeDefaults(BaseModel):
    """The draft tree a tree-verifying engine builds by default: depth, branching and the verify budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    depth: int = Field(ge=1)
    topk: int = Field(ge=1)
    verify_tokens: int = Field(ge=2)
    source: str = Field(min_length=1)


class SpeculationRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    verdict: VerdictRules
    advisory: AdvisoryRules
    k_search: KSearch
    default_workload: DefaultWorkload
    tree: TreeDefaults


@data_cache
def speculation_rules() -> SpeculationRules:
    try:
        return SpeculationRules.model_validate(read_data_file(RULES_FILE))
    except ValidationError as exc:
        raise CatalogError(f"{RULES_FILE}: {first_pydantic_error(exc)}") from exc
