"""An objective below a configuration's latency floor: no fleet of it is searched for, in a quote or a search, and
the answer says why in the floor's words; objectives above the floor are sized as before.

Counts, never times: the number of replica simulations is what the floor saves."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions import plan_fleet
from planner.decisions.fleet import CannotBeat, ReplicaSearch, size_option
from planner.decisions.fleet_models import Traffic
from planner.deployment import Deployment
from planner.facts import clear_caches
from planner.speed.step_cache import SIMULATIONS
from planner.units import fmt_ms

DEP = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), draft=get_model("Llama-3.2-1B"))


def _sized(traffic: Traffic, k: int | None = None, beat_nodes: int | None = None):
    clear_caches()
    before = SIMULATIONS.count
    option = size_option(DEP if k else DEP.without_draft(), traffic, 2.0, k, beat_nodes)
    return option, SIMULATIONS.count - before


@pytest.mark.parametrize("k", [None, 3])
def test_a_tpot_below_one_requests_own_step_is_answered_from_the_capacity_runs_and_one_more(k):
    traffic = Traffic(requests_per_s=4, prompt_tokens=512, output_tokens=128, tpot_slo_s=1e-4, alpha=0.7)
    option, runs = _sized(traffic, k)
    assert not option.meets_slo and option.misses[0].objective == "p99 TPOT"
    assert "at any fleet size: one request alone takes" in option.limited_by
    assert "against p99 TPOT ≤ 0.1 ms" in option.limited_by
    assert runs <= 4  # the three capacity runs and the figures at the lightest load searched
    assert option.replicas == 64 * max(1, -(-4 // option.capacity_requests_per_s))
    with pytest.raises(CannotBeat):  # never chosen over an option that meets the objectives
        _sized(traffic, k, beat_nodes=10)


def test_a_ttft_below_one_prompts_own_prefill_is_out_of_reach_too():
    traffic = Traffic(requests_per_s=4, prompt_tokens=4096, output_tokens=128, ttft_slo_s=1e-4, tpot_slo_s=None)
    option, _ = _sized(traffic)
    assert not option.meets_slo and "one request alone waits" in option.limited_by


def test_drawn_lengths_are_out_of_reach_at_their_percentile_not_their_shortest_prompt():
    """ShareGPT-like prompts run from a few tokens to 1,024: a p99 TTFT the shortest prompt meets alone but the
    longest ones do not is out of reach, in the words of the requests' percentile."""
    traffic = Traffic(requests_per_s=4, prompt_tokens=16, output_tokens=64, ttft_slo_s=0.008, tpot_slo_s=None)
    search = ReplicaSearch.for_option(DEP.without_draft(), traffic, None, dataset="sharegpt")
    why = search.out_of_reach()
    assert why is not None and why.startswith("its requests, each served alone, wait ")
    assert why.endswith("for their first token at p99 (against p99 TTFT ≤ 8 ms)")
    assert ReplicaSearch.for_option(DEP.without_draft(), traffic, None).out_of_reach() is None  # 16-token prompts


def test_objectives_within_reach_are_sized_in_full():
    traffic = Traffic(requests_per_s=4, prompt_tokens=512, output_tokens=128, tpot_slo_s=0.03)
    option, _ = _sized(traffic)
    assert option.meets_slo and "one request alone" not in option.limited_by


def test_a_plan_nothing_can_meet_says_why_in_its_verdict():
    traffic = Traffic(requests_per_s=4, prompt_tokens=512, output_tokens=128, tpot_slo_s=1e-4)
    plan = plan_fleet(
        get_model("Llama-3.1-8B"), [get_node("1x-h100-sxm-80gb")], traffic, draft=get_model("Llama-3.2-1B")
    )
    assert plan.recommended is None and plan.headline.startswith("No option meets every objective")
    assert "; no fleet of it meets them: one request alone takes " in plan.headline
    assert plan.headline.endswith("per output token (against p99 TPOT ≤ 0.1 ms)")


def test_a_fleet_of_nearly_empty_replicas_says_how_close_one_request_alone_comes_to_the_objective():
    # an 8,192-token prompt prefills alone in about 0.2 s on one H100: a p99 TTFT of 0.3 s is met only where
    # arrivals almost never overlap, so the count is set far above the capacity bound, and the reason says why
    dep = DEP.without_draft()
    traffic = Traffic(requests_per_s=4, prompt_tokens=8192, output_tokens=64, ttft_slo_s=0.3, tpot_slo_s=None)
    option = size_option(dep, traffic, 2.0, None)
    floor = ReplicaSearch(dep.replace(max_model_len=8256), traffic, None, None).floor()
    assert option.meets_slo and option.limited_by.startswith("objective at one replica fewer: p99 TTFT")
    load = traffic.requests_per_s / option.replicas / option.capacity_requests_per_s
    assert load < 0.25
    assert f"one request alone waits {fmt_ms(floor.ttft_s)} for its first token" in option.limited_by
    assert f"{floor.ttft_s / 0.3:.0%} of p99 TTFT ≤ 300 ms, so each replica runs at {load:.0%} of its capacity" in (
        option.limited_by
    )


def test_a_fleet_loaded_past_a_quarter_of_its_capacity_gives_no_floor_reason():
    traffic = Traffic(requests_per_s=8, prompt_tokens=8192, output_tokens=64, ttft_slo_s=0.8, tpot_slo_s=None)
    option = size_option(DEP.without_draft(), traffic, 2.0, None)
    assert option.limited_by.startswith("objective at one replica fewer") and "alone" not in option.limited_by
    assert traffic.requests_per_s / option.replicas / option.capacity_requests_per_s >= 0.25
