"""The Fleet plan does less work without changing its answer: layouts that cannot be cheaper are skipped, replicas
shared between node types are simulated once, and a plan asked again is reused.

Counts, never times: the number of replica simulations is what the search controls."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, get_node
from planner.decisions import plan_fleet
from planner.decisions.fleet import CannotBeat, cannot_beat, size_option
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import (
    _in_order_of_promise,
    _layouts,
    _sizing_order,
    best_quote_on_node,
    quote_space,
)
from planner.defaults import SLO_PRESETS
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.facts import clear_caches
from planner.scenario import Scenario
from planner.speed.serving_workload import ServingWorkload
from planner.speed.step_cache import RUNS, SIMULATIONS, simulate_one_cached

#: The default scenario's plan needs 106 simulations (capacity runs included) where trying every layout and every K
#: in full needs 603 (each node type's cheapest layout without speculation and its cheapest with it, at the K that
#: needs the fewest nodes, are both found); the bound leaves room for a change of the step model that moves a search
#: by a few probes. (It needed 89 before vLLM 0.34, whose KV cache sized after warm-up gives Llama-3.1-70B at TP 1
#: on an MI300X the most room at one node: that layout is sized in full before TP 2, which needs fewer nodes; sizing
#: the layouts and draft lengths in the search's order took 118 then.)
DEFAULT_PLAN_MAX_SIMULATIONS = 120

LOOSE = SLO_PRESETS["server"]
TIGHT = SLO_PRESETS["interactive"]


def _traffic(rate: float, slo: tuple[float, float], prompt: int = 1024, output: int = 256) -> Traffic:
    ttft, tpot = slo
    return Traffic(requests_per_s=rate, prompt_tokens=prompt, output_tokens=output, ttft_slo_s=ttft, tpot_slo_s=tpot)


def _simulations(plan) -> tuple[object, int]:
    before = SIMULATIONS.count
    return plan(), SIMULATIONS.count - before


@pytest.mark.slow
def test_the_default_plan_runs_at_most_its_budget_of_simulations_and_equals_the_exhaustive_plan():
    s = Scenario()
    target, draft = get_model(s.target), get_model(s.draft) if s.draft else None
    nodes = [get_node(n) for n in s.fleet_nodes]
    fields = {"draft": draft, "method": s.method, "engine": "vllm" if s.engine == "hf" else s.engine}
    clear_caches()
    plan, pruned = _simulations(lambda: plan_fleet(target, nodes, s.traffic(), kv_dtype=s.kv_dtype, **fields))
    assert 0 < pruned <= DEFAULT_PLAN_MAX_SIMULATIONS
    # asked again (a page that plans node type by node type, then all of them): nothing is simulated
    again, repeated = _simulations(lambda: plan_fleet(target, nodes, s.traffic(), kv_dtype=s.kv_dtype, **fields))
    assert repeated == 0 and again == plan
    exhaustive, extra = _simulations(
        lambda: plan_fleet(target, nodes, s.traffic(), kv_dtype=s.kv_dtype, exhaustive=True, **fields)
    )
    assert extra > 0, "the exhaustive plan simulates the layouts the default plan skipped"
    assert exhaustive.model_dump() == plan.model_dump()


SCENARIOS = {
    # name: (target, speculator (draft id or method), node types, traffic)
    "plain, one node type, loose": ("Llama-3.1-8B", None, ["8x-h100-sxm-80gb"], _traffic(60, LOOSE)),
    "plain, several node types, tight": (
        "Llama-3.1-8B",
        None,
        ["8x-h100-sxm-80gb", "4x-l40s-48gb"],
        _traffic(40, TIGHT, 512, 128),
    ),
    "plain 70B, many nodes each": ("Llama-3.1-70B", None, ["8x-mi300x-192gb"], _traffic(60, LOOSE, 512, 128)),
    "draft, tight": ("Llama-3.1-8B", "meta-llama/Llama-3.2-1B", ["8x-h100-sxm-80gb"], _traffic(30, TIGHT, 512, 128)),
    "draft 70B, many nodes each": (
        "Llama-3.1-70B",
        "meta-llama/Llama-3.2-1B",
        ["8x-mi300x-192gb"],
        _traffic(60, LOOSE, 512, 128),
    ),
    "EAGLE-3, loose": (
        "Llama-3.1-8B",
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        ["8x-h200-sxm-141gb", "4x-l40s-48gb"],
        _traffic(50, LOOSE, 512, 128),
    ),
    "n-gram, several node types": (
        "Llama-3.1-8B",
        "ngram",
        ["8x-a100-sxm-80gb", "4x-l40s-48gb"],
        _traffic(20, TIGHT, 512, 128),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_skipping_layouts_never_changes_the_plan(name):
    target_id, speculator, node_ids, traffic = SCENARIOS[name]
    target, nodes = get_model(target_id), [get_node(n) for n in node_ids]
    fields = {"method": "ngram"} if speculator == "ngram" else {"draft": get_model(speculator) if speculator else None}
    plan = plan_fleet(target, nodes, traffic, **fields)
    exhaustive = plan_fleet(target, nodes, traffic, exhaustive=True, **fields)
    assert exhaustive.model_dump() == plan.model_dump()
    assert plan.quotes, name


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rate=st.floats(2, 120),
    tpot_ms=st.sampled_from([None, 25.0, 60.0]),
    ttft_s=st.sampled_from([None, 0.5, 2.0]),
    speculator=st.sampled_from([None, "ngram", "meta-llama/Llama-3.2-1B"]),
)
def test_any_traffic_gets_the_plan_of_every_layout_tried_in_full(rate, tpot_ms, ttft_s, speculator):
    traffic = Traffic(
        requests_per_s=rate,
        prompt_tokens=512,
        output_tokens=128,
        ttft_slo_s=ttft_s,
        tpot_slo_s=tpot_ms / 1e3 if tpot_ms else None,
    )
    fields = {"method": "ngram"} if speculator == "ngram" else {"draft": get_model(speculator) if speculator else None}
    target, nodes = get_model("Llama-3.1-8B"), [get_node("4x-l40s-48gb")]
    plan = plan_fleet(target, nodes, traffic, **fields)
    assert plan_fleet(target, nodes, traffic, exhaustive=True, **fields).model_dump() == plan.model_dump()


def test_the_same_replica_on_two_node_types_is_simulated_once():
    model = get_model("Llama-3.1-8B")
    work = ServingWorkload.build(request_rate=5.0, num_prompts=40, prompt_tokens=256, output_tokens=32)
    one, eight = (Deployment.on_node(model, get_node(n)) for n in ("1x-h100-sxm-80gb", "8x-h100-sxm-80gb"))
    first = simulate_one_cached(one, work)
    misses = RUNS.misses
    assert simulate_one_cached(eight, work) == first and RUNS.misses == misses
    # a different GPU is a different replica
    other = Deployment.on_node(model, get_node("1x-h200-sxm-141gb"))
    simulate_one_cached(other, work)
    assert RUNS.misses == misses + 1


def test_an_error_keeps_the_name_of_its_own_node_type():
    model = get_model("Llama-3.1-70B")
    work = ServingWorkload.build(request_rate=1.0, num_prompts=10, prompt_tokens=256, output_tokens=32)
    names = []
    for node in ("4x-l40s-48gb", "8x-l40s-48gb"):
        with pytest.raises(PlannerError) as caught:
            simulate_one_cached(Deployment.on_node(model, get_node(node), tp=1), work)
        names.append(str(caught.value))
    assert "4x-l40s-48gb" in names[0] and "8x-l40s-48gb" in names[1]


@pytest.mark.parametrize("spare_nodes", [1, 3])
def test_an_option_sized_below_a_known_count_gets_the_same_fleet_and_near_it_from_fewer_runs(spare_nodes):
    """An option that must beat a cheaper one is first run at the largest fleet that would still beat it; when that
    meets the objectives, the answer is searched down from there instead of up from the capacity bound."""
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("4x-l40s-48gb"), tp=1, max_model_len=640)
    traffic = _traffic(25, (0.1, 0.025), 512, 128)
    clear_caches()
    alone, runs_alone = _simulations(lambda: size_option(dep, traffic, 1.0, None))
    assert alone.meets_slo and alone.nodes > 4, "a fleet of several nodes, found by doubling and bisecting"
    clear_caches()
    bounded, runs_bounded = _simulations(lambda: size_option(dep, traffic, 1.0, None, alone.nodes + spare_nodes))
    assert bounded == alone
    if spare_nodes == 1:  # the cheaper option needed about as many: a few runs down from its count
        assert runs_bounded < runs_alone - 2


@pytest.mark.parametrize("beat_nodes", [1, 2, 3, 6, 12])
def test_cannot_beat_says_what_sizing_against_that_bound_would_say_at_once(beat_nodes):
    """The design-space search drops a candidate that ``cannot_beat`` the best fleet so far before simulating its
    closed loop: exactly the candidates whose sizing would stop with ``CannotBeat`` at its first run."""
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4)
    traffic = Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256, ttft_slo_s=1.0, tpot_slo_s=0.05)
    ruled_out = cannot_beat(dep, traffic, None, beat_nodes)
    try:
        size_option(dep, traffic, 2.0, None, beat_nodes)
        raised = False
    except CannotBeat:
        raised = True
    assert not ruled_out or raised
    full = size_option(dep, traffic, 2.0, None)
    assert ruled_out == (full.nodes >= beat_nodes)  # the fewest replicas that meet need at least that many nodes


def test_a_layout_sized_first_for_its_promise_keeps_the_tie_of_an_earlier_one_in_the_search_order():
    """Llama-3.1-70B on 8x B200 at 3 req/s: TP 2 is sized first (its replica has the most room at one node), TP 1
    after it; both need one node, and the quote keeps TP 1, first in the search's order, as sizing in that order
    (and trying every layout in full) does."""
    target, node, draft = get_model("Llama-3.1-70B"), get_node("8x-b200-180gb"), get_model("meta-llama/Llama-3.2-1B")
    traffic = _traffic(3, (2.0, 0.2))
    evaluator = quote_space(target, node, traffic, draft=draft, engine="vllm")
    views = _layouts(evaluator, draft, None)
    order = [views[i].where for i in _in_order_of_promise(evaluator, views, traffic)]
    assert order.index("TP 2") < order.index("TP 1"), order
    tp2 = next(v for v in views if v.where == "TP 2")
    assert size_option(tp2.plain, traffic, 1.0, None).nodes == 1  # a tie at one node
    quote = best_quote_on_node(target, node, traffic, draft=draft, engine="vllm")
    assert (quote.without_speculation.tp, quote.without_speculation.nodes) == (1, 1)
    assert quote == best_quote_on_node(target, node, traffic, draft=draft, engine="vllm", exhaustive=True)


def test_a_lightly_loaded_replica_held_back_by_ttft_sizes_the_shortest_draft_first():
    """On 4x L40S, Llama-3.1-70B meets a 2 s p99 TTFT only at a few percent of its replica's capacity: the draft
    lengths are sized shortest first (a longer draft's step only delays prefills there), and the quote is the one
    sizing them in order of promise gives; on 8x H100 the replica runs near its capacity and the order of promise
    stands."""
    s = Scenario()
    target, draft, traffic = get_model(s.target), get_model(s.draft), s.traffic()
    for node_id, shortest_first in (("4x-l40s-48gb", True), ("8x-h100-sxm-80gb", False)):
        node = get_node(node_id)
        quote = best_quote_on_node(target, node, traffic, draft=draft, engine="vllm")
        plain = quote.without_speculation
        promise = [3, 1, 2, 4, 5, 6, 7, 8]
        assert (_sizing_order(promise, plain, traffic) == sorted(promise)) is shortest_first, node_id
        assert quote == best_quote_on_node(target, node, traffic, draft=draft, engine="vllm", exhaustive=True)


def test_a_rate_too_small_to_simulate_leaves_every_node_type_unusable_with_its_reason():
    """A rate that rounds every layout's fleet to no replica at all is ordered like any other (one node at least) and
    each node type says why it cannot be planned."""
    s = Scenario()
    traffic = s.traffic().model_copy(update={"requests_per_s": 1e-9})
    plan = plan_fleet(get_model(s.target), [get_node(n) for n in s.fleet_nodes], traffic, draft=get_model(s.draft))
    assert not plan.quotes and len(plan.unusable) == len(s.fleet_nodes)
    assert all("Request rate must be at least" in reason for reason in plan.unusable)
