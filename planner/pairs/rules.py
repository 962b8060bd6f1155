"""The rules the compatibility checks apply, loaded from ``data/compatibility_rules.json``.

Thresholds of the parameter-ratio check and what each serving engine enforces on a draft model
(vocabulary, tokenizer, draft TP, context), each with its source; read lazily, once, and validated.

>>> rules = load_rules()
>>> rules.parameter_ratio.band_low, rules.parameter_ratio.band_high, rules.engine("vllm").draft_tp_rule
(10.0, 50.0, 'equal')
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.errors import InputError
from planner.facts import data_cache, load_model


class RatioRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    band_low: float = Field(gt=0)
    band_high: float = Field(gt=0)
    fail_below: float = Field(gt=0)
    fail_above: float = Field(gt=0)
    measured_pair_overrides_fail: bool
    rationale: str
    source: list[str] = Field(min_length=1)


class EngineRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    vocab_size_rule: Literal["equal", "decides_tokenizer"]
    vocab_size_detail: str
    different_tokenizer: Literal["reject", "universal_assisted_generation"]
    heterogeneous_option: str | None
    draft_tp_rule: Literal["equal", "one_or_equal", "any"]
    draft_tp_detail: str
    context_detail: str
    #: The engine's own refusal of a draft (or head) whose attention heads do not split over its TP
    #: (``{heads}``, ``{tp}``), and where it is raised.
    heads_over_tp_message: str | None = None
    heads_over_tp_source: str | None = None
    #: What the engine does with an EAGLE head over another vocabulary than the target's (None: not recorded).
    head_vocab_detail: str | None = None
    source: list[str] = Field(min_length=1)


class Workaround(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    source: str


class OtherRuntime(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    vocab_rule: str
    accepts_padding_only: bool
    source: str


class CompatibilityRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    parameter_ratio: RatioRules
    padding_workarounds: list[Workaround]
    other_runtimes: list[OtherRuntime]
    engines: list[EngineRule]

    def engine(self, engine: str) -> EngineRule:
        for rule in self.engines:
            if rule.id == engine:
                return rule
        raise InputError("engine", engine, f"one of {', '.join(r.id for r in self.engines)}")


@data_cache
def load_rules() -> CompatibilityRules:
    return load_model("compatibility_rules.json", CompatibilityRules)
