"""Validation page: stored records load back into it, the log check works, and no GPU is said plainly."""

from __future__ import annotations

import pytest

from planner.measure.record import save_record
from tests.app.conftest import page
from tests.conftest import ENGINE_LOGS
from tests.measure_records import sample_record

LOG = ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log"


@pytest.fixture
def stored(tmp_store):
    """Two records written the way the harness writes them, in a tmp folder and store the page reads."""
    folder, store = tmp_store.parent / "measurements", tmp_store
    first = sample_record(gpu="h100-sxm-80gb", target="Llama-3.1-8B", draft="Llama-3.2-1B")
    second = sample_record(
        gpu="a100-sxm-80gb",
        created_at="2026-02-03T04:05:06Z",
        target="Qwen2.5-7B",
        draft="Qwen2.5-0.5B",
        counts={"chat": [0, 1, 0], "code": [4, 4, 4]},
    )
    save_record(first, folder, store_path=store)
    save_record(second, folder, store_path=store)
    return first, second


def test_records_load_back_into_the_page(stored):
    first, second = stored
    at = page("validation.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert "Qwen2.5-7B + Qwen2.5-0.5B" in set(table["Target + draft"])
    assert set(at.dataframe[1].value["Record"]) == {first.id, second.id}  # under "Details"
    assert not any("_" in c for c in table.columns)
    assert len(at.get("plotly_chart")) >= 5  # memory, speed, timeline, positions, tasks
    assert any("No GPU on this machine" in w.value for w in at.warning) or any(
        "GPU on this machine" in i.value for i in at.info
    )


def test_filters_by_gpu_and_pair(stored):
    first, _ = stored
    at = page("validation.py").run()
    at.multiselect(key="validation_gpus").set_value(["h100-sxm-80gb"]).run()
    assert list(at.dataframe[1].value["Record"]) == [first.id]
    at.multiselect(key="validation_pairs").set_value(["Qwen2.5-7B + Qwen2.5-0.5B"]).run()
    assert at.dataframe[0].value.empty


def test_verdict_table_uses_the_rule(stored):
    at = page("validation.py").run()
    at.selectbox(key="validation_record").select_index(0).run()  # newest first: the Qwen record
    verdicts = {row["Task"]: row["Verdict"] for row in at.dataframe[2].value.to_dict("records")}
    assert verdicts == {"chat": "disable", "code": "recommend"}


def test_without_records_the_page_says_where_it_looked(tmp_store):
    at = page("validation.py").run()
    assert not at.exception and any("No records yet" in i.value for i in at.info)


def test_pasted_log_is_checked_against_the_plan(tmp_store):
    at = page("validation.py").run()
    at.text_area(key="validation_log_text").input(LOG.read_text()).run()
    assert not any(s.value.startswith("Planner") for s in at.success)  # parsed on submit, not on every keystroke
    at.text_area(key="validation_log_text").input(LOG.read_text())
    at.button(key="validation_log_submit").click().run()
    assert not at.exception and not at.error
    assert any("vllm-v1-0.10" in s.value for s in at.success)
    rows = {r["Quantity"]: r for r in at.dataframe[-1].value.to_dict("records")}
    assert abs(rows["KV cache tokens"]["Error"]) < 0.01
    facts = at.dataframe[-2].value
    assert list(facts.columns) == ["Fact", "Value", "Log line"] and not any("_" in f for f in facts["Fact"])
    assert "KV cache (GiB)" in set(facts["Fact"])  # bytes in GiB, never a raw byte count


def test_a_bad_model_in_the_log_panel_is_a_message_not_a_traceback(tmp_store):
    at = page("validation.py").run()
    at.text_input(key="validation_log_model").input("no-such-model-xyz")
    at.text_area(key="validation_log_text").input(LOG.read_text())
    at.button(key="validation_log_submit").click().run()
    assert not at.exception and at.error
