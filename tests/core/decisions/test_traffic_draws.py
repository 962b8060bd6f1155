"""A quoted count sized again on other draws of the same traffic (planner/decisions/traffic_draws.py)."""

from __future__ import annotations

import json

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions import Traffic, count_across_draws, options_across_draws, plan_fleet
from planner.decisions.fleet import ReplicaSearch, size_option
from planner.decisions.fleet_recommendation import QuotedOption
from planner.deployment import Deployment
from planner.errors import InputError
from planner.launch import quoted_deployment
from planner.reports import quote_report
from planner.scenario import Scenario

#: Llama-3.1-70B on 8x H100 at TP 2 without a draft, the Fleet page's default traffic: its replicas queue for a
#: KV-cache slot, and p99 TTFT falls steeply with replicas near the 2 s objective, so draws disagree.
QUEUEING = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=2, max_model_len=1280)


def _search(dep, traffic, option, seed):
    return ReplicaSearch(dep, traffic, traffic.alpha if option.speculation else None, option.k, seed=seed)


def test_each_draw_gets_its_fewest_replicas_and_the_every_draw_count_meets_them_all():
    traffic = Scenario().traffic()
    option = size_option(QUEUEING, traffic, 3.0, None)
    check = count_across_draws(QUEUEING, traffic, option, draws=3)
    counts = [d.replicas for d in check.draws]
    assert counts[0] == option.replicas and check.quoted_nodes == option.nodes
    assert len(set(counts)) > 1, "this option's count depends on the draw"
    for seed, count in enumerate(counts):
        search = _search(QUEUEING, traffic, option, seed)
        assert not search.misses(search.at(count)), f"draw {seed + 1} meets the objectives at its count"
        assert search.misses(search.at(count - 1)), f"and misses them with one replica fewer (draw {seed + 1})"
        assert not search.misses(search.at(check.replicas_every_draw))
    assert check.replicas_every_draw == max(counts)
    assert check.nodes_every_draw == -(-max(counts) // QUEUEING.replicas_per_node)
    assert check.usd_per_month_every_draw == pytest.approx(check.nodes_every_draw * 8 * 3.0 * 730)
    assert check.describe().startswith(f"Sized on 3 draws of the same traffic (400 simulated requests each), this "
                                       f"option needs {counts[0]}, {counts[1]} and {counts[2]} replicas")  # fmt: skip


def test_the_quotes_own_draw_is_what_its_deployment_gives_again():
    """The deployment a caller rebuilds for a quoted option (with or without speculation) runs the quote's runs."""
    target, draft = get_model("Llama-3.1-8B"), get_model("meta-llama/Llama-3.2-1B")
    traffic = Traffic(requests_per_s=30, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.2, tpot_slo_s=0.02)
    plan = plan_fleet(target, [get_node("8x-h100-sxm-80gb")], traffic, draft=draft, engine="vllm")
    [quote] = plan.quotes
    for option in (quote.without_speculation, quote.with_speculation):
        assert option is not None and option.meets_slo
        quoted = QuotedOption(node=quote.node, tp=option.tp, gpu=quote.gpu, usd_per_gpu_hour=None, option=option)
        dep = quoted_deployment(target, quoted, traffic, draft=draft, engine="vllm")
        run = _search(dep, quote.traffic, option, 0).at(option.replicas)
        assert (run.ttft_at(99), run.tpot_at(99)) == (option.ttft_s, option.tpot_s)
    checks = options_across_draws(
        plan, lambda q: quoted_deployment(target, q, traffic, draft=draft, engine="vllm"), draws=2
    )
    assert [q.label for q, _ in checks] == [q.label for q in plan.meeting]
    assert all(len(c.draws) == 2 and c.draws[0].replicas == q.option.replicas for q, c in checks)


@pytest.mark.parametrize("draws", [1, 11, True, 2.5])
def test_a_number_of_draws_outside_two_to_ten_is_refused(draws):
    traffic = Scenario().traffic()
    option = size_option(QUEUEING, traffic, None, None)
    with pytest.raises(InputError) as caught:
        count_across_draws(QUEUEING, traffic, option, draws=draws)
    assert caught.value.field == "draws" and "from 2" in str(caught.value)


def test_an_option_that_misses_is_not_checked():
    traffic = Scenario().traffic().model_copy(update={"tpot_slo_s": 0.001})
    option = size_option(QUEUEING, traffic, None, None)
    assert not option.meets_slo
    with pytest.raises(InputError, match="meets the objectives"):
        count_across_draws(QUEUEING, traffic, option)


def test_the_quote_document_carries_the_check_in_every_format():
    target = get_model("Llama-3.1-70B")
    traffic = Scenario().traffic()
    plan = plan_fleet(target, [get_node("8x-h100-sxm-80gb")], traffic, engine="vllm")
    checks = options_across_draws(plan, lambda q: quoted_deployment(target, q, traffic, engine="vllm"), draws=2)
    report = quote_report(target.id, None, plan, draws=checks)
    [section] = [s for s in report.sections if s.title == "How much each count owes to one draw of the traffic"]
    table = section.table.formatted()
    assert list(table["Option"]) == [q.label for q in plan.meeting]
    assert table["Replicas in each draw"].str.fullmatch(r"[\d,]+, [\d,]+").all()
    assert "How much each count owes" in report.to_markdown()
    as_json = json.loads(json.dumps(report.to_json()))
    assert any(s.get("title") == section.title for s in as_json["sections"])
    # without the check the document has no such section
    assert not [s for s in quote_report(target.id, None, plan).sections if s.title == section.title]


def test_without_latency_objectives_the_count_is_the_capacity_bound_in_every_draw():
    """Nothing but throughput to meet: no draw needs fewer replicas than the traffic over one replica's capacity."""
    traffic = Scenario().traffic().model_copy(update={"ttft_slo_s": None, "tpot_slo_s": None})
    option = size_option(QUEUEING, traffic, None, None)
    assert option.meets_slo and option.replicas > 1 and option.limited_by.startswith("replica capacity")
    check = count_across_draws(QUEUEING, traffic, option, draws=3)
    assert [d.replicas for d in check.draws] == [option.replicas] * 3
    assert check.describe().endswith("the count does not depend on the draw")
