"""The rules the speed model applies: verdict thresholds, the K search range, the default workload.

They are the planner's default policy: they live in ``data/speculation_rules.json`` with their public
rationale (docs/speculation-policy.md), can be edited there, and every estimate states them, so a
reader sees why a draft was recommended or turned off.

>>> rules = speculation_rules()
>>> rules.verdict.recommend_min_speedup, rules.verdict.disable_below_alpha, rules.k_search.max_k
(1.3, 0.55, 16)
>>> rules.verdict.decide(alpha=0.8, speedup_at_optimal_k=2.0)[0]
'recommend'
>>> rules.verdict.decide(alpha=0.5, speedup_at_optimal_k=2.0)[0]
'disable'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.errors import CatalogError, first_pydantic_error
from planner.facts import data_cache, read_data_file

RULES_FILE = "speculation_rules.json"
Verdict = Literal["recommend", "enable", "disable"]


class VerdictRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    recommend_min_speedup: float = Field(gt=1)
    recommend_min_alpha: float = Field(ge=0, le=1)
    enable_min_speedup: float = Field(ge=1)
    disable_below_alpha: float = Field(ge=0, le=1)
    source: str = Field(min_length=1)

    def decide(self, *, alpha: float, speedup_at_optimal_k: float) -> tuple[Verdict, str]:
        """The verdict and its reason, thresholds named."""
        if alpha < self.disable_below_alpha:
            return "disable", (
                f"α = {alpha:.3f} is below {self.disable_below_alpha} "
                "(the planner's default policy disables speculation below this acceptance)"
            )
        if speedup_at_optimal_k >= self.recommend_min_speedup and alpha >= self.recommend_min_alpha:
            return "recommend", (
                f"speedup {speedup_at_optimal_k:.2f} ≥ {self.recommend_min_speedup} at the optimal K "
                f"and α = {alpha:.3f} ≥ {self.recommend_min_alpha}"
            )
        if speedup_at_optimal_k > self.enable_min_speedup:
            return "enable", (
                f"speedup {speedup_at_optimal_k:.2f} > {self.enable_min_speedup} at the optimal K, "
                f"short of recommend (speedup ≥ {self.recommend_min_speedup} and α ≥ {self.recommend_min_alpha})"
            )
        return "disable", f"speedup {speedup_at_optimal_k:.2f} ≤ {self.enable_min_speedup} even at the optimal K"

    def as_dict(self) -> dict[str, float]:
        return self.model_dump(exclude={"source"})


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


class SpeculationRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    verdict: VerdictRules
    k_search: KSearch
    default_workload: DefaultWorkload


@data_cache
def speculation_rules() -> SpeculationRules:
    try:
        return SpeculationRules.model_validate(read_data_file(RULES_FILE))
    except ValidationError as exc:
        raise CatalogError(f"{RULES_FILE}: {first_pydantic_error(exc)}") from exc
