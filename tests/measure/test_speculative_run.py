"""The speculative loop on tiny random models (CPU, fp32): exact acceptance, lossless greedy output, rollback."""

from __future__ import annotations

import copy

import pytest
import torch

from planner.errors import InputError
from planner.measure.acceptance_counts import acceptance_stats
from planner.measure.model_loading import LoadedModel, load_model, resolve_device, resolve_dtype
from planner.measure.speculative_run import DecodeSettings, plain_decode, speculative_decode
from tests.conftest import TINY_LLAMA

#: Tiny random models run on CPU in torch.
pytestmark = pytest.mark.torch

TINY = TINY_LLAMA
PROMPT = list(range(40, 64))


def _load(config, seed=0, name="target"):
    return load_model(config, random_weights=True, device="cpu", dtype="fp32", seed=seed, field_name=name)


@pytest.fixture(scope="module")
def target() -> LoadedModel:
    return _load(TINY)


@pytest.fixture(scope="module")
def near_copy(target) -> LoadedModel:
    """The target with small noise on every weight: it agrees often, not always (mixed accepted counts)."""
    draft = copy.deepcopy(target)
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in draft.model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * p.std() * 0.35)
    return draft


def _settings(**kw) -> DecodeSettings:
    return DecodeSettings(**({"k": 4, "max_new_tokens": 48, "vocab_size": 320} | kw))


def test_same_config_and_seed_give_an_exact_copy(target):
    again = _load(TINY, name="draft")
    for a, b in zip(target.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(a, b)
    other = _load(TINY, seed=1)
    assert not all(torch.equal(a, b) for a, b in zip(target.model.parameters(), other.model.parameters(), strict=True))


def test_exact_copy_greedy_accepts_everything(target):
    draft = _load(TINY, name="draft")
    k = 4
    trace = speculative_decode(target, draft, PROMPT, _settings(k=k), "cpu", seed=0)
    stats = acceptance_stats(trace.accepted_per_step, k)
    assert stats.alpha == 1.0
    assert stats.mean_accepted_len == k + 1
    assert trace.tokens == plain_decode(target, PROMPT, _settings(k=k), "cpu", seed=0).tokens


def test_greedy_speculative_output_equals_plain_greedy_token_for_token(target, near_copy):
    settings = _settings(k=3, max_new_tokens=60)
    spec = speculative_decode(target, near_copy, PROMPT, settings, "cpu", seed=0)
    base = plain_decode(target, PROMPT, settings, "cpu", seed=0)
    counts = set(spec.accepted_per_step)
    assert len(counts) > 1, f"the near-copy draft should give mixed acceptance, got {counts}"
    assert spec.tokens == base.tokens
    # and both equal transformers' own greedy generate
    with torch.inference_mode():
        hf = target.model.generate(torch.tensor([PROMPT]), max_new_tokens=60, do_sample=False)
    assert hf[0, len(PROMPT) :].tolist() == base.tokens


def test_accepted_counts_are_within_zero_and_k_and_explain_the_output(target, near_copy):
    settings = _settings(k=5, max_new_tokens=40)
    trace = speculative_decode(target, near_copy, PROMPT, settings, "cpu", seed=0)
    assert all(0 <= n <= 5 for n in trace.accepted_per_step)
    # every step emits its accepted drafts plus one target token
    assert trace.emitted_tokens == 1 + sum(n + 1 for n in trace.accepted_per_step)
    assert len(trace.tokens) == 40 and trace.emitted_tokens >= 40
    assert trace.ttft_s > 0 and trace.decode_s > 0 and trace.draft_s > 0 and trace.verify_s > 0
    assert trace.target_kv_bytes > 0 and trace.draft_kv_bytes > 0


def test_sampled_exact_copy_accepts_everything_and_is_seeded(target):
    draft = _load(TINY, name="draft")
    settings = _settings(mode="sampled", temperature=0.8)
    first = speculative_decode(target, draft, PROMPT, settings, "cpu", seed=3)
    assert acceptance_stats(first.accepted_per_step, 4).alpha == 1.0
    again = speculative_decode(target, draft, PROMPT, settings, "cpu", seed=3)
    assert again.tokens == first.tokens


def test_sampled_mode_with_a_different_draft_rejects_sometimes(target, near_copy):
    settings = _settings(mode="sampled", temperature=1.0, k=4, max_new_tokens=64)
    trace = speculative_decode(target, near_copy, PROMPT, settings, "cpu", seed=0)
    stats = acceptance_stats(trace.accepted_per_step, 4)
    assert 0.0 <= stats.alpha <= 1.0 and stats.accepted_count_histogram[-1] < stats.steps


def test_a_draft_with_a_smaller_vocabulary_is_restricted_to_the_shared_ids(target):
    draft = _load(TINY | {"vocab_size": 300, "num_hidden_layers": 1}, name="draft")
    settings = _settings(vocab_size=300)
    trace = speculative_decode(target, draft, PROMPT, settings, "cpu", seed=0)
    assert max(trace.tokens) < 300
    assert trace.tokens == plain_decode(target, PROMPT, settings, "cpu", seed=0).tokens


def test_rollback_past_a_sliding_window_keeps_output_lossless():
    config = TINY | {"model_type": "mistral", "sliding_window": 8, "head_dim": 16}
    target = _load(config)
    draft = _load(config | {"num_hidden_layers": 1}, name="draft")
    settings = _settings(k=3, max_new_tokens=30)
    spec = speculative_decode(target, draft, PROMPT, settings, "cpu", seed=0)
    assert spec.tokens == plain_decode(target, PROMPT, settings, "cpu", seed=0).tokens


def test_folder_with_safetensors_loads_the_same_weights(tmp_path, target):
    target.model.save_pretrained(tmp_path / "tiny", safe_serialization=True)
    loaded = load_model(tmp_path / "tiny", random_weights=False, device="cpu", dtype="fp32")
    assert loaded.source == "folder" and loaded.name == "tiny"
    assert loaded.weights_bytes == target.weights_bytes
    settings = _settings(max_new_tokens=12)
    assert (
        plain_decode(loaded, PROMPT, settings, "cpu", 0).tokens
        == plain_decode(target, PROMPT, settings, "cpu", 0).tokens
    )


def test_folder_without_safetensors_and_bad_sources_are_input_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    with pytest.raises(InputError) as err:
        load_model(tmp_path / "empty", random_weights=False, device="cpu", dtype="fp32")
    assert "safetensors" in str(err.value)
    with pytest.raises(InputError):
        load_model(tmp_path / "missing", random_weights=False, device="cpu", dtype="fp32")
    with pytest.raises(InputError):
        load_model({"hidden_size": 8}, random_weights=True, device="cpu", dtype="fp32")


def test_dtype_and_device_resolution():
    assert resolve_dtype(None, "cuda") == "bf16" and resolve_dtype(None, "cpu") == "fp32"
    assert resolve_dtype("bfloat16", "cpu") == "bf16" and resolve_dtype("torch.float16", "cpu") == "fp16"
    with pytest.raises(InputError):
        resolve_dtype("int4", "cpu")
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(InputError):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError) as err:
            resolve_device("cuda")
        assert err.value.field == "device"
