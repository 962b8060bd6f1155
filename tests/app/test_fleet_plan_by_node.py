"""The Fleet page's plan, node type by node type (ui/_fleet_plan.py): each node type's own plan, or the error that
stopped it, is handed over as it is done (in order, one after another; in any order, side by side), before the plan of
all of them."""

from __future__ import annotations

from planner.catalog import get_model, get_node
from planner.decisions import FleetRecommendation, Traffic, fleet_recommendation, plan_fleet
from planner.errors import PlannerError
from planner.facts import clear_caches
from ui import _fleet_plan

TARGET = get_model("Llama-3.1-8B")
NODES = [get_node("1x-h100-sxm-80gb"), get_node("1x-l40s-48gb"), get_node("1x-a100-sxm-80gb")]
TRAFFIC = Traffic(requests_per_s=2, prompt_tokens=512, output_tokens=128)


def _l40s_fails(monkeypatch) -> None:
    def planned(target, node_list, traffic, **fields):
        if [n.id for n in node_list] == ["1x-l40s-48gb"]:
            raise PlannerError("no room for this workload", field="fleet_nodes")
        return plan_fleet(target, node_list, traffic, **fields)

    monkeypatch.setattr(fleet_recommendation, "plan_fleet", planned)


def _planned(workers: int) -> tuple:
    """The plan of every node type, and what plan_by_node handed over on the way."""
    events = []
    plan = _fleet_plan.plan_by_node(
        TARGET,
        NODES,
        TRAFFIC,
        before_node=lambda done, node: events.append(("before", done, node.id)),
        after_node=lambda node, alone: events.append(("after", node.id, alone)),
        before_all=lambda: events.append(("all",)),
        workers=workers,
        engine="vllm",
    )
    return plan, events


def test_each_node_types_own_plan_or_its_error_is_handed_over_in_order(monkeypatch):
    _l40s_fails(monkeypatch)
    plan, events = _planned(workers=1)
    assert [e[:2] for e in events] == [
        ("before", 0), ("after", "1x-h100-sxm-80gb"), ("before", 1), ("after", "1x-l40s-48gb"), ("before", 2),
        ("after", "1x-a100-sxm-80gb"), ("all",),
    ]  # fmt: skip
    alone = {e[1]: e[2] for e in events if e[0] == "after"}
    assert isinstance(alone["1x-l40s-48gb"], PlannerError)
    assert isinstance(alone["1x-h100-sxm-80gb"], FleetRecommendation)
    assert [q.node for q in alone["1x-h100-sxm-80gb"].quotes] == ["1x-h100-sxm-80gb"]
    # each node type's own quote is the one the plan of all of them holds
    by_node = {q.node: q for q in plan.quotes}
    assert alone["1x-a100-sxm-80gb"].quotes[0] == by_node["1x-a100-sxm-80gb"]


def test_side_by_side_each_node_type_is_handed_over_once_before_the_plan_of_all(monkeypatch):
    _l40s_fails(monkeypatch)
    clear_caches()
    plan, events = _planned(workers=3)
    after = [e for e in events if e[0] == "after"]
    assert sorted(e[1] for e in after) == sorted(n.id for n in NODES) and events[-1] == ("all",)
    assert [e[1] for e in events if e[0] == "before"] == [0, 1, 2]  # progress: how many were done
    alone = {e[1]: e[2] for e in after}
    assert isinstance(alone["1x-l40s-48gb"], PlannerError) and "no room" in str(alone["1x-l40s-48gb"])
    by_node = {q.node: q for q in plan.quotes}
    assert alone["1x-a100-sxm-80gb"].quotes[0] == by_node["1x-a100-sxm-80gb"]
    assert alone["1x-h100-sxm-80gb"].quotes[0] == by_node["1x-h100-sxm-80gb"]
