"""Design-space search: every way to serve a target (node, TP/PP, precision, speculation, K, batch cap, engine)
planned, screened with the step model, the frontier simulated; the Pareto frontiers and the cheapest point that
meets every objective."""

from planner.decisions.search.frontier import FrontierStep, pareto
from planner.decisions.search.points import SearchPoint
from planner.decisions.search.run import SearchResult, search
from planner.decisions.search.space import (
    DEFAULT_BATCH_CAPS,
    DEFAULT_DTYPES,
    DEFAULT_KS,
    DEFAULT_NODES,
    METHODS,
    NO_OBJECTIVES,
    Objectives,
    SearchSpace,
    SearchWorkload,
)

__all__ = [
    "DEFAULT_BATCH_CAPS",
    "DEFAULT_DTYPES",
    "DEFAULT_KS",
    "DEFAULT_NODES",
    "METHODS",
    "NO_OBJECTIVES",
    "FrontierStep",
    "Objectives",
    "SearchPoint",
    "SearchResult",
    "SearchSpace",
    "SearchWorkload",
    "pareto",
    "search",
]
