"""Published speculator heads: found by id, sourced, recognised on import, and sized as the engines load them."""

from __future__ import annotations

import pytest

from planner.catalog import lookup as catalog
from planner.catalog.config_import import model_from_config
from planner.catalog.schemas import Lineage, ModelSpec, SpeculatorSpec
from planner.catalog.speculators import head_tensors, mtp_module, speculator_params
from planner.errors import ConfigError, PlannerError
from planner.model.weight_bytes import INDEX_BYTES, tensor_bytes, weight_bytes
from planner.pairs import acceptance_prior


def test_heads_are_found_by_id_and_short_name_but_never_listed_as_models():
    head = catalog.get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    assert catalog.get_model("eagle3-llama3.1-instruct-8b") is head
    assert head.speculator.kind == "eagle3" and head.speculator.targets == ["meta-llama/Llama-3.1-8B"]
    assert all(m.speculator is None for m in catalog.list_models())
    assert {h.id for h in catalog.list_speculators()} >= {
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B",
    }


@pytest.mark.parametrize("head", catalog.list_speculators(), ids=lambda h: h.id)
def test_every_head_is_sourced_verified_and_names_catalog_targets(head):
    assert head.source and head.verification and head.speculator.loading_notes
    assert any(str(s).startswith("https://huggingface.co/") for s in head.source)
    for target in head.speculator.targets:
        assert catalog.get_model(target).speculator is None
        assert catalog.get_model(target).architecture.vocab_size == head.architecture.vocab_size


# Published checkpoint sizes (the repositories' file listings, decimal units, three significant digits):
#   yuhuili/EAGLE3-LLaMA3.1-Instruct-8B pytorch_model.bin 850 MB, fp16 + d2t (int64) + t2d (bool);
#   yuhuili/EAGLE-LLaMA3-Instruct-8B pytorch_model.bin 1.55 GB fp16 (head + a copy of the embedding), the weights
#   lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B copies; yuhuili/EAGLE-llama2-chat-7B pytorch_model.bin 1.47 GB, fp32
#   (head + embedding + the original EAGLE code's fc bias).
def _three_digits(n_bytes: float) -> float:
    return float(f"{n_bytes:.3g}")


def test_eagle3_head_matches_its_850_mb_checkpoint():
    head = catalog.get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    params = speculator_params(head)
    assert params.total_params == 424_689_664 and params.persistent_buffers == 32_000
    t2d_bytes = head.architecture.vocab_size  # bool, in the checkpoint only (vLLM skips it)
    assert _three_digits(2 * params.total_params + INDEX_BYTES * 32_000 + t2d_bytes) == 850e6


@pytest.mark.parametrize(
    ("head_id", "element_bytes", "extra_params", "published_bytes"),
    [
        ("lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B", 2, 0, 1.55e9),
        ("yuhuili/EAGLE-llama2-chat-7B", 4, 4_096, 1.47e9),
    ],
)
def test_eagle1_heads_plus_their_stored_embedding_match_the_checkpoint(
    head_id, element_bytes, extra_params, published_bytes
):
    head = catalog.get_model(head_id)
    embedding = head.architecture.vocab_size * head.architecture.hidden_size
    total = speculator_params(head).total_params + embedding + extra_params
    assert _three_digits(element_bytes * total) == published_bytes


def test_eagle3_head_weights_count_d2t_in_int64_and_leave_the_embedding_to_the_target():
    head = catalog.get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    tensors = head_tensors(head)
    assert not any(t.kind == "embedding" for t in tensors)
    d2t = next(t for t in tensors if t.kind == "index")
    assert tensor_bytes(d2t, catalog.get_weight_format("bf16")) == 8 * 32_000
    fc = next(t for t in tensors if t.component == "fc")
    assert (fc.rows, fc.cols) == (4096, 3 * 4096)
    q = next(t for t in tensors if t.component == "attention" and t.per_layer == 1 and t.tp_style == "column")
    assert q.cols == 2 * 4096  # embeds + fused hidden state
    wb = weight_bytes(head.architecture, catalog.get_weight_format("bf16"), tensors=tensors)
    assert wb.total_bytes == 2 * 424_689_664 + 8 * 32_000


