"""How a deployment speculates: inferred from its draft, or a draft-free method (n-gram, the target's MTP)."""

import pytest

from planner.catalog.lookup import get_gpu, get_model
from planner.catalog.schemas import ModelSpec, SpeculatorSpec
from planner.deployment import Deployment
from planner.errors import PlannerError


def _base(target: str = "Llama-3.1-8B", **fields) -> Deployment:
    return Deployment.build(target=get_model(target), gpu=get_gpu("h100-sxm-80gb"), gpu_count=8, **fields)


def _head(kind: str = "eagle3") -> ModelSpec:
    plain = get_model("Llama-3.2-1B")
    config = {**plain.config, "num_hidden_layers": 1, "hidden_size": 4096, "num_attention_heads": 32}
    return plain.model_copy(
        update={
            "id": "test/eagle3-head",
            "config": config,
            "speculator": SpeculatorSpec(kind=kind, targets=["meta-llama/Llama-3.1-8B"]),
        }
    )


def test_no_draft_is_not_speculative():
    dep = _base()
    assert (dep.speculative_method, dep.is_speculative, dep.speculator, dep.draft_format) == (None, False, None, None)


def test_plain_draft_is_draft_model_and_head_is_its_kind():
    assert _base(draft=get_model("Llama-3.2-1B")).speculative_method == "draft_model"
    dep = _base(draft=_head())
    assert dep.speculative_method == "eagle3" and dep.speculator is dep.draft


def test_ngram_needs_no_model():
    dep = _base().with_method("ngram")
    assert dep.is_speculative and dep.speculator is None and dep.resolved_draft_tp is None
    assert dep.without_draft().speculative_method is None


def test_mtp_uses_the_targets_own_layers_in_its_format():
    dep = Deployment.build(target=get_model("DeepSeek-V3"), gpu=get_gpu("h200-sxm-141gb"), gpu_count=8, tp=8)
    mtp = dep.with_method("mtp")
    assert mtp.speculator.speculator.kind == "mtp" and mtp.speculator.architecture.num_layers == 1
    assert mtp.draft_format == mtp.target_format


@pytest.mark.parametrize(("dtype", "head_format"), [("fp8", "bf16"), ("int4-awq", "fp16"), ("bf16", "bf16")])
def test_a_head_loads_unquantized_in_the_dtype_its_quantized_target_computes_in(dtype, head_format):
    # vLLM builds the head's ModelConfig with quantization=SpeculativeConfig.quantization (None by default):
    # an FP8 or AWQ target's EAGLE-3 head is not quantized; the target's own MTP layers are (previous test).
    head = get_model("EAGLE3-LLaMA3.1-Instruct-8B")
    dep = _base(dtype=dtype, draft=head)
    assert dep.draft_format.id == head_format
    assert _base(dtype=dtype, draft=head, draft_dtype="fp8").draft_format.id == "fp8"  # stated: as given


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"method": "mtp"}, "method", "no MTP layers"),
        ({"method": "eagle3"}, "draft", "EAGLE-3 head"),
        ({"method": "draft_model"}, "draft", "separate draft model"),
        ({"method": "eagle", "draft": "plain"}, "method", "draft_model"),
        ({"method": "quantum"}, "method", "draft_model"),
    ],
)
def test_a_method_that_cannot_run_names_the_field(fields, field, words):
    if fields.get("draft") == "plain":
        fields = {**fields, "draft": get_model("Llama-3.2-1B")}
    with pytest.raises(PlannerError) as err:
        _base(**fields)
    assert err.value.field == field and words in str(err.value)
