"""Imported configs pass the bounds check before any field is read, heads included: 100 seeded hostile head
configs end in a result or a ConfigError/InputError naming the field, never another exception; a zero-wide
MLP and a deeply nested key are handled."""

from __future__ import annotations

import json
import random

import pytest

from planner.catalog import get_model, get_node, model_facts, model_from_config
from planner.deployment import Deployment
from planner.errors import PlannerError

HEAD = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "num_hidden_layers": 1,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "draft_vocab_size": 32000,
    "speculators_config": {"verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}},
}
ODD = [None, True, -1, 0, 1, 2**63, 1.5, float("nan"), "x", "", [], [1], ["a"], {}, {"a": 1}, "[x](https://e.example)"]
FIELDS = ["speculators_config", "draft_vocab_size", "architectures", "speculators_model_type", "vocab_size",
          "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
          "model_type", "target_hidden_size", "tie_word_embeddings"]  # fmt: skip
SUB = [["x"], "x", 3, None, {"name_or_path": 5}, {"name_or_path": ["a"]}, {"verifier": ["x"]}, {"verifier": "x"}]


def hostile_heads(count: int = 100, seed: int = 22) -> list[dict]:
    rng = random.Random(seed)
    heads = []
    for _ in range(count):
        cfg = json.loads(json.dumps(HEAD))
        for name in rng.sample(FIELDS, rng.randint(1, 3)):
            cfg[name] = rng.choice(ODD + ([{"verifier": v} for v in SUB] if name == "speculators_config" else []))
        if rng.random() < 0.1:
            cfg.pop(rng.choice(FIELDS), None)
        heads.append(cfg)
    return heads


def test_hostile_head_configs_fail_naming_a_field_or_size_cleanly():
    target, node = get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb")
    refused = 0
    for cfg in hostile_heads():
        try:
            head = model_from_config(cfg, model_id="hostile-head", speculator_kind="eagle3")
            model_facts(head)
            Deployment.on_node(target, node, draft=head, tp=1)
        except PlannerError as exc:
            refused += 1
            message = str(exc)
            assert "\n" not in message and len(message) < 600
            assert "`" in message or exc.field, message  # names the field
    assert refused >= 50


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"speculators_config": ["verifier"]}, "speculators_config"),
        ({"speculators_config": "x"}, "speculators_config"),
        ({"speculators_config": 3}, "speculators_config"),
        ({"speculators_config": {"verifier": "x"}}, "speculators_config.verifier"),
        ({"draft_vocab_size": 0}, "draft_vocab_size"),
        ({"draft_vocab_size": -5}, "draft_vocab_size"),
        ({"draft_vocab_size": 128257}, "draft_vocab_size"),
        ({"draft_vocab_size": "32000"}, "draft_vocab_size"),
    ],
)
def test_a_bad_head_field_is_named_with_its_allowed_values(change, field):
    with pytest.raises(PlannerError) as err:
        model_from_config({**HEAD, **change}, model_id="bad-head")
    assert err.value.field == field
    assert "must be" in str(err.value) and "Input should" not in str(err.value)


def test_a_zero_wide_mlp_has_no_mlp_bytes_and_no_division_by_zero():
    cfg = {**HEAD, "architectures": ["LlamaForCausalLM"], "intermediate_size": 0}
    cfg.pop("draft_vocab_size")
    cfg.pop("speculators_config")
    facts = model_facts(model_from_config(cfg, model_id="no-mlp"))
    assert facts.params.total_params > 0
    assert all(v >= 0 for v in facts.weight_bytes_by_format.values())


@pytest.mark.parametrize("depth", [33, 500, 5000])
def test_a_deeply_nested_key_is_refused_by_name(depth):
    deep: object = 1
    for _ in range(depth):
        deep = {"a": deep}
    with pytest.raises(PlannerError, match="nests more than 32 levels") as err:
        model_from_config({**HEAD, "extra_nested": deep}, model_id="deep")
    assert err.value.field == "extra_nested"