def test_the_speculators_format_copy_is_the_same_head():
    original = speculator_params(catalog.get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"))
    converted = speculator_params(catalog.get_model("nm-testing/EAGLE3-LLaMA3.1-Instruct-8B-converted"))
    assert converted.total_params == original.total_params


def test_deepseek_mtp_module_is_one_moe_layer_plus_eh_proj_and_its_norms():
    target = catalog.get_model("DeepSeek-V3")
    mtp = mtp_module(target)
    params = speculator_params(mtp)
    h = target.architecture.hidden_size
    assert params.components["embedding"] == 0 and "lm_head" not in params.components
    assert params.components["fc"] == 2 * h * h  # eh_proj
    one_layer = [t for t in head_tensors(mtp) if t.layers and t.component not in ("fc",)]
    assert params.components["experts"] == sum(t.numel for t in one_layer if t.component == "experts")
    # DeepSeek-V3's README_WEIGHTS.md: "11.5B unique parameters" in the MTP module (embedding and head shared)
    assert 11.4e9 < params.total_params < 11.7e9


@pytest.mark.parametrize(
    ("config", "kind"),
    [
        ({"architectures": ["LlamaForCausalLMEagle3"]}, "eagle3"),
        ({"architectures": ["Eagle3LlamaForCausalLM"]}, "eagle3"),
        ({"architectures": ["LlamaForCausalLM"], "draft_vocab_size": 32}, "eagle3"),
        ({"architectures": ["LlamaForCausalLMEagle"]}, "eagle"),
        ({"architectures": ["EagleLlamaForCausalLM"]}, "eagle"),
    ],
)
def test_head_configs_are_recognised_never_as_one_layer_models(config, kind):
    base = {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "vocab_size": 1000,
    }
    spec = model_from_config({**base, **config}, model_id="head")
    assert spec.speculator.kind == kind and spec.speculator.targets == [] and spec.is_head
    assert speculator_params(spec).components["embedding"] == 0  # the target's, not counted twice


def test_speculators_format_imports_with_its_verifier_as_trained_on():
    head = catalog.get_model("nm-testing/EAGLE3-LLaMA3.1-Instruct-8B-converted")
    spec = model_from_config(head.config, model_id="converted")
    assert spec.speculator.kind == "eagle3" and spec.speculator.trained_on == "meta-llama/Llama-3.1-8B-Instruct"
    assert spec.architecture.num_layers == 1 and spec.speculator.draft_vocab_size == 32000


def test_a_plain_one_layer_config_is_a_head_only_when_the_method_says_so():
    plain = catalog.get_model("yuhuili/EAGLE-llama2-chat-7B").config
    assert model_from_config(plain, model_id="x").speculator is None
    assert model_from_config(plain, model_id="x", speculator_kind="eagle").speculator.kind == "eagle"
    with pytest.raises(PlannerError) as err:
        model_from_config({**plain, "draft_vocab_size": 100}, model_id="x", speculator_kind="eagle")
    assert err.value.field == "method"


def test_medusa_heads_are_refused_by_name():
    with pytest.raises(ConfigError, match="Medusa"):
        model_from_config({"architectures": ["MedusaModel"], "medusa_num_heads": 4}, model_id="m")


def test_a_catalog_head_must_name_its_targets():
    with pytest.raises(ValueError, match="must name its targets"):
        ModelSpec(
            id="x/head",
            lineage=Lineage(family="llama"),
            config={},
            source="https://example.org",
            speculator=SpeculatorSpec(kind="eagle3"),
        )


def test_a_republished_head_names_a_catalog_head_and_shares_its_measurements():
    heads = {h.id: h for h in catalog.list_speculators()}
    copies = [h for h in heads.values() if h.speculator.copy_of]
    assert copies and all(h.speculator.copy_of in heads for h in copies)
    for copy in copies:
        original = heads[copy.speculator.copy_of]
        target = catalog.get_model(original.speculator.targets[0])
        assert acceptance_prior(target, copy).alpha == acceptance_prior(target, original).alpha
