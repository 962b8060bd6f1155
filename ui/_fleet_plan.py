"""The Fleet plan as the Fleet page and its background warm-up compute it: node type by node type, then all.

Each node type's plan (planner.decisions.plans_by_node: the node types side by side in worker processes where the
machine has more than one CPU) leaves its simulated runs in the core's cache (planner.speed.step_cache), so the plan
of all of them that follows reuses them (a node type that fails alone fails again, with its reason, in that plan).
Between the steps the caller may report progress and each node type's own plan as it is done (the page) or wait for
a quiet moment (the warm-up, which plans one node type after another: ``workers=1``).
"""

from __future__ import annotations

from collections.abc import Callable

from planner import PlannerError
from planner.catalog import ModelSpec, NodeType
from planner.decisions import FleetRecommendation, Traffic, plan_fleet, plans_by_node, with_progress


def plan_by_node(
    target: ModelSpec,
    nodes: list[NodeType],
    traffic: Traffic,
    *,
    before_node: Callable[[int, NodeType], None] = lambda done, node: None,
    after_node: Callable[[NodeType, FleetRecommendation | PlannerError], None] = lambda node, plan: None,
    before_all: Callable[[], None] = lambda: None,
    workers: int | None = None,
    **fields,
) -> FleetRecommendation:
    """:func:`planner.decisions.plan_fleet` of ``nodes``, computed one node type at a time first (``fields`` as
    it takes them; ``workers`` as :func:`planner.decisions.plans_by_node` takes it); ``before_node(done, node)``
    (``node``: the first of those not done yet, the next computed where they are computed in order),
    ``after_node(node, its own plan or the error that stopped it)`` as each is done, and ``before_all()`` are called
    around the steps."""
    if len(nodes) > 1:
        for i, alone in with_progress(plans_by_node(target, nodes, traffic, workers=workers, **fields), nodes,
                                      before_node):  # fmt: skip
            after_node(nodes[i], alone)
    before_all()
    return plan_fleet(target, nodes, traffic, workers=workers, **fields)
