"""One label/format table for every page's table: each column a page shows has a header in words with its unit,
values in words, the deciding columns first (few enough to fit 1440 px) and the rest under "Details"."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.catalog import list_models, model_facts
from planner.catalog.lookup import get_model, get_node
from planner.decisions import decision_matrix, matrix_table
from planner.deployment import Deployment
from planner.reports import COLUMNS, MAIN_COLUMNS, gpus_table, models_table, nodes_table, screen_table
from planner.reports.charts import log_check_frame, records_frame
from planner.reports.tables import column, log_facts_view
from planner.validation import check_log, parse_engine_log
from tests.conftest import ENGINE_LOGS

LOG = (ENGINE_LOGS / "vllm-v1-019-llmd-llama31-8b-16k.log").read_text()


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    base = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8)
    return {
        "models": models_table(model_facts(m) for m in list_models()[:5]),
        "gpus": gpus_table(),
        "nodes": nodes_table(),
        "matrix": matrix_table(decision_matrix(base, batch_size=8, alpha=0.7)),
        "records": records_frame([]).reindex(columns=list(MAIN_COLUMNS["records"])),
        "log": log_check_frame(check_log(LOG)),
    }


@pytest.mark.parametrize("kind", ["models", "gpus", "nodes", "matrix", "records", "log"])
def test_every_header_is_in_words_with_its_unit(tables, kind):
    view = screen_table(tables[kind], kind)
    headers = [*view.main.columns, *(view.details.columns if view.details is not None else [])]
    assert not [h for h in headers if "_" in h or "@" in h or h != h.strip() or h[:1].islower()], headers
    assert len(view.main.columns) <= 9  # the deciding columns fit a 1440 px wide page


def test_units_are_in_the_headers_and_formats_come_from_one_table(tables):
    view = screen_table(tables["models"], "models")
    assert "Parameters (B)" in view.main.columns and view.formats["Parameters (B)"] == "%.3f"
    assert "Weights, bf16 (GB)" in view.main.columns
    matrix = screen_table(tables["matrix"], "matrix")
    assert list(matrix.main.columns)[:4] == ["Rank", "Draft", "Compatibility", "Speedup at batch 8 (x)"]
    assert "Draft weights / GPU (GiB)" in matrix.main.columns
    learned = matrix.main[~matrix.main["Draft"].str.contains("n-gram")]
    assert set(learned["Source of α"].dropna()) == {"your value"}  # a typed α, never "measured"
    assert "compatible_with_warnings" not in set(matrix.main["Compatibility"])
    assert column("speedup @ batch 64").label == "Speedup at batch 64 (x)"
    assert all(not c.format or c.format == "percent" or c.format.startswith("%") for c in COLUMNS.values())


def test_log_facts_show_bytes_in_gib_never_as_a_byte_count():
    facts = parse_engine_log(LOG)
    view = log_facts_view(facts)
    kv = view[view["Fact"] == "KV cache (GiB)"].iloc[0]
    assert kv["Value"] == f"{facts.kv_cache_bytes / 2**30:,.2f}"
    assert not view["Fact"].str.contains("bytes|_").any()
