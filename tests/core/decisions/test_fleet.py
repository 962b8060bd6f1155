"""Fleet sizing and quotes: Little's law, the fewest replicas, never more GPUs for better acceptance or looser SLOs."""

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
        assert o.replicas * o.requests_per_s_per_replica >= 30 > (o.replicas - 1) * o.requests_per_s_per_replica
        assert o.gpus == o.nodes * 8
        assert o.usd_per_hour == pytest.approx(o.gpus * q.usd_per_gpu_hour)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0.5, 500), st.floats(0.3, 0.8), st.floats(0.02, 0.2), st.sampled_from([None, 0.03, 0.05]))
def test_better_acceptance_never_needs_more_gpus(rate, alpha, more, slo):
    """A draft accepted more often speeds every batch up, so a replica serves more and the fleet never grows."""
    traffic = Traffic(requests_per_s=rate, prompt_tokens=512, output_tokens=128, alpha=alpha, tpot_slo_s=slo)
    worse = fleet_quote(DEP, traffic).with_speculation
    better = fleet_quote(DEP, traffic.model_copy(update={"alpha": alpha + more})).with_speculation
    assert better.requests_per_s_per_replica >= worse.requests_per_s_per_replica
    assert better.gpus <= worse.gpus


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0.5, 500), st.sampled_from([0.02, 0.03, 0.05]), st.floats(1.2, 3))
def test_a_looser_latency_objective_never_needs_more_gpus(rate, slo, looser):
    """A looser TPOT objective admits every batch a reachable tighter one did (and perhaps larger ones)."""
    traffic = Traffic(requests_per_s=rate, prompt_tokens=512, output_tokens=128, tpot_slo_s=slo)
    tight = fleet_quote(DEP, traffic)
    loose = fleet_quote(DEP, traffic.model_copy(update={"tpot_slo_s": slo * looser}))
    for option in ("without_speculation", "with_speculation"):
        a, b = getattr(tight, option), getattr(loose, option)
        assert a.meets_slo  # these objectives are reachable on 8x H100 at batch 1
        assert b.meets_slo and b.requests_per_s_per_replica >= a.requests_per_s_per_replica
        assert b.gpus <= a.gpus


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
