"""One question, one answer: a Fleet & Quote comparison of node types is what the design-space search's own sizing for
the traffic gives over the quote's configurations (:func:`quote_space`: each node type, its layouts, the scenario's
precision and the engine's batch cap, without speculation and with the scenario's draft at every K): two ways of
finding the cheapest fleet, the quote's (layout by layout, K by K, each cut short once it cannot win) and the
search's (candidates in order of the least their fleet can cost), over the same points."""

from __future__ import annotations

import pytest

from planner.catalog import get_model, get_node
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import compare_nodes, quote_space
from planner.decisions.search.traffic_sizing import sized_recommendation

DRAFT = "meta-llama/Llama-3.2-1B"
#: target, node types, traffic. The first is the Fleet page's default scenario on 8x H100, where the K that pays most
#: at the plain replica's batch (3) needs two nodes and K 2 one: the quote must size every K, as the search does.
CASES = {
    "70B default": (
        "Llama-3.1-70B",
        ("8x-h100-sxm-80gb",),
        Traffic(requests_per_s=20.0, prompt_tokens=1024, output_tokens=256, ttft_slo_s=2.0, tpot_slo_s=0.2),
    ),
    "8B interactive": (
        "Llama-3.1-8B",
        ("1x-h100-sxm-80gb", "1x-l40s-48gb"),
        Traffic(requests_per_s=30.0, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.5, tpot_slo_s=0.02),
    ),
    "8B batch": (
        "Llama-3.1-8B",
        ("1x-h100-sxm-80gb", "1x-l40s-48gb"),
        Traffic(requests_per_s=12.0, prompt_tokens=1024, output_tokens=256, ttft_slo_s=3.0, tpot_slo_s=0.08),
    ),
}


def _search_options(target_id: str, node_id: str, traffic: Traffic) -> dict[str, tuple[int, float] | None]:
    """GPUs and $/hour of the cheapest fleet the search sizes on ``node_id`` that meets the objectives, without
    speculation and with the draft (None: none meets them)."""
    evaluator = quote_space(get_model(target_id), get_node(node_id), traffic, draft=get_model(DRAFT), engine="vllm")
    points = evaluator.points()
    for p in points:
        evaluator.plan(p)
    fitting = [p for p in points if p.fits and p.starts]
    out = {}
    for name, group in (("plain", [p for p in fitting if p.method == "none"]),
                        ("spec", [p for p in fitting if p.draft == DRAFT])):  # fmt: skip
        # every point simulated first: the bound of an unsimulated point then plays no part
        for p in group:
            evaluator.simulate(p)
        sized = sized_recommendation(evaluator, group)
        out[name] = None if sized.fleet is None else (sized.fleet.gpus, sized.fleet.usd_per_hour)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_each_node_types_quote_is_the_searchs_cheapest_fleet_of_the_same_configurations(case):
    target, nodes, traffic = CASES[case]
    quotes, unusable = compare_nodes(
        get_model(target), [get_node(n) for n in nodes], traffic, draft=get_model(DRAFT), engine="vllm"
    )
    assert not unusable
    for quote in quotes:
        searched = _search_options(target, quote.node, traffic)
        for option, name in ((quote.without_speculation, "plain"), (quote.with_speculation, "spec")):
            ours = (option.gpus, option.usd_per_hour) if option is not None and option.meets_slo else None
            assert ours == searched[name], (quote.node, name, option and option.k)
