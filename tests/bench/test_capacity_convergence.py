"""`make bench-capacity` measures the capacity the planner runs, and the settings it ran before."""

from __future__ import annotations

from bench.capacity_convergence import FORMER, REPLICAS, WORKLOADS, _capacity
from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.speed.replica_capacity import CAPACITY_OVERLOADS, CAPACITY_ROUNDS, replica_capacity


def test_now_is_the_planners_capacity_and_before_is_another_run():
    _, target, node, tp, speculative = next(r for r in REPLICAS if r[0] == "8B, H100 TP 1")
    dep = Deployment.on_node(get_model(target), get_node(node), tp=tp)
    workload = WORKLOADS["1,024 + 256 tokens"]
    planner = replica_capacity(dep, workload).steady_requests_per_s
    assert _capacity(dep, workload, speculative, CAPACITY_ROUNDS, CAPACITY_OVERLOADS) == planner
    assert _capacity(dep, workload, speculative, *FORMER) != planner
