"""The app's scenario: a typed, validated model that builds the same Deployment the CLI would."""

from __future__ import annotations

import pytest

from planner import Deployment, PlannerError, Scenario, get_model, get_node
from planner.catalog import model_from_config
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
