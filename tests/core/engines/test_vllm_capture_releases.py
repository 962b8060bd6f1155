"""vLLM V1's CUDA-graph sizes release by release, as each release's ``VllmConfig._set_cudagraph_sizes`` (and, to 0.33,
``CompilationConfig.adjust_cudagraph_sizes_for_spec_decode``) chooses them: data/cuda_graphs.json ``vllm_v1_releases``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.engines.capture_sizes import vllm_v1_capture_sizes, vllm_v1_release, vllm_v1_releases
from planner.memory import plan_memory

DEFAULTS = {"max_num_seqs": 1024, "max_num_batched_tokens": 8192}  # vLLM's server defaults on an H100


def _sizes(release: str, **fields) -> tuple[int, ...]:
    return vllm_v1_capture_sizes(vllm_v1_release(release), **(DEFAULTS | fields))


def test_before_0_10_the_largest_size_is_512_whatever_max_num_seqs():
    # 0.8 and 0.9 capture [1, 2, 4] + range(8, 513, 8) (0.9: cuda_graph_sizes' default [512]); 0.10 stops at
    # min(max_num_seqs x 2, 512)
    for release in ("0.8.0", "0.8.5", "0.9.2"):
        assert _sizes(release, max_num_seqs=64)[-1] == 512 and len(_sizes(release, max_num_seqs=64)) == 3 + 512 // 8
        assert _sizes(release, max_num_seqs=64, max_num_batched_tokens=256)[-1] == 256  # the budget still bounds it
        assert _sizes(release, query_len=4) == _sizes(release)  # a draft changes nothing
    assert _sizes("0.10.0", max_num_seqs=64)[-1] == 128


def test_up_to_0_11_0_the_grid_steps_by_8_all_the_way():
    assert len(_sizes("0.11.0")) == 3 + 512 // 8  # [1, 2, 4] + range(8, 513, 8)
    assert len(_sizes("0.11.1")) == 51 and {264, 272} <= set(_sizes("0.11.0")) and 264 not in _sizes("0.11.1")


def test_from_0_13_a_drafts_query_length_widens_the_largest_size():
    # 32 sequences verifying K = 3 drafts (4 tokens each): min(32 x 2, 512) = 64 before, min(32 x 4 x 2, 512) = 256 on
    assert _sizes("0.12.0", max_num_seqs=32, query_len=4)[-1] == 64
    assert _sizes("0.13.0", max_num_seqs=32, query_len=4)[-1] == 256
    assert _sizes("0.12.0", max_num_seqs=32)[-1] == _sizes("0.13.0", max_num_seqs=32)[-1] == 64  # no draft: x 2


def test_from_0_11_1_to_0_33_a_drafts_sizes_are_rounded_to_its_query_length():
    for release in ("0.11.1", "0.19.0", "0.33.0"):
        sizes = _sizes(release, query_len=6)
        assert all(s % 6 == 0 for s in sizes) and sizes[-1] == 498  # 512 rounds to 516, past the largest: dropped
    assert _sizes("0.11.0", query_len=6) == _sizes("0.11.0")  # not yet
    assert {1, 2, 4, 6, 12} <= set(_sizes("0.34.0", query_len=6))  # no longer: the grid, and the decode sizes


def test_from_0_21_the_token_budget_is_captured_when_the_largest_size_is_the_budget():
    assert 300 not in _sizes("0.20.0", max_num_batched_tokens=300)
    assert _sizes("0.21.0", max_num_batched_tokens=300)[-3:] == (272, 288, 300)


def test_from_0_28_data_centre_blackwell_captures_up_to_1024():
    assert _sizes("0.27.0", gpu="b200-180gb")[-1] == 512
    assert _sizes("0.28.0", gpu="b200-180gb")[-1] == 1024 and len(_sizes("0.28.0", gpu="b200-180gb")) == 83
    assert _sizes("0.28.0", gpu="h200-sxm-141gb")[-1] == 512


@pytest.mark.parametrize(("gpu", "ceiling"), [("b300-288gb", 1024), ("gb300-288gb", 1024), ("rtx-pro-6000-96gb", 512)])
def test_the_1024_ceiling_follows_compute_capability_10_x(gpu, ceiling):
    # vLLM's is_device_capability_family(100) holds for every 10.x (B300 and GB300 are 10.3), not for 12.0
    assert _sizes("0.27.0", gpu=gpu)[-1] == 512
    assert _sizes("0.28.0", gpu=gpu)[-1] == _sizes("0.34.0", gpu=gpu)[-1] == ceiling


def test_from_0_29_a_drafts_uniform_decode_sizes_are_captured():
    # K = 4 (5 tokens per sequence): 56 requests x 5 = 280 lies off the rounded grid (272 -> 275, 288 -> 290)
    assert 280 not in _sizes("0.28.0", query_len=5)
    assert {280, 360, 440} <= set(_sizes("0.29.0", query_len=5))


def test_from_0_31_max_num_seqs_is_captured_without_a_draft():
    assert 100 not in _sizes("0.30.0", max_num_seqs=100)
    assert 100 in _sizes("0.31.0", max_num_seqs=100) and _sizes("0.31.0", max_num_seqs=100)[-1] == 200


def test_a_model_that_sets_its_own_largest_size_gets_no_decode_sizes():
    sizes = _sizes("0.34.0", query_len=6, architectures=("GptOssForCausalLM",))
    assert sizes[-1] == 1024 and 6 not in sizes


def test_gpt_oss_captures_its_own_list_up_to_0_11_0():
    # its config hook's list: [1, 2, 4] + range(8, 256, 8) + range(256, 1025, 16) in 0.10.1 and 0.10.2 (83 sizes),
    # up to 992 in 0.11.0 (81: "from 67 to 81" in its comment), by 16 above 256 though those releases' grid steps by 8
    gpt_oss = {"architectures": ("GptOssForCausalLM",)}
    assert len(_sizes("0.10.2", **gpt_oss)) == 83 and _sizes("0.10.2", **gpt_oss)[-1] == 1024
    assert len(_sizes("0.11.0", **gpt_oss)) == 81 and _sizes("0.11.0", **gpt_oss)[-1] == 992
    assert 264 not in _sizes("0.11.0", **gpt_oss) and 264 in _sizes("0.11.0")  # Llama keeps the release's grid
    assert len(_sizes("0.11.0")) == 67  # the "67" its comment counts


@settings(max_examples=200, deadline=None)
@given(
    release=st.sampled_from([r.from_version for r in vllm_v1_releases()] + ["0.8.5", "0.19.1", "0.99.0"]),
    seqs=st.integers(1, 4096),
    tokens=st.integers(1, 65536),
    k=st.integers(0, 16),
    gpu=st.sampled_from(["h100-sxm-80gb", "b200-180gb", "mi300x-192gb"]),
)
def test_sizes_ascend_and_never_pass_the_budget_or_the_platforms_ceiling(release, seqs, tokens, k, gpu):
    tokens = max(tokens, seqs)  # vLLM refuses a budget under max_num_seqs
    rule = vllm_v1_release(release)
    sizes = vllm_v1_capture_sizes(rule, max_num_seqs=seqs, max_num_batched_tokens=tokens, query_len=1 + k, gpu=gpu)
    assert list(sizes) == sorted(set(sizes)) and all(s >= 1 for s in sizes)
    assert not sizes or sizes[-1] <= min(tokens, rule.ceiling_by_gpu.get(gpu, rule.ceiling))
    if rule.rounds_to_query_len and k:
        assert all(s % (1 + k) == 0 for s in sizes)


@pytest.mark.parametrize(("release", "graphs"), [("0.19.0", 48), ("0.33.0", 48), ("0.34.0", 53)])
def test_the_memory_plan_counts_the_graphs_its_release_captures(release, graphs):
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, draft=get_model("Llama-3.2-1B"),
        num_speculative_tokens=5, engine_version=release,
    )  # fmt: skip
    assert plan_memory(dep, with_suggestions=False).limits.cudagraph_capture_sizes == graphs
