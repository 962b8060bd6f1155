"""Fleet quotes from the serving simulator: objectives met, monotonic in traffic, physics never exceeded."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, get_node
from planner.decisions import fleet, recommend_fleet
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import best_quote_on_node, compare_nodes, fleet_quote
from planner.defaults import SLO_PRESETS
from planner.deployment import Deployment
from planner.errors import PlannerError

DEP = Deployment.on_node(
    get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, draft=get_model("Llama-3.2-1B")
)


def test_quote_meets_its_objectives_at_the_percentile():
    q = fleet_quote(DEP, Traffic(requests_per_s=30, prompt_tokens=1024, output_tokens=256))
    for o in (q.without_speculation, q.with_speculation):
        assert o.meets_slo
        assert o.ttft_s <= SLO_PRESETS["server"][0] and o.tpot_s <= SLO_PRESETS["server"][1]
        assert o.replicas * o.requests_per_s_per_replica == pytest.approx(30)
        assert o.requests_per_s_per_replica <= o.capacity_requests_per_s
        assert o.gpus == o.nodes * 8
        assert o.usd_per_hour == pytest.approx(o.gpus * q.usd_per_gpu_hour)
        # the nodes paid for hold every replica a whole node of TP 8 fits: at least the ones needed
        assert o.replicas <= o.replicas_nodes_hold == o.nodes * (8 // (o.tp * o.pp))


def test_replicas_the_nodes_hold_beyond_those_needed_are_named_as_headroom():
    # 20 req/s at interactive objectives on 8x H100: 3 replicas of TP 4 need 2 nodes, which hold 4
    quote = best_quote_on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"),
        Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256, ttft_slo_s=0.45, tpot_slo_s=0.04),
    )  # fmt: skip
    option = quote.without_speculation
    assert (option.tp, option.replicas, option.nodes, option.replicas_nodes_hold) == (4, 3, 2, 4)
    assert option.model_dump()["replicas_nodes_hold"] == 4  # in the quote's JSON too


def test_the_solution_architects_quote_pays_for_prefill():
    # 50 req/s of 1,024 + 256 tokens on Llama-3.1-70B: prefill alone is 50 x 1,024 x 2 x 70.6e9 = 7.2 PFLOP/s,
    # about two 8x H100 nodes' dense bf16 peak (8 x 989 TFLOPS), so no quote can fit it in one node.
    quote = best_quote_on_node(
        get_model("Llama-3.1-70B"),
        get_node("8x-h100-sxm-80gb"),
        Traffic(requests_per_s=50, prompt_tokens=1024, output_tokens=256),
        draft=get_model("Llama-3.2-1B"),
    )
    assert quote.without_speculation.gpus >= 24
    assert quote.chosen.gpus >= 16


def test_each_option_of_a_node_type_is_its_cheapest_layout_and_the_saving_is_counted_against_the_plain_one():
    # 50 req/s at p99 TPOT 40 ms on 8x H200: the draft's cheapest layout is not the target's cheapest layout without
    # it, so crediting speculation against the plain option of the draft's own layout would flatter it.
    target, draft, node = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"), get_node("8x-h200-sxm-141gb")
    traffic = Traffic(requests_per_s=50, prompt_tokens=1024, output_tokens=256, tpot_slo_s=0.04)
    per_layout = [fleet_quote(Deployment.on_node(target, node, tp=tp, draft=draft), traffic) for tp in (2, 4, 8)]
    plain = [q.without_speculation for q in per_layout if q.without_speculation.meets_slo]
    spec = [q.with_speculation for q in per_layout if q.with_speculation and q.with_speculation.meets_slo]
    cheapest_plain, cheapest_spec = min(plain, key=lambda o: o.gpus), min(spec, key=lambda o: o.gpus)
    quote = best_quote_on_node(target, node, traffic, draft=draft)
    assert quote.without_speculation == cheapest_plain and quote.with_speculation == cheapest_spec
    assert {o.gpus for o in plain} != {cheapest_plain.gpus}, "a case where the layout matters"
    saving = 1 - cheapest_spec.gpus / cheapest_plain.gpus
    assert quote.savings_frac == (saving if saving > 0 else None)
    assert quote.tp == quote.chosen.tp
    plan = recommend_fleet(traffic, [quote], [])
    if plan.saving is not None:
        assert plan.saving.gpus_saved == cheapest_plain.gpus - cheapest_spec.gpus


def test_an_interactive_objective_needs_more_gpus_than_server():
    server = fleet_quote(DEP.without_draft(), Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256))
    ttft, tpot = SLO_PRESETS["interactive"]
    interactive = fleet_quote(
        DEP.without_draft(),
        Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256, ttft_slo_s=ttft, tpot_slo_s=tpot),
    )
    assert interactive.without_speculation.gpus >= server.without_speculation.gpus
    assert "TTFT" in interactive.traffic.objectives()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0.5, 200), st.floats(1.5, 4))
def test_more_traffic_never_needs_fewer_gpus(rate, factor):
    small = fleet_quote(DEP, Traffic(requests_per_s=rate, prompt_tokens=512, output_tokens=128))
    big = fleet_quote(DEP, Traffic(requests_per_s=rate * factor, prompt_tokens=512, output_tokens=128))
    assert big.without_speculation.gpus >= small.without_speculation.gpus
    assert big.with_speculation.gpus >= small.with_speculation.gpus


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(
        [
            ("Llama-3.1-8B", "1x-h100-sxm-80gb", 1),
            ("Llama-3.1-70B", "8x-h100-sxm-80gb", 4),
            ("Llama-3.1-70B", "8x-mi300x-192gb", 2),
            ("Mixtral-8x7B-v0.1", "8x-h200-sxm-141gb", 2),
        ]
    ),
    st.floats(0.2, 400),
    st.integers(16, 4096),
    st.integers(1, 1024),
)
def test_a_quoted_replica_never_beats_its_gpus_peak(setup, rate, prompt, output):
    target, node, tp = setup
    dep = Deployment.on_node(get_model(target), get_node(node), tp=tp, draft=get_model("Llama-3.2-1B"))
    quote = fleet_quote(dep, Traffic(requests_per_s=rate, prompt_tokens=prompt, output_tokens=output))
    for option in (quote.without_speculation, quote.with_speculation):
        if option is not None:
            assert 0 < option.delivered_flops_frac <= 1
            assert 0 < option.delivered_bandwidth_frac <= 1


def test_a_tight_latency_objective_is_flagged_when_unreachable():
    q = fleet_quote(DEP, Traffic(requests_per_s=1, prompt_tokens=512, output_tokens=128, tpot_slo_s=0.0001))
    assert not q.without_speculation.meets_slo and "cannot meet" in q.without_speculation.limited_by


def test_speculation_is_chosen_only_where_it_pays():
    low = fleet_quote(DEP, Traffic(requests_per_s=2, prompt_tokens=512, output_tokens=256, alpha=0.1))
    assert not low.speculation_chosen and low.chosen is low.without_speculation
    good = fleet_quote(DEP, Traffic(requests_per_s=2, prompt_tokens=512, output_tokens=256, alpha=0.9))
    assert good.with_speculation.tpot_s < good.without_speculation.tpot_s


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


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"requests_per_s": 0}, "requests_per_s"),
        ({"requests_per_s": 1, "percentile": 0}, "percentile"),
        ({"requests_per_s": 1, "ttft_slo_s": -1}, "ttft_slo_s"),
    ],
)
def test_bad_traffic_names_the_field(fields, field):
    with pytest.raises(PlannerError) as info:
        Traffic.build(prompt_tokens=1, output_tokens=1, **fields)
    assert info.value.field == field


def test_the_quote_and_its_recommendation_agree_on_speculation():
    # At as many GPUs and a lower TPOT the quote once said speculation_chosen while the recommendation had none.
    q = fleet_quote(DEP, Traffic(requests_per_s=2, prompt_tokens=512, output_tokens=256, alpha=0.9))
    plan = recommend_fleet(q.traffic, [q], [])
    assert plan.recommended is not None
    assert q.speculation_chosen == plan.recommended.option.speculation
    assert q.chosen is plan.recommended.option


def test_the_quoted_replicas_meet_the_objectives_where_one_fewer_misses(monkeypatch):
    # 20 req/s on H100 at TP 2: the p99 TTFT objective sets the count (not the capacity bound), so the search
    # narrows a bracket; interpolating the margin must settle on the bisection's answer in fewer simulations.
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=2)
    traffic = Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256)
    tried: dict[str, set[int]] = {}
    at = fleet.ReplicaSearch.at

    def counting(self, n):
        tried[label].add(n)
        return at(self, n)

    monkeypatch.setattr(fleet.ReplicaSearch, "at", counting)
    answers = {}
    bisected = lambda s, miss, hit: (miss + hit) // 2  # noqa: E731
    for label, probe in (("interpolated", fleet.ReplicaSearch.probe), ("bisected", bisected)):
        tried[label] = set()
        monkeypatch.setattr(fleet.ReplicaSearch, "probe", probe)
        answers[label] = fleet_quote(dep, traffic).without_speculation
    quoted = answers["interpolated"]
    assert quoted.replicas == answers["bisected"].replicas and quoted.limited_by.startswith("objective at one replica")
    assert len(tried["interpolated"]) < len(tried["bisected"])
    search = fleet.ReplicaSearch(dep.replace(max_model_len=1280).without_draft(), traffic, None, None)
    assert search.misses(search.at(quoted.replicas - 1)) and not search.misses(search.at(quoted.replicas))


def test_a_capacity_bound_names_what_held_the_saturated_replica_back():
    # 70B on one B300: the capacity's best run (1.25x the offline rate) held its queue back for under a tenth of the
    # run, so the run alone reads "keeps up"; the bound a quote states is what held that queue back all the same
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-b300-288gb"), tp=1)
    traffic = Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256)
    option = fleet.size_option(dep.replace(max_model_len=1280), traffic, None, None)
    search = fleet.ReplicaSearch(dep.replace(max_model_len=1280).without_draft(), traffic, None, None)
    capacity = search.capacity()
    assert capacity.limited_by == "offered load (the replica keeps up)"
    assert option.limited_by == f"replica capacity ({capacity.steady_requests_per_s:.2f} req/s, KV cache capacity)"
    assert "offline" not in option.limited_by
