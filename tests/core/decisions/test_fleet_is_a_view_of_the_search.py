"""A Fleet & Quote comparison is a view of the design-space search: every option it quotes is one of the search's
points, sized as the search sizes a point; a speculator the search does not try is not quoted, and the quote says
why; layouts the search tries only in pipeline stages are quoted in them."""

from __future__ import annotations

import json

import pytest

from planner.catalog import get_model, get_node
from planner.catalog.importing import model_from_config
from planner.decisions import plan_fleet
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import compare_nodes, fleet_quote, quote_space
from planner.decisions.fleet_recommendation import QuotedOption
from planner.decisions.search.traffic_sizing import size_point
from planner.deployment import Deployment
from planner.launch import quoted_deployment
from planner.speed.step_cache import replica_plan

TARGET, DRAFT = "Llama-3.1-8B", "meta-llama/Llama-3.2-1B"
TRAFFIC = Traffic(requests_per_s=12.0, prompt_tokens=1024, output_tokens=256, ttft_slo_s=3.0, tpot_slo_s=0.08)
NODES = ("1x-h100-sxm-80gb", "1x-l40s-48gb")


@pytest.mark.slow
def test_every_quoted_option_is_a_point_of_the_search_sized_as_the_search_sizes_it():
    target, draft = get_model(TARGET), get_model(DRAFT)
    quotes, unusable = compare_nodes(target, [get_node(n) for n in NODES], TRAFFIC, draft=draft, engine="vllm")
    assert not unusable and len(quotes) == len(NODES)
    for quote in quotes:
        evaluator = quote_space(target, get_node(quote.node), TRAFFIC, draft=draft, engine="vllm")
        points = evaluator.points()
        assert {p.k for p in points if p.method != "none"} == set(range(1, 9)), "the search's K axis"
        for option in (quote.without_speculation, quote.with_speculation):
            assert option is not None
            [point] = [
                p for p in points if (p.tp, p.pp, p.k) == (option.tp, option.pp, option.k) and
                (p.method != "none") == option.speculation
            ]  # fmt: skip
            assert size_point(evaluator, point) == option


def test_a_draft_the_search_would_not_try_is_not_quoted_and_the_quote_says_why():
    # another tokenizer: the engine rejects the pair, so the search never proposes it
    quote = fleet_quote(
        Deployment.on_node(get_model(TARGET), get_node("1x-h100-sxm-80gb"), draft=get_model("Qwen/Qwen2.5-0.5B")),
        TRAFFIC,
    )
    assert quote.with_speculation is None and not quote.speculation_chosen
    assert any("incompatible" in note for note in quote.notes), quote.notes


def test_the_users_acceptance_is_the_searchs_and_the_quotes():
    traffic = TRAFFIC.model_copy(update={"alpha": 0.5})
    target, draft, node = get_model(TARGET), get_model(DRAFT), get_node("1x-h100-sxm-80gb")
    points = quote_space(target, node, traffic, draft=draft).points()
    assert {p.alpha for p in points if p.method != "none"} == {0.5}
    quote = fleet_quote(Deployment.on_node(target, node, draft=draft), traffic)
    assert quote.alpha_basis.startswith("α = 0.50") and "your value" in quote.alpha_basis


@pytest.mark.slow
def test_a_layout_the_search_tries_in_pipeline_stages_is_quoted_in_them_and_launched_so():
    # Llama-3.1-70B in BF16 does not fit TP 2 on 48 GB GPUs; in two pipeline stages of TP 2 it does
    target, node = get_model("Llama-3.1-70B"), get_node("8x-l40s-48gb")
    traffic = Traffic(requests_per_s=0.5, prompt_tokens=512, output_tokens=128, ttft_slo_s=5.0, tpot_slo_s=0.5)
    quote = fleet_quote(Deployment.on_node(target, node, tp=2, pp=2), traffic)
    option = quote.without_speculation
    assert (quote.tp, quote.pp, option.tp, option.pp, option.layout) == (2, 2, 2, 2, "TP 2 PP 2")
    assert quote.replicas_per_node == 2
    quoted = QuotedOption(node=quote.node, tp=option.tp, pp=option.pp, gpu=quote.gpu, usd_per_gpu_hour=None,
                          option=option)  # fmt: skip
    assert "TP 2 PP 2" in quoted.label
    dep = quoted_deployment(target, quoted, traffic)
    assert (dep.tp, dep.pp) == (2, 2)


def test_an_imported_draft_is_quoted_through_the_search(tmp_path):
    config = dict(get_model(DRAFT).config, _name_or_path="acme/llama-draft-1b")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    draft = model_from_config(path)
    target, node = get_model(TARGET), get_node("1x-h100-sxm-80gb")
    plan = plan_fleet(target, [node], TRAFFIC, draft=draft)
    quote = plan.quotes[0]
    assert quote.with_speculation is not None, quote.notes
    assert "acme/llama-draft-1b" in quote.alpha_basis
    points = quote_space(target, node, TRAFFIC, draft=draft).points()
    assert {p.draft for p in points if p.method != "none"} == {"acme/llama-draft-1b"}


def test_a_quote_of_one_deployment_keeps_its_other_settings():
    """``fleet_quote(dep)`` searches around ``dep``: its memory fraction and batch cap are the quote's (the KV cache
    and the cap a replica runs with), its max model length the longest request."""
    target, node = get_model(TARGET), get_node("1x-h100-sxm-80gb")
    dep = Deployment.on_node(target, node, memory_fraction=0.6, max_num_seqs=32)
    quote = fleet_quote(dep, TRAFFIC)
    sized = dep.replace(max_model_len=TRAFFIC.prompt_tokens + TRAFFIC.output_tokens)
    assert quote.kv_concurrency_limit == replica_plan(sized).max_concurrency
    assert quote.kv_concurrency_limit < fleet_quote(Deployment.on_node(target, node), TRAFFIC).kv_concurrency_limit
    assert quote.without_speculation.batch_size <= 32
