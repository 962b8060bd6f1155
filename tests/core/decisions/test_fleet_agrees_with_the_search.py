"""One question, one answer: a Fleet & Quote comparison of node types is what the design-space search gives when it is
restricted to the quote's configurations (each node type, its TP layouts, the scenario's precision and batch cap,
without speculation and with the scenario's draft at every K), each option sized for the traffic."""

from __future__ import annotations

import pytest

from planner.catalog import get_model, get_node
from planner.decisions.fleet import Traffic
from planner.decisions.fleet_quotes import compare_nodes
from planner.decisions.search import Objectives, SearchSpace, SearchWorkload, search
from planner.decisions.search.traffic_sizing import sized_recommendation
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile, resolve_limits

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
    target, draft, node = get_model(target_id), get_model(DRAFT), get_node(node_id)
    dep = Deployment.on_node(target, node, tp=1, draft=draft)
    cap = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version)).max_num_seqs
    space = SearchSpace.build(
        target=target_id, nodes=(node_id,), methods=("none", "draft_model"), dtypes=("bf16",), batch_caps=(cap,)
    )
    workload = SearchWorkload(
        requests_per_s=traffic.requests_per_s, prompt_tokens=traffic.prompt_tokens, output_tokens=traffic.output_tokens
    )
    objectives = Objectives(ttft_slo_s=traffic.ttft_slo_s, tpot_slo_s=traffic.tpot_slo_s, percentile=traffic.percentile)
    found = search(space, workload, objectives)
    fitting = [p for p in found.points if p.fits and p.starts]
    out = {}
    for name, points in (("plain", [p for p in fitting if p.method == "none"]),
                         ("spec", [p for p in fitting if p.draft == DRAFT])):  # fmt: skip
        # every point simulated first: the bound of an unsimulated point then plays no part
        for p in points:
            found.evaluator.simulate(p)
        sized = sized_recommendation(found.evaluator, points)
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
