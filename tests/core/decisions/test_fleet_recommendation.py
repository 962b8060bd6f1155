"""An honest quote: the cheapest option that meets every objective, misses apart with their shortfall,
savings only between options that meet the objectives, and inputs checked against the model's limits."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet_models import FleetOption, FleetQuote, ObjectiveMiss, Traffic
from planner.decisions.fleet_quotes import compare_nodes
from planner.decisions.fleet_recommendation import plan_fleet, recommend_fleet
from planner.defaults import LARGEST_REPORTED_CLUSTER_GPUS
from planner.errors import InputError

NODES = [get_node("8x-h100-sxm-80gb"), get_node("8x-h200-sxm-141gb"), get_node("4x-l40s-48gb")]
TARGET, DRAFT = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")


@pytest.fixture(scope="module")
def tight():
    """A TPOT objective that the plain options miss on some node types."""
    traffic = Traffic(requests_per_s=20, prompt_tokens=1024, output_tokens=256, tpot_slo_s=0.015)
    return plan_fleet(TARGET, NODES, traffic, draft=DRAFT)


def _cost(option: FleetOption) -> float:
    return option.usd_per_month


def test_the_recommended_option_is_the_cheapest_that_meets_every_objective(tight):
    best = tight.recommended
    assert best is not None and best.option.meets_slo and not best.option.misses
    assert tight.headline.startswith("Cheapest option that meets every objective")
    assert all(_cost(best.option) <= _cost(o.option) for o in tight.meeting)
    assert [o.option.meets_slo for o in tight.meeting] == [True] * len(tight.meeting)
    # every option that misses is cheaper or dearer, but never named cheapest, and never in the meeting list
    assert tight.missing and all(not o.option.meets_slo for o in tight.missing)


def test_each_miss_says_what_and_by_how_much(tight):
    for quoted in tight.missing:
        assert quoted.option.misses, quoted.label
        for miss in quoted.option.misses:
            assert miss.value_s > miss.limit_s and miss.shortfall_frac > 0
            assert "over" in miss.describe() and miss.objective.startswith("p99")
    worst = [max(m.shortfall_frac for m in o.option.misses) for o in tight.missing]
    assert worst == sorted(worst)  # nearest miss first


def test_savings_are_only_between_options_that_meet_and_never_negative(tight):
    for q in tight.quotes:
        if q.savings_frac is not None:
            assert q.without_speculation.meets_slo and q.with_speculation.meets_slo and q.savings_frac > 0
    if tight.saving is not None:
        assert tight.recommended.option.speculation
        assert (tight.saving.gpus_frac or 1) > 0 and (tight.saving.usd_per_month or 1) > 0


def _option(speculation: bool, gpus: int, meets: bool, usd: float) -> FleetOption:
    misses = [] if meets else [ObjectiveMiss(objective="p99 TPOT", value_s=0.05, limit_s=0.04)]
    return FleetOption(
        speculation=speculation,
        tp=8,
        batch_size=8,
        k=4 if speculation else None,
        tpot_s=0.05 if not meets else 0.03,
        ttft_s=0.5,
        requests_per_s_per_replica=1,
        capacity_requests_per_s=2,
        replicas=gpus // 8,
        nodes=gpus // 8,
        gpus=gpus,
        usd_per_hour=usd / 730,
        usd_per_month=usd,
        usd_per_million_output_tokens=1.0,
        limited_by="test",
        replica_limited_by="test",
        meets_slo=meets,
        delivered_flops_frac=0.5,
        delivered_bandwidth_frac=0.5,
        misses=misses,
    )


def _quote(node: str, plain: FleetOption, spec: FleetOption | None) -> FleetQuote:
    return FleetQuote(
        node=node,
        tp=8,
        gpu="h100-sxm-80gb",
        gpus_per_node=8,
        replicas_per_node=1,
        usd_per_gpu_hour=2.0,
        price_source="test",
        traffic=Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10),
        kv_concurrency_limit=10,
        without_speculation=plain,
        with_speculation=spec,
        savings_frac=None,
        notes=[],
    )


def test_a_cheaper_option_that_misses_is_never_recommended_nor_a_saving():
    traffic = Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10)
    # the speculative option is cheaper but misses; the plain one meets and is dearer
    quote = _quote("a", _option(False, 32, True, 40_000), _option(True, 16, False, 20_000))
    rec = recommend_fleet(traffic, [quote], [])
    assert rec.recommended.option.speculation is False and rec.saving is None
    assert rec.missing[0].option.speculation
    assert rec.speculation_note == "With the draft, no option meets every objective"


def test_speculation_that_meets_but_costs_more_is_said_so_without_a_negative_saving():
    traffic = Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10)
    rec = recommend_fleet(traffic, [_quote("a", _option(False, 16, True, 20_000), _option(True, 24, True, 30_000))], [])
    assert rec.saving is None and not rec.recommended.option.speculation
    assert "does not pay" in rec.speculation_note and "$10,000 per month more" in rec.speculation_note


def test_a_saving_is_against_the_same_node_type_without_speculation():
    traffic = Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10)
    quotes = [
        _quote("a", _option(False, 32, True, 40_000), _option(True, 16, True, 20_000)),
        _quote("b", _option(False, 24, True, 30_000), None),
    ]
    rec = recommend_fleet(traffic, quotes, [])
    assert rec.saving.usd_per_month == pytest.approx(20_000) and rec.saving.gpus_frac == pytest.approx(0.5)
    assert "a, TP 8, without speculation" in rec.saving.against


def test_a_change_of_node_type_is_a_separate_line_not_credited_to_speculation():
    """B200 with speculation against H100 without it: speculation's share is B200 against B200 (50%), and the
    hardware's B200 against H100, both without speculation (50%); never the 75% of the mixed comparison."""
    traffic = Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10)
    quotes = [
        _quote("8x-b200", _option(False, 16, True, 40_000), _option(True, 8, True, 20_000)),
        _quote("8x-h100", _option(False, 32, True, 60_000), _option(True, 24, True, 45_000)),
    ]
    rec = recommend_fleet(traffic, quotes, [])
    assert rec.recommended.node == "8x-b200" and rec.recommended.option.speculation
    assert rec.saving.gpus_frac == pytest.approx(0.5) and "8x-b200" in rec.saving.against
    assert rec.hardware_note.startswith("without speculation, 8x-b200 needs 16 GPUs")
    assert "against 32 GPUs ($60,000 per month) on 8x-h100" in rec.hardware_note
    assert "75%" not in rec.saving.describe() + rec.hardware_note


