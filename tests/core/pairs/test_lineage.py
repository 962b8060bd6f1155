"""The relation of a draft to its target, from the catalog's lineage."""

from __future__ import annotations

import pytest

from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import get_model
from planner.pairs.lineage import distillation_link, lineage_relation


@pytest.mark.parametrize(
    ("target", "draft", "relation"),
    [
        ("Llama-3.1-70B", "Llama-3.2-1B", "distilled"),  # Llama 3.2 model card: logits of 3.1-8B/70B
        ("Llama-3.1-405B", "Llama-3.2-3B", "distilled"),  # distilled from the target's own generation
        ("DeepSeek-R1-Distill-Qwen-32B", "DeepSeek-R1-Distill-Qwen-1.5B", "distilled"),  # shared teacher R1
        ("Qwen2.5-72B", "Qwen2.5-0.5B", "same_generation"),
        ("Llama-3.3-70B-Instruct", "Llama-3.2-1B", "other_generation"),
        ("Qwen3-32B", "Qwen2.5-7B", "other_generation"),
        ("Llama-2-70b-hf", "gemma-2-2b", "different_family"),
    ],
)
def test_relations_of_catalog_pairs(target, draft, relation):
    assert lineage_relation(get_model(target), get_model(draft)) == relation


def test_distillation_link_names_the_models():
    link = distillation_link(get_model("Llama-3.1-405B"), get_model("Llama-3.2-1B"))
    assert "meta-llama/Llama-3.1-8B" in link and "3.1 generation" in link
    assert distillation_link(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B")) is None


def test_an_imported_model_is_related_by_its_model_type():
    spec = model_from_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_attention_heads": 4,
            "vocab_size": 128,
        },
        model_id="tiny",
    )
    assert lineage_relation(get_model("Llama-3.1-70B"), spec) == "other_generation"
    assert lineage_relation(get_model("Qwen2.5-72B"), spec) == "different_family"
