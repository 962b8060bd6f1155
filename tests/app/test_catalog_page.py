"""Catalog page behaviour: search filters, computed numbers shown, custom config.json import."""

from __future__ import annotations

import json

from planner.catalog import list_models
from tests.app.conftest import page


def test_models_table_shows_exact_counts_and_filters():
    at = page("catalog.py").run()
    table = at.dataframe[0].value
    row = table[table["Model"] == "meta-llama/Llama-3.1-70B"].iloc[0]
    assert abs(row["Parameters (B)"] - 70.553706496) < 1e-9
    assert abs(row["Weights, bf16 (GB)"] - 141.107412992) < 1e-9
    assert row["KV cache per token, bf16 (KiB)"] == 320
    assert list(table.columns)[:3] == ["Model", "Size class", "Parameters (B)"] and len(table.columns) <= 8
    details = at.dataframe[1].value
    assert "Layers" in details.columns and not any("_" in c for c in [*table.columns, *details.columns])
    at.text_input(key="catalog_query").input("gemma").run()
    filtered = at.dataframe[0].value
    gemmas = [m.id for m in list_models() if "gemma" in m.id.lower()]
    assert len(filtered) == len(gemmas) >= 4 and all("gemma" in m for m in filtered["Model"])


def test_gpu_table_lists_reported_memory():
    at = page("catalog.py").run()
    gpus = at.dataframe[2].value
    assert "h100-sxm-80gb" in set(gpus["GPU"])
    assert (gpus["Memory software sees (GiB)"] < gpus["Marketed memory (GB)"] * 1.0).all()


def test_uploaded_config_shows_the_same_numbers():
    at = page("catalog.py").run()
    cfg = {
        "model_type": "falcon",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "vocab_size": 500,
    }
    at.file_uploader(key="catalog_upload").set_value(("config.json", json.dumps(cfg).encode(), "application/json"))
    at.run()
    assert not at.exception
    assert "meta-device" in at.success[0].value
    imported = at.dataframe[-1].value  # the import's "Details"
    assert imported.iloc[0]["Architecture"] == "falcon"


def test_bad_upload_is_a_message_not_a_traceback():
    at = page("catalog.py").run()
    at.file_uploader(key="catalog_upload").set_value(("config.json", b"{broken", "application/json"))
    at.run()
    assert not at.exception
    assert "not JSON" in at.error[0].value