def test_a_fleet_beyond_any_real_purchase_is_flagged():
    traffic = Traffic(requests_per_s=1e9, prompt_tokens=10, output_tokens=10)
    huge = LARGEST_REPORTED_CLUSTER_GPUS * 8
    rec = recommend_fleet(traffic, [_quote("a", _option(False, huge, True, 1e9), None)], [])
    assert rec.flags and f"{huge:,} GPUs" in rec.flags[0]
    small = recommend_fleet(traffic, [_quote("a", _option(False, 64, True, 1e5), None)], [])
    assert small.flags == []


def test_no_option_meets_says_so_and_names_the_nearest_miss():
    traffic = Traffic(requests_per_s=1, prompt_tokens=10, output_tokens=10)
    rec = recommend_fleet(traffic, [_quote("a", _option(False, 16, False, 20_000), None)], [])
    assert rec.recommended is None and rec.nearest_miss.node == "a"
    assert rec.headline.startswith("No option meets every objective") and "25% over" in rec.headline


def test_an_unreachable_tpot_stops_at_the_latency_floor_and_lists_its_miss():
    traffic = Traffic(requests_per_s=5, prompt_tokens=512, output_tokens=128, tpot_slo_s=0.002)
    quotes, _ = compare_nodes(TARGET, [get_node("8x-h100-sxm-80gb")], traffic)
    option = quotes[0].without_speculation
    assert not option.meets_slo and option.misses[0].objective == "p99 TPOT"
    assert "at any fleet size" in option.limited_by or "even at" in option.limited_by


@pytest.mark.parametrize(
    ("fields", "field", "limit"),
    [
        ({"prompt_tokens": 1_000_000, "output_tokens": 256}, "prompt_tokens", "131,072"),
        ({"prompt_tokens": 131_000, "output_tokens": 1_000}, "output_tokens", "131,072"),
    ],
)
def test_a_request_longer_than_the_context_window_is_an_input_error(fields, field, limit):
    traffic = Traffic(requests_per_s=20, **fields)
    with pytest.raises(InputError) as err:
        plan_fleet(TARGET, NODES, traffic, draft=DRAFT)
    assert err.value.field == field and limit in str(err.value)
