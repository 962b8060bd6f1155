"""Exact sizes of a draft/target pair: total and active parameters, and their ratio.

The ratio is target total parameters over draft total parameters, both counted exactly by
:func:`planner.model.param_count.count_parameters` (the common 10x-50x guidance for draft size is about model size).
Counts are cached per distinct config, so ranking every catalog draft against a target stays fast
(families outside the closed-form formulas are counted once on the meta device).

>>> from planner.catalog.lookup import get_model
>>> round(parameter_ratio(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")), 2)
57.09
"""

from __future__ import annotations

import json
from functools import lru_cache

from planner.catalog.schemas import ModelSpec
from planner.catalog.speculators import speculator_params
from planner.model.architecture import architecture_from_config
from planner.model.param_count import ParamCount, count_parameters


@lru_cache(maxsize=512)
def _count_config(config_json: str) -> ParamCount:
    config = json.loads(config_json)
    arch = architecture_from_config(config)
    return count_parameters(arch, config)


def param_count(spec: ModelSpec) -> ParamCount:
    """Exact counts of ``spec`` (the meta device counts what no formula covers: other families, a vision encoder);
    a speculator head counts what the engine holds for it (:func:`planner.catalog.speculators.speculator_params`)."""
    if spec.is_head:
        return speculator_params(spec)
    return _count_config(json.dumps(spec.config, sort_keys=True, default=str))


def parameter_ratio(target: ModelSpec, draft: ModelSpec) -> float:
    """Target total parameters / draft total parameters."""
    return param_count(target).total_params / param_count(draft).total_params


def active_parameter_ratio(target: ModelSpec, draft: ModelSpec) -> float:
    """Active parameters per token (MoE), target over draft: closer to the cost ratio of a forward."""
    return param_count(target).active_params / param_count(draft).active_params
