"""bench/kv_cases.py: start-up log rows that speculate with a head become deployments that load the head.

On vLLM V1 (and V0) an EAGLE / EAGLE-3 head's layers join the target's block pool and its weights count
against the budget, so a row is expressible when it names a catalog head; otherwise it is skipped with the
head's name in the reason. The rows here are synthetic (no logged figures): they test the parsing only.
"""

from __future__ import annotations

from bench.kv_cases import case_from_row, load_cases
from planner.catalog.lookup import get_model
from planner.memory import plan_memory

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _row(**changes) -> dict:
    row = {
        "case_id": "synthetic-head",
        "engine": "vLLM V1",
        "engine_version": "0.19.0",
        "model": "meta-llama/Llama-3.1-8B",
        "gpu_type": "NVIDIA H100 80GB HBM3",
        "tensor_parallel_size": "1",
        "max_model_len": "16384",
        "speculative_config": f"SpeculativeConfig(method='eagle3', model='{HEAD}', num_spec_tokens=4)",
    }
    return {**row, **changes}


def test_a_v1_row_naming_a_catalog_head_loads_the_head_on_the_shared_pool():
    case = case_from_row(_row(), "synthetic.csv")
    assert case.reason is None
    dep = case.deployment
    assert dep.draft.id == HEAD and dep.speculative_method == "eagle3" and dep.num_speculative_tokens == 4
    plan = plan_memory(dep, with_suggestions=False)
    # Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes; the head adds its one layer to every token
    assert plan.kv_bytes_per_token_per_gpu == 131072 + 4096
    assert plan.stages[0].draft_weights_bytes > 0


def test_a_head_named_only_in_the_notes_is_found_there():
    row = _row(speculative_config="SpeculativeConfig(method='eagle3', ..., num_spec_tokens=3)", notes=f"head: {HEAD}")
    dep = case_from_row(row, "synthetic.csv").deployment
    assert dep.draft.id == HEAD and dep.num_speculative_tokens == 3


def test_a_head_outside_the_catalog_or_unnamed_is_skipped_with_the_reason():
    missing = case_from_row(
        _row(speculative_config="SpeculativeConfig(method='eagle3', model='acme/not-a-head', num_spec_tokens=3)"),
        "synthetic.csv",
    )
    assert missing.deployment is None and "'acme/not-a-head' is not in the catalog" in missing.reason
    unnamed = case_from_row(_row(speculative_config="SpeculativeConfig(method='eagle3', num_spec_tokens=3)"), "x")
    assert unnamed.deployment is None and "names no eagle3 head" in unnamed.reason


def test_a_plain_model_named_as_the_head_is_refused():
    row = _row(speculative_config="SpeculativeConfig(method='eagle3', model='meta-llama/Llama-3.2-1B')")
    assert get_model("meta-llama/Llama-3.2-1B").speculator is None
    case = case_from_row(row, "synthetic.csv")
    assert case.deployment is None and "is not an eagle3 head" in case.reason


def test_the_5070ti_eagle3_rows_name_their_head_and_wait_for_its_config():
    # The logged head, RedHatAI/Qwen3-8B-Thinking-speculator.eagle3, has no verbatim public config.json in the
    # catalog yet: both releases' rows say so instead of being dropped.
    rows = {c.case_id: c for c in load_cases() if c.case_id.startswith("doc-5070ti-qwen3-8b-awq-eagle3")}
    assert set(rows) == {"doc-5070ti-qwen3-8b-awq-eagle3-v030", "doc-5070ti-qwen3-8b-awq-eagle3-v031"}
    for case in rows.values():
        assert "RedHatAI/Qwen3-8B-Thinking-speculator.eagle3" in case.reason
    assert rows["doc-5070ti-qwen3-8b-awq-eagle3-v031"].logged.kv_cache_tokens == 30784
