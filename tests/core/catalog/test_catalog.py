"""The catalog in data/: valid, sourced, complete, and looked up the way users type ids."""

from __future__ import annotations

import json

import pytest

from planner import facts
from planner.catalog import lookup as catalog
from planner.catalog.hardware import device_total_bytes
from planner.errors import CatalogError

REQUIRED_GPUS = [
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "h100-sxm-80gb",
    "h100-pcie-80gb",
    "h100-nvl-94gb",
    "h200-sxm-141gb",
    "b200-180gb",
    "gb200-186gb",
    "b300-288gb",
    "gb300-288gb",
    "l40s-48gb",
    "rtx-pro-6000-96gb",
    "l4-24gb",
    "a10g-24gb",
    "a10-24gb",
    "mi300x-192gb",
    "mi325x-256gb",
    "rtx-3090-24gb",
    "rtx-4090-24gb",
    "t4-16gb",
]
REQUIRED_NODES = [
    "8x-h100-sxm-80gb",
    "8x-h200-sxm-141gb",
    "8x-b200-180gb",
    "8x-b300-288gb",
    "4x-gb300-288gb",
    "8x-rtx-pro-6000-96gb",
    "8x-a100-sxm-80gb",
    "8x-mi300x-192gb",
    "4x-l40s-48gb",
    "1x-h100-sxm-80gb",
    "1x-l40s-48gb",
    "1x-l4-24gb",
]


#: The 39 models the catalog was first built from (each entry's config.json source is in data/models.json).
CORE_MODELS = [
    "meta-llama/Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B",
    "meta-llama/Llama-3.1-405B",
    "meta-llama/Llama-3.2-1B",
    "meta-llama/Llama-3.2-3B",
    "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-2-13b-hf",
    "meta-llama/Llama-2-70b-hf",
    "Qwen/Qwen2.5-0.5B",
    "Qwen/Qwen2.5-1.5B",
    "Qwen/Qwen2.5-3B",
    "Qwen/Qwen2.5-7B",
    "Qwen/Qwen2.5-14B",
    "Qwen/Qwen2.5-32B",
    "Qwen/Qwen2.5-72B",
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-235B-A22B",
    "mistralai/Mistral-7B-v0.3",
    "mistralai/Mistral-Large-Instruct-2407",
    "mistralai/Mixtral-8x7B-v0.1",
    "mistralai/Mixtral-8x22B-v0.1",
    "google/gemma-2-2b",
    "google/gemma-2-9b",
    "google/gemma-2-27b",
    "microsoft/Phi-3-mini-4k-instruct",
    "deepseek-ai/DeepSeek-V3",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    "lmsys/vicuna-7b-v1.5",
    "lmsys/vicuna-13b-v1.5",
    "lmsys/vicuna-33b-v1.3",
]


def test_all_39_core_models_are_in_the_catalog():
    ids = {m.id for m in catalog.list_models()}
    assert len(CORE_MODELS) == 39 and set(CORE_MODELS) <= ids


def test_every_entry_has_a_source_and_no_computed_numbers(repo):
    raw = json.loads((repo / "data/models.json").read_text())
    for entry in raw["models"]:
        assert entry["source"], entry["id"]
        assert not any(k.startswith("computed") for k in entry), entry["id"]
        assert not any(k.startswith("computed") for k in entry["config"]), entry["id"]
    for loader in (
        catalog.list_gpus,
        catalog.list_nodes,
        catalog.list_tokenizers,
        catalog.list_weight_formats,
    ):
        for item in loader():
            assert item.source, item.id
    for price in catalog.list_prices():
        for obs in price.observations:
            assert obs.source and obs.date


def test_required_gpus_and_nodes_exist():
    assert set(REQUIRED_GPUS) <= {g.id for g in catalog.list_gpus()}
    assert set(REQUIRED_NODES) <= {n.id for n in catalog.list_nodes()}
    for node in catalog.list_nodes():
        assert catalog.get_gpu(node.gpu)


def test_each_model_names_a_known_tokenizer_and_lineage():
    known = {t.id for t in catalog.list_tokenizers()}
    for model in catalog.list_models():
        assert model.tokenizer in known, model.id
        assert model.lineage.family, model.id
        assert model.size_label, model.id


@pytest.mark.parametrize(
    "typed", ["meta-llama/Llama-3.1-70B", "META-LLAMA/llama-3.1-70b", "Llama-3.1-70B", " llama-3.1-70b "]
)
def test_model_lookup_is_case_insensitive_with_or_without_org(typed):
    assert catalog.get_model(typed).id == "meta-llama/Llama-3.1-70B"


def test_unknown_ids_suggest_close_matches():
    with pytest.raises(CatalogError, match="did you mean") as info:
        catalog.get_model("Llama-3.1-7B")
    assert info.value.field == "model"
    with pytest.raises(CatalogError, match="catalog gpus"):
        catalog.get_gpu("h1000")


def test_device_totals_use_logged_values_or_a_labelled_estimate():
    h100 = device_total_bytes(catalog.get_gpu("h100-sxm-80gb"))
    assert not h100.estimated and h100.bytes == round(79.19 * 2**30)
    l4 = device_total_bytes(catalog.get_gpu("l4-24gb"))
    assert l4.estimated and 21.5 * 2**30 < l4.bytes < 22.5 * 2**30
    pcie = device_total_bytes(catalog.get_gpu("h100-pcie-80gb"))
    assert pcie.estimated and 78 * 2**30 < pcie.bytes < 80 * 2**30


def test_prices_are_dated_medians():
    h100 = catalog.get_price("h100-sxm-80gb")
    assert h100.default_usd_per_gpu_hour == pytest.approx((2.95 + 2.99) / 2)
    assert h100.latest_date == "2026-05-22"
    assert catalog.get_price("t4-16gb") is None


def test_malformed_catalog_files_fail_clearly(tmp_path, monkeypatch):
    for name in (
        "models.json",
        "gpus.json",
        "nodes.json",
        "prices.json",
        "tokenizers.json",
        "precisions.json",
    ):
        (tmp_path / name).write_text((facts.REPO_ROOT / "data" / name).read_text())
    gpus = json.loads((tmp_path / "gpus.json").read_text())
    del gpus["gpus"][0]["source"]
    (tmp_path / "gpus.json").write_text(json.dumps(gpus))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    facts.clear_caches()
    try:
        with pytest.raises(CatalogError, match=r"(?i)source"):
            catalog.list_gpus()
        (tmp_path / "nodes.json").write_text("{oops")
        with pytest.raises(CatalogError, match="not valid JSON"):
            catalog.list_nodes()
    finally:
        monkeypatch.delenv("PLANNER_DATA_DIR")
        facts.clear_caches()
