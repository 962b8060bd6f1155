"""A quote and a search run the engine release they are asked for, as the Sizing page sizes it: one truth per release.

vLLM 0.19 keeps 0.9 of the GPU and subtracts no CUDA-graph estimate; 0.34 sizes its KV cache from the memory measured
free after warm-up (data/engines.json), so Llama-3.1-8B on one H100 holds fewer requests' KV under 0.19.
"""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions import plan_fleet
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import compare_nodes, quote_space
from planner.decisions.search import SearchSpace
from planner.deployment import Deployment
from planner.errors import InputError
from planner.launch import quoted_deployment
from planner.speed.step_cache import replica_plan

TARGET, NODE = get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb")
TRAFFIC = Traffic(requests_per_s=2, prompt_tokens=1024, output_tokens=256)


def _sized(release: str | None, tp: int) -> float:
    """What the Sizing page's memory plan gives the quote's replica (its max model length the longest request)."""
    fields = {"engine_version": release} if release else {}
    dep = Deployment.on_node(TARGET, NODE, tp=tp, max_model_len=1024 + 256, **fields)
    return replica_plan(dep).max_concurrency


@pytest.mark.parametrize("release", [None, "0.19.0"])
def test_a_quote_sizes_its_replicas_with_the_release_asked_for(release):
    fields = {"engine_version": release} if release else {}
    quote = plan_fleet(TARGET, [NODE], TRAFFIC, **fields).quotes[0]
    assert quote.kv_concurrency_limit == pytest.approx(_sized(release, quote.tp))
    profile = "vllm-v1-0.10" if release else "vllm-v1-0.34"
    assert f"(profile {profile})" in quote.engine_release
    assert any(quote.engine_release in note for note in quote.notes)  # the page's assumptions and the documents


def test_the_release_changes_the_quote_as_it_changes_the_sizing():
    newest = plan_fleet(TARGET, [NODE], TRAFFIC).quotes[0]
    older = plan_fleet(TARGET, [NODE], TRAFFIC, engine_version="0.19.0").quotes[0]
    assert older.kv_concurrency_limit < newest.kv_concurrency_limit
    assert older.kv_concurrency_limit / newest.kv_concurrency_limit == pytest.approx(
        _sized("0.19.0", older.tp) / _sized(None, newest.tp)
    )


def test_the_launch_of_a_quoted_option_runs_its_release():
    plan = plan_fleet(TARGET, [NODE], TRAFFIC, engine_version="0.19.0")
    dep = quoted_deployment(TARGET, plan.recommended, TRAFFIC, engine="vllm", engine_version="0.19.0")
    assert dep.engine_version == "0.19.0"


def test_every_point_of_a_search_runs_the_release():
    evaluator = quote_space(TARGET, NODE, TRAFFIC, engine="vllm", engine_version="0.19.0")
    deps = [evaluator.deployment(p) for p in evaluator.points()]
    assert deps and {d.engine_version for d in deps} == {"0.19.0"}


def test_a_release_the_engine_never_had_is_refused_once_naming_the_ranges():
    with pytest.raises(InputError) as err:
        compare_nodes(TARGET, [NODE, get_node("8x-h100-sxm-80gb")], TRAFFIC, engine="vllm", engine_version="0.5.0")
    assert err.value.field == "engine_version"
    assert "[0.10.0, 0.20.0)" in str(err.value) and "0.34.0 or later" in str(err.value)
    assert "99.0.0" not in str(err.value)  # the data's open end is not a release


def test_a_search_of_several_engines_takes_no_single_release():
    with pytest.raises(InputError) as err:
        SearchSpace.build(target=TARGET.id, engines=("vllm", "sglang"), engine_version="0.19.0")
    assert err.value.field == "engine_version" and "vllm, sglang" in str(err.value)
    with pytest.raises(InputError, match="engine_version"):
        SearchSpace.build(target=TARGET.id, engines=("sglang",), engine_version="0.3.6")
    assert SearchSpace.build(target=TARGET.id, engines=("sglang",), engine_version="0.5.20").release() == "0.5.20"


def test_a_release_past_every_profiled_range_takes_the_open_ended_newest():
    # the newest profile covers "0.34.0 on", so a later release is sized by it rather than refused as outside it
    assert (
        plan_fleet(TARGET, [NODE], TRAFFIC, engine_version="100.0.0")
        .quotes[0]
        .engine_release.endswith("vLLM (V1 engine) from 0.34.0 on (profile vllm-v1-0.34)")
    )
