"""The app's scenario: a typed, validated model that builds the same Deployment the CLI would."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import Deployment, PlannerError, Scenario, get_model, get_node
from planner.catalog import model_from_config
from planner.input_types import INPUT_BOUNDS
from planner.scenario import QUERY_KEYS
from tests.conftest import TINY_LLAMA


def test_default_scenario_is_the_cli_deployment():
    built = Scenario().deployment()
    expected = Deployment.on_node(
        get_model("Llama-3.1-70B"),
        get_node("8x-h100-sxm-80gb"),
        draft=get_model("Llama-3.2-1B"),
        tp=8,
        max_model_len=8192,
    )
    assert built == expected


def test_knobs_reach_the_deployment():
    s = Scenario(
        draft_tp_one=True,
        dtype="fp8",
        kv_dtype="fp8",
        engine="sglang",
        memory_fraction=0.8,
        k=3,
        max_num_seqs=64,
        gpu_memory_gib=79.1,
    )
    dep = s.deployment()
    assert (dep.draft_tp, dep.dtype, dep.kv_dtype, dep.engine) == (1, "fp8", "fp8", "sglang")
    assert (dep.memory_fraction, dep.num_speculative_tokens, dep.max_num_seqs) == (0.8, 3, 64)
    assert dep.gpu_memory_bytes == round(79.1 * 2**30)


def test_without_a_draft_the_draft_knobs_are_dropped():
    dep = Scenario(draft=None, draft_tp_one=True, draft_dtype="fp8").deployment()
    assert dep.draft is None and dep.draft_tp is None and dep.draft_dtype is None


def test_imported_models_are_looked_up_first():
    spec = model_from_config(TINY_LLAMA, model_id="my-tiny")
    dep = Scenario(target="my-tiny", draft=None, node="1x-h100-sxm-80gb", tp=1).deployment({"my-tiny": spec})
    assert dep.target is spec


def test_bad_input_names_the_field():
    with pytest.raises(PlannerError) as err:
        Scenario.build(tp=0)
    assert err.value.field == "tp"
    with pytest.raises(PlannerError, match="no-such-node"):
        Scenario(node="no-such-node").deployment()


_fields = st.fixed_dictionaries(
    {},
    optional={
        "target": st.sampled_from(["meta-llama/Llama-3.1-8B", "Qwen/Qwen3-8B"]),
        "draft": st.sampled_from([None, "meta-llama/Llama-3.2-3B"]),
        "tp": st.integers(1, 64),
        "draft_tp_one": st.booleans(),
        "dtype": st.sampled_from([None, "fp8", "int4-awq"]),
        "memory_fraction": st.floats(*INPUT_BOUNDS["memory_fraction"]),
        "max_model_len": st.integers(16, 2**31 - 1),
        "gpu_memory_gib": st.floats(0.1, 1e6),
        "acceptance_mode": st.sampled_from(["alpha", "mean_accepted_len"]),
        "acceptance": st.floats(0, 65),
        "fleet_nodes": st.lists(st.sampled_from(["8x-h100-sxm-80gb", "1x-l4-24gb"]), max_size=3).map(tuple),
        "fleet_alpha": st.floats(0, 1),
    },
)


@settings(max_examples=60, derandomize=True)
@given(_fields)
def test_a_scenario_round_trips_through_its_link(fields):
    scenario = Scenario(**fields)
    query = scenario.to_query()
    assert set(query) <= set(QUERY_KEYS.values())
    assert Scenario.from_query(query) == (scenario, [])


def test_a_link_value_that_is_not_valid_is_named_and_replaced():
    scenario, problems = Scenario.from_query({"tp": "0", "d": "none", "t": "nope", "zz": "1"})
    assert scenario == Scenario(draft=None)
    assert len(problems) == 3
    assert "tensor parallel size (tp='0')" in problems[0]
    assert "'zz'" in problems[-1] or "'zz'" in " ".join(problems)


def test_max_model_len_above_the_targets_context_is_a_problem():
    assert "131,072" in Scenario(max_model_len=131_073).context_problem()
    assert Scenario(max_model_len=131_072).context_problem() is None


def test_a_draft_free_method_travels_in_the_link_and_replaces_the_draft():
    scenario, problems = Scenario.from_query({"m": "ngram"})
    assert problems == [] and scenario.to_query() == {"m": "ngram"}
    dep = scenario.deployment()
    assert dep.draft is None and dep.speculative_method == "ngram"
    bad, problems = Scenario.from_query({"m": "medusa"})
    assert bad.method is None and "draft-free method" in problems[0]
