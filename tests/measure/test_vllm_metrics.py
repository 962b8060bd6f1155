"""vLLM's speculative-decoding metrics: parsing real metric text and converting as docs/acceptance.md explains."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from planner.acceptance_math import expected_tokens_per_step
from planner.measure.vllm_metrics import (
    acceptance_from_counters,
    counter_delta,
    counters_from_metrics,
    parse_prometheus,
    parse_spec_log,
)

# Public vLLM V1 log line (DFlash2 drafter, K = 7), quoted in a public GitHub markdown note
# (search-index file id 63441798540); format of https://github.com/vllm-project/vllm/blob/main/vllm/v1/spec_decode/metrics.py.
V1_DFLASH = (
    "(APIServer pid=1) INFO 09-04 11:01:16 [metrics.py:125] SpecDecoding metrics: Mean acceptance length: 6.82, "
    "Current speculative depth: 7, Accepted throughput: 6.46 tokens/s, Drafted throughput: 7.77 tokens/s, "
    "Accepted: 256 tokens, Drafted: 308 tokens, Per-position acceptance rate: 1.000, 1.000, 1.000, 1.000, 0.795, "
    "0.614, 0.409, Avg Draft acceptance rate: 83.1%"
)
# Two consecutive V1 interval lines (K = 2), public note (search-index file id 68569769894).
V1_TWO_LINES = (
    "INFO 09-16 05:26:57 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 3.00, Accepted throughput: "
    "9.00 tokens/s, Drafted throughput: 9.00 tokens/s, Accepted: 90 tokens, Drafted: 90 tokens, Per-position "
    "acceptance rate: 1.000, 1.000, Avg Draft acceptance rate: 100.0%\n"
    "INFO 09-16 05:27:27 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.00, Accepted throughput: "
    "3.20 tokens/s, Drafted throughput: 6.40 tokens/s, Accepted: 32 tokens, Drafted: 64 tokens, Per-position "
    "acceptance rate: 0.750, 0.250, Avg Draft acceptance rate: 50.0%\n"
)
# vLLM V0 line from vllm-project/vllm#9539 (https://github.com/vllm-project/vllm/issues/9539, counts from the issue).
V0_9539 = (
    "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System efficiency: "
    "0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547, Number of draft tokens: 13311, "
    "Number of emitted tokens: 10616."
)
# Prometheus exposition of the V1 counter names of vllm/v1/spec_decode/metrics.py (label values illustrative).
PROMETHEUS = """\
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 300.0
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 300.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 180.0
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 200.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 80.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 60.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="2"} 40.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="0"} 90.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="1"} 70.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="2"} 40.0
vllm:num_requests_running{engine="0"} 3.0
"""


def test_v1_line_converts_rho_to_alpha_through_tau():
    m = parse_spec_log(V1_DFLASH)
    assert m.k == 7
    assert m.accepted_tokens == 256 and m.drafted_tokens == 308
    assert m.mean_accepted_len == pytest.approx(1 + 256 / 44)  # drafts = 308 / 7 = 44; logged 6.82
    assert m.draft_acceptance_rate == pytest.approx(0.831, abs=5e-4)  # the logged 83.1%
    assert m.alpha != m.draft_acceptance_rate  # ρ is not α
    assert expected_tokens_per_step(m.alpha, 7) == pytest.approx(m.mean_accepted_len, abs=1e-6)
    assert m.acceptance_by_position[4] == pytest.approx(0.795) and m.alpha_first_position == 1.0


def test_several_v1_lines_are_summed_over_their_intervals():
    m = parse_spec_log(V1_TWO_LINES)
    assert m.k == 2 and m.lines == 2
    assert m.accepted_tokens == 122 and m.drafted_tokens == 154
    assert m.mean_accepted_len == pytest.approx(1 + 122 / 77)
    # per-position rates weighted by each interval's drafts
    assert m.acceptance_by_position[0] == pytest.approx((1.0 * 90 + 0.75 * 64) / 154)


def test_v0_line_uses_the_system_efficiency_not_its_acceptance_rate():
    m = parse_spec_log(V0_9539)
    assert m.k == 3
    assert m.mean_accepted_len == pytest.approx(10616 / (13311 / 3))  # = 0.598 x 4 unrounded
    assert m.mean_accepted_len == pytest.approx(0.598 * 4, abs=2e-3)
    assert m.v0_any_position_rate == 0.642
    assert m.draft_acceptance_rate is None  # V0's rate is not the prefix rate: not carried over
    assert expected_tokens_per_step(m.alpha, 3) == pytest.approx(m.mean_accepted_len, abs=1e-6)


def test_v0_line_without_counts_falls_back_to_the_efficiency():
    m = parse_spec_log(
        "Speculative metrics: Draft acceptance rate: 0.550, System efficiency: 0.400, Number of speculative tokens: 4"
    )
    assert m.mean_accepted_len == pytest.approx(2.0)


def test_prometheus_counters_sum_over_engines_and_convert():
    counters = parse_prometheus(PROMETHEUS)
    assert counters.num_drafts == 200 and counters.num_draft_tokens == 600 and counters.num_accepted_tokens == 380
    assert counters.accepted_per_pos == [170.0, 130.0, 80.0]
    m = acceptance_from_counters(counters)
    assert m.k == 3
    assert m.mean_accepted_len == pytest.approx(1 + 380 / 200)
    assert m.draft_acceptance_rate == pytest.approx(380 / 600)
    assert m.acceptance_by_position == pytest.approx([0.85, 0.65, 0.40])
    assert m.alpha_first_position == pytest.approx(0.85)


def test_llm_get_metrics_objects_and_deltas():
    before = counters_from_metrics(
        [
            SimpleNamespace(name="vllm:spec_decode_num_drafts", value=10),
            SimpleNamespace(name="vllm:spec_decode_num_draft_tokens", value=40),
            SimpleNamespace(name="vllm:spec_decode_num_accepted_tokens", value=20),
            SimpleNamespace(name="vllm:spec_decode_num_accepted_tokens_per_pos", values=[8, 6, 4, 2]),
        ]
    )
    after = counters_from_metrics(
        [
            SimpleNamespace(name="vllm:spec_decode_num_drafts", value=30),
            SimpleNamespace(name="vllm:spec_decode_num_draft_tokens", value=120),
            SimpleNamespace(name="vllm:spec_decode_num_accepted_tokens", value=80),
            SimpleNamespace(name="vllm:spec_decode_num_accepted_tokens_per_pos", values=[28, 22, 18, 12]),
            SimpleNamespace(name="vllm:num_requests_running", value=1),
        ]
    )
    m = acceptance_from_counters(counter_delta(after, before), k=4)
    assert m.mean_accepted_len == pytest.approx(1 + 60 / 20)
    assert m.acceptance_by_position == pytest.approx([1.0, 0.8, 0.7, 0.5])


def test_text_without_metrics_gives_none():
    assert parse_spec_log("INFO Avg prompt throughput: 0.0 tokens/s") is None
    assert acceptance_from_counters(parse_prometheus("vllm:num_requests_running 1")) is None
