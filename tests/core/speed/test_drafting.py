"""Drafting shapes: chain, tree and n-gram steps, and what they cost and emit."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner import acceptance_math as spec
from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.speed import DraftShape, EngineStep, SpeedWorkload, estimate_speed


@given(
    alpha=st.floats(0, 1),
    depth=st.integers(1, 8),
    topk=st.integers(1, 8),
    extra=st.integers(0, 40),
)
def test_a_tree_emits_at_least_a_chain_and_at_most_its_depth_plus_one(alpha, depth, topk, extra):
    widths = spec.tree_widths(depth, topk, depth + 1 + extra)
    tree = spec.tree_tokens_per_step(alpha, widths)
    chain = spec.expected_tokens_per_step(alpha, depth)
    assert chain - 1e-12 <= tree <= depth + 1 + 1e-12
    assert all(1 <= w <= topk for w in widths) and sum(widths) <= depth + extra


def test_tree_needs_a_head():
    with pytest.raises(PlannerError) as err:
        DraftShape.build(method="ngram", verification="tree", k=3)
    assert err.value.field == "verification"


@pytest.mark.parametrize("name", ["tree_topk", "tree_verify_tokens"])
def test_a_tree_setting_on_a_chain_is_refused_naming_it(name):
    """A tree's branching or budget given for a chain would be silently ignored: refused instead, naming the field."""
    with pytest.raises(PlannerError) as err:
        SpeedWorkload.build(alpha=0.7, k=3, verification="chain", **{name: 4})
    assert err.value.field == name and "verification tree" in str(err.value)
    tree = SpeedWorkload.build(alpha=0.7, k=3, verification="tree", **{name: 4})
    assert tree.draft_shape("eagle3", 3).verify_tokens >= 4


def test_a_tree_top_k_out_of_range_is_named_in_words():
    with pytest.raises(PlannerError) as err:
        SpeedWorkload.build(alpha=0.7, k=3, verification="tree", tree_topk=100).draft_shape("eagle3", 3)
    assert "Tree top-k" in str(err.value) and "64" in str(err.value)


def _dep(**fields):
    return Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, **fields)


def test_ngram_step_has_no_draft_pass_and_verifies_k_plus_one():
    engine = EngineStep(_dep().with_method("ngram"))
    step = engine.speculative(4, decode_seqs=8, decode_context_tokens=8 * 1024)
    assert [name for name, _ in step.passes] == ["target verify"]
    assert step.passes[0][1].total_s > engine.plain(decode_seqs=8, decode_context_tokens=8 * 1024).total_s


def test_ngram_estimate_reports_its_method_and_no_draft_cost():
    est = estimate_speed(_dep().with_method("ngram"), SpeedWorkload.build(alpha=0.7, k=4))
    assert est.method == "ngram" and est.draft == "n-gram lookup" and est.steps.draft_decode is None
    assert est.speedup_by_verification.keys() == {"chain"} and est.speedup > 1


def test_tree_verifies_its_budget_and_emits_more_per_step():
    dep = Deployment.on_node(get_model("DeepSeek-V3"), get_node("8x-h200-sxm-141gb"), tp=8).with_method("mtp")
    chain = estimate_speed(dep, SpeedWorkload.build(alpha=0.8, k=3))
    tree = estimate_speed(
        dep, SpeedWorkload.build(alpha=0.8, k=3, verification="tree", tree_topk=4, tree_verify_tokens=8)
    )
    assert (chain.verify_tokens, tree.verify_tokens) == (4, 8)
    assert tree.tree_widths == (4, 2, 1) and tree.expected_tokens_per_step > chain.expected_tokens_per_step
    assert tree.speedup_by_verification["chain"] == pytest.approx(chain.speedup)
    assert tree.speedup == pytest.approx(tree.speedup_by_verification["tree"])
