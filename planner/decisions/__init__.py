"""Decisions: the draft decision matrix and fleet quotes (replicas, nodes, cost)."""

from planner.decisions.fleet import (
    HOURS_PER_MONTH,
    SLO_PRESETS,
    FleetOption,
    FleetQuote,
    ObjectiveMiss,
    Traffic,
    best_quote_on_node,
    compare_nodes,
    fleet_quote,
)
from planner.decisions.fleet_recommendation import (
    FleetRecommendation,
    QuotedOption,
    SpeculationSaving,
    plan_fleet,
    recommend_fleet,
)
from planner.decisions.selection import DecisionMatrix, MatrixRow, candidate_drafts, decision_matrix, matrix_table

__all__ = [
    "HOURS_PER_MONTH",
    "SLO_PRESETS",
    "DecisionMatrix",
    "FleetOption",
    "FleetQuote",
    "FleetRecommendation",
    "MatrixRow",
    "ObjectiveMiss",
    "QuotedOption",
    "SpeculationSaving",
    "Traffic",
    "best_quote_on_node",
    "candidate_drafts",
    "compare_nodes",
    "decision_matrix",
    "fleet_quote",
    "matrix_table",
    "plan_fleet",
    "recommend_fleet",
]
