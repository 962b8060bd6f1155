"""Decisions: the draft decision matrix and fleet quotes (replicas, nodes, cost).

Names are imported on first use, so a command that needs only the search or only the fleet does not pay for the
others' imports (the decision matrix brings pandas).
"""

from __future__ import annotations

import importlib
from typing import Any

_OWNER: dict[str, str] = {
    "HOURS_PER_MONTH": "fleet_models",
    "QUOTE_REQUESTS": "fleet",
    "SLO_PRESETS": "fleet_models",
    "FleetOption": "fleet_models",
    "FleetQuote": "fleet_models",
    "ObjectiveMiss": "fleet_models",
    "Traffic": "fleet_models",
    "best_quote_on_node": "fleet_quotes",
    "compare_nodes": "fleet_quotes",
    "fleet_quote": "fleet_quotes",
    "FleetRecommendation": "fleet_recommendation",
    "QuotedOption": "fleet_recommendation",
    "SpeculationSaving": "fleet_recommendation",
    "plan_fleet": "fleet_recommendation",
    "plans_by_node": "fleet_recommendation",
    "recommend_fleet": "fleet_recommendation",
    "with_progress": "side_by_side",
    "CountAcrossDraws": "traffic_draws",
    "count_across_draws": "traffic_draws",
    "options_across_draws": "traffic_draws",
    "SpeedMargin": "speed_margins",
    "options_speed_margins": "speed_margins",
    "speed_margin": "speed_margins",
    "DecisionMatrix": "selection",
    "MatrixRow": "selection",
    "candidate_drafts": "selection",
    "decision_matrix": "selection",
    "matrix_table": "selection",
}

__all__ = [
    "HOURS_PER_MONTH",
    "QUOTE_REQUESTS",
    "SLO_PRESETS",
    "CountAcrossDraws",
    "DecisionMatrix",
    "FleetOption",
    "FleetQuote",
    "FleetRecommendation",
    "MatrixRow",
    "ObjectiveMiss",
    "QuotedOption",
    "SpeculationSaving",
    "SpeedMargin",
    "Traffic",
    "best_quote_on_node",
    "candidate_drafts",
    "compare_nodes",
    "count_across_draws",
    "decision_matrix",
    "fleet_quote",
    "matrix_table",
    "options_across_draws",
    "options_speed_margins",
    "plan_fleet",
    "plans_by_node",
    "recommend_fleet",
    "speed_margin",
    "with_progress",
]


def __getattr__(name: str) -> Any:
    if name not in _OWNER:
        raise AttributeError(f"module 'planner.decisions' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"planner.decisions.{_OWNER[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_OWNER})
