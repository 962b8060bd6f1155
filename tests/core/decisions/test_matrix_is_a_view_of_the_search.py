"""The decision matrix is a view of the design-space search: its compatible candidates are exactly the search's
speculators around the scenario's deployment, each row's memory is the search's plan of that point, its α the
search's; the candidates the search leaves out are listed as incompatible, with the check that fails."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.space import NO_OBJECTIVES, SearchSpace, SearchWorkload
from planner.decisions.selection import decision_matrix
from planner.deployment import Deployment

SCENARIOS = {
    "70B on 8x H100, TP 4, fp8 KV": Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4, kv_dtype="fp8", max_model_len=8192
    ),
    "8B on two A100s given by GPU, memory fraction 0.8": Deployment.build(
        target=get_model("Llama-3.1-8B"),
        gpu=get_gpu("a100-sxm-80gb"),
        gpu_count=2,
        tp=2,
        max_model_len=4096,
        memory_fraction=0.8,
        max_num_seqs=64,
        num_speculative_tokens=3,
    ),
    "8B in two pipeline stages of TP 2 on 8x H100": Deployment.on_node(
        get_model("Llama-3.1-8B"), get_node("8x-h100-sxm-80gb"), tp=2, pp=2, max_model_len=4096
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_matrix_rows_are_the_searchs_points_around_the_scenario(name):
    base = SCENARIOS[name]
    matrix = decision_matrix(base, batch_size=8, alpha=0.7, measured_alphas={"ngram": 0.35})
    space = SearchSpace.build(
        target=base.target.id, nodes=(base.node_id or "its GPUs",), engines=(base.engine,),
        methods=("none", "draft_model", "eagle", "eagle3", "mtp", "ngram"), ks=(base.num_speculative_tokens,),
        dtypes=(f"{base.target_format.id}:{base.kv_dtype}",), tps=(base.tp,),
        batch_caps=(base.max_num_seqs,) if base.max_num_seqs else None, entered_alpha=0.7,
        measured_alphas={"ngram": 0.35}, base=base,
    )  # fmt: skip
    evaluator = Evaluator(space, SearchWorkload(concurrency=1, prompt_tokens=1024, output_tokens=128), NO_OBJECTIVES)
    points = {p.draft or p.method: p for p in evaluator.points() if p.method != "none"}
    compatible = {r.draft if r.method not in ("ngram", "mtp") else r.method: r for r in matrix.rows
                  if r.verdict != "incompatible"}  # fmt: skip
    assert set(compatible) == set(points) and points, "the same candidates"
    for key, row in compatible.items():
        point = points[key]
        evaluator.plan(point)
        dep = evaluator.deployment(point)
        assert (dep.max_model_len, dep.memory_fraction, dep.gpu_count) == (
            base.max_model_len,
            base.memory_fraction,
            base.gpu_count,
        ), "the scenario's other settings kept"
        assert (row.kv_cache_tokens, row.fits) == (point.kv_cache_tokens, point.fits)
        assert row.alpha == point.alpha
    assert compatible["ngram"].alpha == 0.35 and compatible["ngram"].alpha_source == "measured"
    learned = [r for k, r in compatible.items() if k != "ngram"]
    assert learned and all(r.alpha == 0.7 and r.alpha_source == "entered" for r in learned)
    left_out = [r for r in matrix.rows if r.verdict == "incompatible"]
    assert left_out and all(any(c.status == "fail" for c in r.checks) for r in left_out)
