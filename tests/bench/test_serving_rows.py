"""The serving bench rows: stated launch flags reach the simulator; aiconfigurator is called as its CLI documents."""

from __future__ import annotations

import csv
import importlib.util
import sys

import pytest

from bench.aiconfigurator_estimates import CACHE as AIC_CACHE
from bench.aiconfigurator_estimates import _parse, _program, command
from bench.serving_accuracy import (
    LOAD_PRECISION,
    QUOTE_LOAD_FACTOR,
    identical_waves_speedup,
    load,
    most_load_meeting,
    node_ratios,
    quoted_at_scale,
)
from bench.serving_rows import SDB_PROMPTS, ServingCase, load_cases, sdb_answer_lengths
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate, simulate_one

CASES, _ = load_cases()


def test_vllm_v060_rows_run_the_scheduler_steps_they_state():
    vllm = [c for c in CASES if c.row.startswith("VLLM060") and "-VLLM-" in c.row]
    others = [c for c in CASES if c.row.startswith("VLLM060") and "-VLLM-" not in c.row]
    assert vllm and others
    assert all(c.profile is not None and c.profile.scheduler_steps == 10 for c in vllm)
    assert all(c.profile is None or c.profile.scheduler_steps == 1 for c in others)
    assert all(c.profile is None or c.profile.scheduler_steps == 1 for c in CASES if not c.row.startswith("VLLM060"))


def test_aiconfigurator_is_asked_for_the_concurrency_lengths_and_precision_of_the_row():
    case = next(c for c in CASES if c.row == "VLLM060-L3-70B-4xH100-VLLM-QPS16")
    cmd = command(case, 36.6, 4096)
    if isinstance(cmd, str):
        pytest.skip(cmd)  # no measured tables here: the row is not covered
    flags = dict(zip(cmd[3::2], cmd[4::2], strict=False))
    assert flags["--estimate-mode"] == "agg" and flags["--batch-size"] == "37" and flags["--tp-size"] == "4"
    assert flags["--ctx-tokens"] == "4096"  # the engine's step budget, not aiconfigurator's one prompt a step
    assert flags["--gemm-quant-mode"] == "bfloat16" and flags["--kvcache-quant-mode"] == "bfloat16"


def test_aiconfigurator_output_is_read_per_tp_group_and_in_seconds():
    text = "TTFT:   49.267 ms\n  TPOT:   11.338 ms\n  tokens/s:   11,301.25\n  tokens/s/gpu:   2,825.31"
    assert _parse(text, "output_tok_s") == pytest.approx(11301.25)
    assert _parse(text, "tpot_s") == pytest.approx(0.011338)
    assert _parse(text, "ttft_s") == pytest.approx(0.049267)


def test_the_cli_runs_under_this_interpreter_when_installed():
    program = _program()
    if importlib.util.find_spec("aiconfigurator") is None:
        assert program is None or program[0].endswith("aiconfigurator")
    else:
        assert program == [sys.executable, "-m", "aiconfigurator.main"]


def test_nim_rows_are_closed_loops_compared_in_their_steady_window():
    nim = [c for c in CASES if c.row.startswith("NIM18-")]
    assert {c.kind for c in nim} == {"ttft_s", "tpot_s", "output_tok_s"}
    assert all(c.steady and not c.fitted for c in nim)
    case = next(c for c in nim if c.row == "NIM18-L33-70B-2xH100-FP8-5k500-C50" and c.kind == "ttft_s")
    assert case.measured == pytest.approx(0.83451)
    assert case.workload.mode == "concurrency" and case.workload.concurrency == 50
    assert case.workload.prompt_tokens == 5000 and case.workload.output_tokens == 500
    dep = case.deployment
    assert (dep.tp, dep.gpu_count, dep.engine, dep.dtype, dep.kv_dtype) == (2, 2, "trtllm", "fp8", "fp8")


def test_speedup_rows_are_judged_at_each_published_load():
    loads = {c.row: load(c) for c in CASES if c.kind == "speedup"}
    assert loads["SDB-L3-70B-SHAREGPT-DRAFT-BS64"] == "batch 64"
    assert loads["VLLMSD-L3-70B-ShareGPT-DRAFT-QPS8"] == "8 req/s"
    assert len({v for k, v in loads.items() if k.startswith("SDB-")}) == 4  # one load per published batch size


