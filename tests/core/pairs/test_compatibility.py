"""Draft/target compatibility: worked cases, engine rules, real tokenizer files, invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import get_model, list_models
from planner.errors import InputError, PlannerError
from planner.model.geometry import FORMULA_FAMILIES
from planner.pairs import size_ratio
from planner.pairs.compatibility import CHECK_NAMES, check_pair, rejects
from planner.pairs.tokenizers import TokenizerVocab


def statuses(verdict) -> dict[str, str]:
    return {c.name: c.status for c in verdict.checks}


# ----- worked cases --------------------------------------------------------------------------------------


def test_llama31_70b_with_llama32_1b_is_compatible_and_only_the_ratio_warns_with_evidence():
    v = check_pair(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
    assert v.verdict == "compatible_with_warnings"
    assert statuses(v) == {
        "tokenizer": "pass",
        "vocab_size": "pass",
        "lineage": "pass",
        "parameter_ratio": "warn",
        "engine": "pass",
    }
    # Exact counts: 70,553,706,496 / 1,235,814,400 (tests/core/test_param_count.py), tolerance 1e-9.
    assert v.parameter_ratio == pytest.approx(70_553_706_496 / 1_235_814_400, rel=1e-9)
    ratio = v.check("parameter_ratio")
    # The measured counter-evidence: AMD ROCm blog ssd_mi300x Table 1, 2.72x at TP 2
    # (data/calibration/specdec-measured.csv).
    assert "measured for this pair" in ratio.detail and "2.72x" in ratio.detail
    assert any("ssd_mi300x" in source for source in ratio.evidence)
    assert v.lineage_relation == "distilled"


def test_llama31_70b_with_qwen25_05b_is_incompatible_on_the_tokenizer():
    v = check_pair(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B"))
    assert v.verdict == "incompatible"
    tokenizer = v.check("tokenizer")
    assert tokenizer.status == "fail"
    assert "llama3" in tokenizer.detail and "qwen2.5" in tokenizer.detail


def test_llama2_70b_with_llama32_1b_is_incompatible_on_the_vocabulary():
    v = check_pair(get_model("Llama-2-70b-hf"), get_model("Llama-3.2-1B"))
    assert v.verdict == "incompatible"
    vocab = v.check("vocab_size")
    assert vocab.status == "fail"
    assert "32,000 vs 128,256" in vocab.detail


def test_qwen25_72b_with_05b_is_compatible_with_a_padding_warning():
    v = check_pair(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"))
    assert v.verdict == "compatible_with_warnings"
    assert "fail" not in statuses(v).values()
    vocab = v.check("vocab_size")
    assert vocab.status == "warn"
    assert "152,064 vs 151,936" in vocab.detail and "padding" in vocab.detail
    # Names the engines that reject it and the workarounds (vLLM PR #13849 / #42775, a same-padding draft).
    assert "vLLM" in vocab.detail and "SGLang" in vocab.detail
    assert "#13849" in vocab.detail and "#42775" in vocab.detail
    assert "Qwen/Qwen2.5-7B" in vocab.detail


@pytest.mark.parametrize("model", ["Llama-3.1-70B", "Qwen2.5-0.5B", "gemma-2-9b"])
def test_a_model_paired_with_itself_fails_the_ratio(model):
    spec = get_model(model)
    v = check_pair(spec, spec)
    assert v.parameter_ratio == 1.0
    assert v.check("parameter_ratio").status == "fail"
    assert v.verdict == "incompatible"


def test_r1_distill_llama_target_with_llama32_draft_warns_on_special_tokens():
    v = check_pair(get_model("DeepSeek-R1-Distill-Llama-70B"), get_model("Llama-3.2-1B"))
    tokenizer = v.check("tokenizer")
    assert tokenizer.status == "warn"
    assert "special tokens differ" in tokenizer.detail
    assert v.check("vocab_size").status == "pass"
    assert v.verdict == "compatible_with_warnings"


def test_qwen3_target_with_qwen25_draft_shares_the_base_vocabulary_and_warns():
    v = check_pair(get_model("Qwen3-32B"), get_model("Qwen2.5-1.5B"))
    tokenizer = v.check("tokenizer")
    assert tokenizer.status == "warn"
    assert "regular vocabulary of qwen2.5" in tokenizer.detail
    assert v.lineage_relation == "other_generation"
    assert v.check("lineage").status == "warn"
    assert v.verdict == "compatible_with_warnings"


# ----- parameter ratio rules -----------------------------------------------------------------------------


def test_ratio_over_200x_is_a_warning_when_this_pair_measured_a_speedup():
    # Llama-3.1-405B + Llama-3.2-1B is about 328x, but measured 2.06-3.33x (data/calibration/specdec-measured.csv).
    v = check_pair(get_model("Llama-3.1-405B"), get_model("Llama-3.2-1B"))
    assert v.parameter_ratio > 200
    ratio = v.check("parameter_ratio")
    assert ratio.status == "warn"
    assert "evidence says otherwise" in ratio.detail


def test_ratio_below_the_band_warns_and_cites_the_nearest_measured_pair():
    # Llama-3.1-8B + Llama-3.2-3B (2.5x) fails; Qwen2.5-72B + 7B (9.5x, measured in vLLM PR #53987) warns.
    low = check_pair(get_model("Llama-3.1-8B"), get_model("Llama-3.2-3B"))
    assert low.check("parameter_ratio").status == "fail"
    qwen = check_pair(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"))
    ratio = qwen.check("parameter_ratio")
    assert ratio.status == "warn" and "measured for this pair" in ratio.detail
    unmeasured = check_pair(get_model("Qwen2.5-14B"), get_model("Qwen2.5-1.5B"))  # 9.6x
    assert "nearest measured pair below the band" in unmeasured.check("parameter_ratio").detail


def test_ratio_inside_the_band_passes():
    v = check_pair(get_model("Qwen3-32B"), get_model("Qwen3-1.7B"))
    assert 10 <= v.parameter_ratio <= 50
    assert v.check("parameter_ratio").status == "pass"


# ----- engine rules -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "draft_tp", "expected"),
    [
        ("vllm", None, "pass"),  # draft TP defaults to the target's
        ("vllm", 8, "pass"),
        ("vllm", 1, "fail"),  # V1 DraftModelProposer._raise_if_draft_tp_mismatch
        ("vllm", 2, "fail"),
        ("vllm-v0", 1, "pass"),  # SmallerTpProposerWorker
        ("vllm-v0", 2, "fail"),
        ("sglang", 1, "fail"),  # the STANDALONE draft runs at the target's TP
        ("trtllm", 1, "pass"),  # separate engines
        ("hf", 1, "pass"),
    ],
)
def test_draft_tp_rules_per_engine(engine, draft_tp, expected):
    v = check_pair(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"), engine=engine, target_tp=8, draft_tp=draft_tp)
    assert v.check("engine").status == expected
    assert v.draft_tp == (draft_tp or 8)


def test_draft_that_cannot_split_over_the_draft_tp_fails():
    # Qwen2.5-0.5B has 14 attention heads: TP 8 does not divide them.
    v = check_pair(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"), engine="vllm", target_tp=8)
    assert v.check("engine").status == "fail"
    assert (
        "Total number of attention heads (14) must be divisible by tensor parallel size (8)."
        in v.check("engine").detail
    )


def test_shorter_draft_context_warns_with_the_limit():
    v = check_pair(get_model("Qwen2.5-72B"), get_model("Qwen2.5-0.5B"))
    engine = v.check("engine")
    assert engine.status == "warn" and "32,768" in engine.detail


def test_transformers_treats_another_tokenizer_as_universal_assisted_generation():
    v = check_pair(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B"), engine="hf")
    assert v.check("tokenizer").status == "warn"
    assert "assistant_tokenizer" in v.check("tokenizer").detail
    assert v.check("vocab_size").status == "warn"


def test_bad_inputs_raise_input_errors_naming_the_field():
    target, draft = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")
    with pytest.raises(InputError) as err:
        check_pair(target, draft, engine="tgi")
    assert err.value.field == "engine"
    with pytest.raises(InputError) as err:
        check_pair(target, draft, target_tp=3)
    assert err.value.field == "tp"
    vocab = TokenizerVocab.from_mapping("t", {"a": 0})
    with pytest.raises(InputError) as err:
        check_pair(target, draft, target_tokenizer=vocab)
    assert err.value.field == "draft_tokenizer"


# ----- real tokenizer files and imported models -------------------------------------------------------


def _vocab(name: str, tokens: list[str], special: list[str] = ()) -> TokenizerVocab:
    ids = {t: i for i, t in enumerate(tokens)}
    ids |= {s: len(tokens) + i for i, s in enumerate(special)}
    return TokenizerVocab.from_mapping(name, ids, {s: ids[s] for s in special})


def test_real_tokenizers_override_the_catalog_identity():
    target, draft = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")
    a = _vocab("target.json", ["hello", "world", "cat"])
    b = _vocab("draft.json", ["hello", "world", "dog"])
    v = check_pair(target, draft, target_tokenizer=a, draft_tokenizer=b)
    tokenizer = v.check("tokenizer")
    assert tokenizer.status == "fail"
    assert "'cat'" in tokenizer.detail and "'dog'" in tokenizer.detail
    assert v.vocab_comparison is not None and v.vocab_comparison.only_in_a == 1
    same = check_pair(target, draft, target_tokenizer=a, draft_tokenizer=a)
    assert same.check("tokenizer").status == "pass"
    specials = check_pair(
        target, draft, target_tokenizer=a, draft_tokenizer=_vocab("d", ["hello", "world", "cat"], ["<think>"])
    )
    assert specials.check("tokenizer").status == "warn" and "<think>" in specials.check("tokenizer").detail


def test_padding_is_judged_on_the_real_files_for_imported_models():
    # Two imported configs without a catalog tokenizer: only files can prove the difference is padding.
    def config(vocab_size: int, layers: int) -> dict:
        return {
            "model_type": "qwen2",
            "num_hidden_layers": layers,
            "hidden_size": 256,
            "intermediate_size": 512,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "vocab_size": vocab_size,
        }

    target = model_from_config(config(128, 64), model_id="big")
    draft = model_from_config(config(112, 2), model_id="small")
    unknown = check_pair(target, draft)
    assert unknown.check("tokenizer").status == "warn" and "tokenizer.json" in unknown.check("tokenizer").detail
    assert unknown.check("vocab_size").status == "fail"
    files = _vocab("t", [f"tok{i}" for i in range(100)])
    with_files = check_pair(target, draft, target_tokenizer=files, draft_tokenizer=files)
    assert with_files.check("tokenizer").status == "pass"
    assert with_files.check("vocab_size").status == "warn"


# ----- invariants -----------------------------------------------------------------------------------------

FORMULA_MODELS = [m for m in list_models() if m.config.get("model_type") in FORMULA_FAMILIES]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(FORMULA_MODELS),
    st.sampled_from(FORMULA_MODELS),
    st.sampled_from(["vllm", "vllm-v0", "sglang", "trtllm", "hf"]),
    st.sampled_from([None, 1]),
)
def test_verdict_follows_the_checks(target, draft, engine, draft_tp):
    try:
        v = check_pair(target, draft, engine=engine, draft_tp=draft_tp)
    except PlannerError:
        return
    found = [c.status for c in v.checks]
    assert [c.name for c in v.checks] == [n for n in CHECK_NAMES if n != "head_target"]  # heads only
    assert (v.verdict == "incompatible") == ("fail" in found)
    assert (v.verdict == "compatible") == all(s == "pass" for s in found)
    assert all(c.detail for c in v.checks)


@pytest.mark.torch  # alternatives are searched over the whole catalog, some of it counted on the meta device
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMULA_MODELS), st.sampled_from(FORMULA_MODELS))
def test_swapping_roles_inverts_the_ratio(a, b):
    forward, backward = check_pair(a, b), check_pair(b, a)
    assert forward.parameter_ratio * backward.parameter_ratio == pytest.approx(1.0, rel=1e-12)
    assert forward.check("tokenizer").status == backward.check("tokenizer").status


# ----- the early answer: does a check reject the pair? ------------------------------------------------------


@pytest.mark.parametrize("target", ["Llama-3.1-70B", "Qwen2.5-72B", "Llama-3.1-8B"])
@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "hf"])
def test_rejects_is_the_incompatible_verdict_for_every_catalog_draft(target, engine):
    t = get_model(target)
    for draft in list_models():
        if draft.id == t.id:
            continue
        assert rejects(t, draft, engine=engine) == (check_pair(t, draft, engine=engine).verdict == "incompatible"), (
            draft.id
        )


def test_a_draft_with_another_tokenizer_is_rejected_before_its_size_is_counted(monkeypatch):
    counted = []

    def counting(spec):
        counted.append(spec.id)
        raise AssertionError("sizes counted")

    monkeypatch.setattr(size_ratio, "param_count", counting)
    assert rejects(get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B"))
    assert counted == []
