"""Fleet sizing and quotes: Little's law, monotonic in traffic, speculation never costs GPUs at low load."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet import Traffic, best_quote_on_node, compare_nodes, fleet_quote
from planner.deployment import Deployment
from planner.errors import PlannerError

DEP = Deployment.on_node(
    get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, draft=get_model("Llama-3.2-1B")
)


def test_quote_is_consistent():
    q = fleet_quote(DEP, Traffic(requests_per_s=30, prompt_tokens=1024, output_tokens=256))
    for o in (q.without_speculation, q.with_speculation):
        rate = o.batch_size / (o.ttft_s + 255 * o.tpot_s)
        assert o.requests_per_s_per_replica == pytest.approx(rate)
        assert o.replicas * o.requests_per_s_per_replica >= 30
        assert o.gpus == o.nodes * 8
        assert o.usd_per_hour == pytest.approx(o.gpus * q.usd_per_gpu_hour)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0.5, 500), st.floats(1.1, 4))
def test_more_traffic_never_needs_fewer_gpus(rate, factor):
    small = fleet_quote(DEP, Traffic(requests_per_s=rate, prompt_tokens=512, output_tokens=128))
    big = fleet_quote(DEP, Traffic(requests_per_s=rate * factor, prompt_tokens=512, output_tokens=128))
    assert big.without_speculation.gpus >= small.without_speculation.gpus
    assert big.with_speculation.gpus >= small.with_speculation.gpus


def test_a_tight_latency_objective_is_flagged_when_unreachable():
    q = fleet_quote(DEP, Traffic(requests_per_s=1, prompt_tokens=512, output_tokens=128, tpot_slo_s=0.0001))
    assert not q.without_speculation.meets_slo and "cannot meet" in q.without_speculation.limited_by


def test_price_override_and_missing_price():
    q = fleet_quote(DEP, Traffic(requests_per_s=1, prompt_tokens=512, output_tokens=128, usd_per_gpu_hour=1.0))
    assert q.usd_per_gpu_hour == 1.0 and q.price_source == "entered by the user"
    t4 = Deployment.on_node(get_model("Llama-3.2-1B"), get_node("1x-t4-16gb"), dtype="fp16")
    no_price = fleet_quote(t4, Traffic(requests_per_s=1, prompt_tokens=256, output_tokens=64))
    assert no_price.usd_per_gpu_hour is None and no_price.without_speculation.usd_per_month is None


def test_compare_nodes_sorts_by_cost_and_lists_unusable_nodes():
    quotes, unusable = compare_nodes(
        get_model("Llama-3.1-70B"),
        [get_node("8x-h100-sxm-80gb"), get_node("8x-h200-sxm-141gb"), get_node("1x-l4-24gb")],
        Traffic(requests_per_s=50, prompt_tokens=1024, output_tokens=256),
    )
    costs = [q.without_speculation.usd_per_hour for q in quotes]
    assert costs == sorted(costs) and len(quotes) == 2
    assert len(unusable) == 1 and "1x-l4-24gb" in unusable[0]
    with pytest.raises(PlannerError, match="fits no layout"):
        best_quote_on_node(
            get_model("Llama-3.1-70B"),
            get_node("1x-l4-24gb"),
            Traffic(requests_per_s=1, prompt_tokens=1, output_tokens=1),
        )


def test_bad_traffic_names_the_field():
    with pytest.raises(PlannerError, match="requests_per_s"):
        Traffic.build(requests_per_s=0, prompt_tokens=1, output_tokens=1)