def test_specdecode_bench_rows_run_each_prompt_as_one_batch_of_identical_copies():
    sdb = [c for c in CASES if c.row.startswith("SDB-")]
    assert len(sdb) == 4 and all(c.identical_waves and c.kind == "speedup" for c in sdb)
    dep = sdb[0].deployment  # vLLM's LLM class at its defaults on an 80 GB GPU, the draft's 8,192-token context
    assert (dep.max_num_batched_tokens, dep.max_num_seqs, dep.max_model_len) == (16384, 1024, 8192)
    assert {c.workload.num_prompts for c in sdb} == {SDB_PROMPTS}


def test_identical_waves_average_each_batch_throughput_before_the_ratio():
    case = next(c for c in CASES if c.row == "SDB-L3-70B-SHAREGPT-DRAFT-BS16")
    short, long = (200, 40), (200, 800)
    alone = {}
    for pair in (short, long):
        one = ServingWorkload.build(offline=True, num_prompts=16, prompt_tokens=pair[0], output_tokens=pair[1])
        run = simulate(case.deployment, one, alpha=case.alpha, k=case.k)
        alone[pair] = (run.chosen.output_tokens_per_s, run.plain.output_tokens_per_s)
        repeated, _ = identical_waves_speedup(case, case.workload, ([pair[0]] * 2, [pair[1]] * 2))
        assert repeated == pytest.approx(alone[pair][0] / alone[pair][1])  # a whole batch's throughput, prefill in
    both, _ = identical_waves_speedup(case, case.workload, ([short[0], long[0]], [short[1], long[1]]))
    mean_ratio = (alone[short][0] + alone[long][0]) / (alone[short][1] + alone[long][1])
    assert both == pytest.approx(mean_ratio)  # the benchmark's mean throughputs, not a mean of speedups
    ratios = sorted(a / b for a, b in alone.values())
    assert ratios[0] < both < ratios[1]


def test_the_answer_lengths_beside_them_are_the_first_finished_answers():
    prompts, answers = sdb_answer_lengths()
    assert len(prompts) == len(answers) == SDB_PROMPTS
    assert max(answers) < 8192 and min(prompts) > 0  # an answer cut at max_tokens is not a finished one
    assert sdb_answer_lengths(3) == (prompts[:3], answers[:3])


def test_mlperf_rows_run_nvidias_harness_batch_on_the_benchmarks_own_lengths():
    mlperf = {(c.row, c.kind): c for c in CASES if c.row.startswith("ML41-")}
    offline = mlperf["ML41-H100x8-L2-70B-OFF", "output_tok_s"]
    dep = offline.deployment
    assert (dep.tp, dep.engine, dep.dtype, dep.kv_dtype, dep.max_num_seqs) == (2, "trtllm", "fp8", "fp8", 896)
    # the engines' token budget and the harness's MAX_UTILIZATION scheduling, in every ML41 row
    assert {c.deployment.max_num_batched_tokens for c in mlperf.values()} == {4096}
    assert {c.profile.admission_reserves_output for c in mlperf.values() if c.profile} == {False}
    assert all(c.profile is not None for c in mlperf.values())
    assert offline.workload.dataset == "mlperf-openorca" and offline.workload.mode == "offline" and offline.steady
    assert offline.measured == pytest.approx(24524.9 / 4, rel=1e-3)  # the node's figure over its 4 instances
    # answers at the tokens per sample each row's own log states (its tokens/s over its samples/s), not the
    # reference run's 294.45
    assert offline.workload.output_mean_tokens == pytest.approx(24524.9 / 84.4792)
    _, outputs = offline.workload.lengths()
    assert sum(outputs) / len(outputs) == pytest.approx(290.3, abs=0.1)
    server = mlperf["ML41-H200x8-L2-70B-SER", "tpot_s"]
    assert server.deployment.tp == 1 and server.deployment.max_num_seqs == 896
    assert server.workload.request_rate == pytest.approx(101.25 / 8)  # the load LoadGen scheduled, per instance
    assert server.workload.num_prompts >= 600 * 101.25 / 8  # ten minutes of it, the benchmark's shortest run
    assert server.measured == pytest.approx(0.1233) and server.at_objectives == (2.0, 0.2, 99.0)
    assert server.workload.output_mean_tokens == pytest.approx(29228.22 / 100.35)
    assert {kind for row, kind in mlperf if row.endswith("-SER")} == {"ttft_s", "tpot_s"}
    _, skipped = load_cases()
    reasons = {s.row: s.reason for s in skipped if s.row.startswith("ML41-")}
    assert set(reasons) == {r for r in reasons if "MI300X" in r or "B200" in r or "MIXTRAL" in r} and len(reasons) == 9


