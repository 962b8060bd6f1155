"""The Fleet plan as the Fleet page and its background warm-up compute it: node type by node type, then all.

Each node type's plan leaves its simulated runs in the core's cache (planner.speed.step_cache), so the plan of all
of them that follows reuses them (a node type that fails alone fails again, with its reason, in that plan). Between
the steps the caller may report progress and each node type's own plan as it is done (the page) or wait for a quiet
moment (the warm-up).
"""

from __future__ import annotations

from collections.abc import Callable

from planner import PlannerError
from planner.catalog import ModelSpec, NodeType
from planner.decisions import FleetRecommendation, Traffic, plan_fleet


def plan_by_node(
    target: ModelSpec,
    nodes: list[NodeType],
    traffic: Traffic,
    *,
    before_node: Callable[[int, NodeType], None] = lambda done, node: None,
    after_node: Callable[[NodeType, FleetRecommendation | PlannerError], None] = lambda node, plan: None,
    before_all: Callable[[], None] = lambda: None,
    **fields,
) -> FleetRecommendation:
    """:func:`planner.decisions.plan_fleet` of ``nodes``, computed one node type at a time first (``fields`` as
    it takes them); ``before_node(i, node)``, ``after_node(node, its own plan or the error that stopped it)`` and
    ``before_all()`` are called around the steps."""
    if len(nodes) > 1:
        for done, node in enumerate(nodes):
            before_node(done, node)
            try:
                alone: FleetRecommendation | PlannerError = plan_fleet(target, [node], traffic, **fields)
            except PlannerError as exc:
                alone = exc
            after_node(node, alone)
    before_all()
    return plan_fleet(target, nodes, traffic, **fields)