def test_the_most_load_meeting_objectives_meets_them_and_a_little_more_does_not():
    dep = next(c for c in CASES if c.row == "ML41-H200x8-L2-70B-SER").deployment
    workload = ServingWorkload.build(dataset="mlperf-openorca", request_rate=1.0, num_prompts=300, seed=0)
    profile = next(c for c in CASES if c.row == "ML41-H200x8-L2-70B-SER").profile
    case = ServingCase("t", "t", "ttft_s", 0.1, dep, workload, False, profile=profile, at_objectives=(1.0, 0.06, 99.0))
    rate, run = most_load_meeting(case)
    assert run.ttft_at(99) <= 1.0 and run.tpot_at(99) <= 0.06
    above = simulate_one(
        dep, workload.model_copy(update={"request_rate": rate * (1 + 2 * LOAD_PRECISION)}), profile=profile
    )
    assert above.ttft_at(99) > 1.0 or above.tpot_at(99) > 0.06


def test_node_comparisons_pair_each_gpu_with_the_same_benchmark_on_an_h100():
    exact = node_ratios([(c, c.measured) for c in CASES])
    assert exact and all(published == pytest.approx(planner) for *_, published, planner in exact)
    assert {gpu for _, gpu, *_ in exact} == {"h200-sxm-141gb", "b200-180gb"}  # never the H100 against itself
    h200_fast = node_ratios([(c, c.measured * (1.1 if c.deployment.gpu.id == "h200-sxm-141gb" else 1)) for c in CASES])
    for (_, gpu, _, planner), (*_, exact_planner) in zip(h200_fast, exact, strict=True):
        assert planner == pytest.approx(exact_planner * (1.1 if gpu == "h200-sxm-141gb" else 1))
    # per GPU: the node's tokens/s over its instances, over each instance's GPUs (H100: 4 of TP2, H200: 8 of TP1)
    mlperf = next(r for r in exact if r[0].startswith("ML41"))
    assert mlperf[2] == pytest.approx((31302.7 / 8 / 1) / (24524.9 / 4 / 2), rel=1e-3)


def test_a_server_row_is_quoted_as_a_quote_sizes_an_option_with_its_speed_margin():
    case = next(c for c in CASES if c.row == "ML41-H200x8-L2-70B-SER" and c.kind == "tpot_s")
    traffic, option, margin = quoted_at_scale(case)
    assert traffic.requests_per_s == pytest.approx(QUOTE_LOAD_FACTOR * case.workload.request_rate)
    assert (traffic.ttft_slo_s, traffic.tpot_slo_s, traffic.percentile) == case.at_objectives
    assert option.meets_slo and option.replicas * option.capacity_requests_per_s >= traffic.requests_per_s
    assert margin.quoted_replicas == option.replicas and 0 <= margin.margin_frac <= margin.limit_frac


def test_every_cell_of_the_tensorrt_llm_throughput_table_is_a_row_with_aiconfigurators_estimate_kept():
    """The table's Llama-3.1-8B (H200, H100), Llama-3.3-70B and Llama-3.1-405B (B200, H200, H100) columns at its
    ten lengths: 80 cells, each once, each with aiconfigurator's answer kept for the command the bench would run."""
    cells = [case for case in CASES if case.row.startswith("TRTPO-")]
    shapes = {
        (c.deployment.target.id, c.deployment.gpu.id, c.workload.prompt_tokens, c.workload.output_tokens) for c in cells
    }
    assert len(cells) == len(shapes) == 2 * 10 + 3 * 10 + 3 * 10
    assert {(p, o) for _, _, p, o in shapes} == {
        (128, 128), (128, 2048), (128, 4096), (500, 2000), (1000, 1000), (1000, 2000), (2048, 128), (2048, 2048),
        (5000, 500), (20000, 2000),
    }  # fmt: skip
    with AIC_CACHE.open(newline="") as handle:
        kept = {(row["case_id"], row["kind"]) for row in csv.DictReader(handle) if row["value"]}
    assert {(c.row, c.kind) for c in cells} <= kept
