"""The rows of data/calibration/serving-measured.csv as simulator runs: deployment, workload, metric, measured.

One rule per source (never per row):

* ``ML41-`` MLPerf Inference v4.1, Llama-2-70B on NVIDIA's harness (TensorRT-LLM, FP8 weights and KV cache): the
  benchmark's own request lengths (the ``mlperf-openorca`` dataset: the set's prompts, and answers spread as its
  reference answers are, scaled to the tokens per sample the row's own log states: its output tokens per second over its
  samples per second, 290.3 and 291.3 where the reference run's mean is 294.45), one instance per replica (the published
  TP, at the harness's ``gpu_batch_size`` for the scenario, as the row states it, its engines' token budget and its
  scheduling policy, ``MLPERF_MAX_NUM_TOKENS``), the node's figure over its instances. Offline: the steady output tokens
  per second of every request at once (``MLPERF_ROUNDS`` batches of them; the benchmark runs ten minutes, its warm-up a
  negligible part). Server: Poisson arrivals at the load LoadGen scheduled, ten minutes of them (the benchmark's
  shortest run), and the mean TTFT and TPOT it logs; its throughput is that load, so not compared. MLPerf's Server
  result is the load its submitter chose under p99 TTFT <= 2 s and p99 TPOT <= 200 ms (``MLPERF_SERVER_OBJECTIVES``):
  the bench also prints the most load the planner finds meeting them (``at_objectives``), beside the chosen one. Not
  expressible: the AMD rows (their harness's batch limits are not stated at the sources read), the B200 preview (its
  precision is not stated) and Mixtral (the lengths of its set as v4.1 ran it are not in ``data/``).
* ``TRTPO-`` TensorRT-LLM offline throughput at fixed lengths: the published request count at once (capped by the
  simulator's work budget), FP8 (or FP4) weights and FP8 KV cache (NVIDIA's quantized checkpoints quantize the KV
  cache too); Llama-3.3-70B has Llama-3.1-70B's geometry. The table was measured with ``trtllm-bench``, whose
  scheduler admits what the KV cache holds now (MAX_UTILIZATION) but whose dynamic batch-size tuning caps the batch
  at the requests the cache holds at their whole input + output length (TensorRT-LLM
  tensorrt_llm/bench/dataclasses/configuration.py, cpp/tensorrt_llm/executor/dynamicBatchTuner.cpp): the same batch
  as the engine's default of reserving each request's output, which the rows keep. Admitting without the cap
  preempts (recomputes) up to one request per request served in these all-at-once runs: it would move the 70B and
  405B rows down by 4-14% and leave the 8B rows further low (up to 17.5%).
* ``VLLM060-`` vLLM v0.6.0 blog, ShareGPT (500 prompts): unlimited rate = offline (output tok/s = req/s x 179),
  Poisson rates for TPOT; vLLM of that date is the ``vllm-v0`` profile at the release the row states (0.6.0) with the
  ``--num-scheduler-steps`` it states (multi-step scheduling), SGLang v0.3.0 the ``sglang-0.3``
  speed profile (its scheduler ran between GPU steps: the overlap scheduler came with v0.4); bf16. Each engine is
  launched as the blog's benchmark suite launched it (``VLLM060_LAUNCH``), at Llama-3's 8,192-token context.
* ``VLLMSD-`` vLLM spec-decode blog (V0 era, bf16 assumed): Llama-3-70B TP4 + a 0.5B draft (Qwama-0.5B, a
  Qwen2-0.5B with Llama-3's vocabulary: Qwen2.5-0.5B's geometry stands in) at K = 4, ShareGPT, Poisson rate;
  speedup = plain / speculative mean end-to-end latency; α is the pair prior. The n-gram rows (CNN/DailyMail)
  state neither n-gram lookup's acceptance there nor the set's lengths.
* ``NIM18-`` NVIDIA NIM for LLMs 1.8.0 benchmark tables: Llama-3.3-70B-Instruct FP8 on 2x H100 at TP2, a closed
  loop at each published concurrency with fixed lengths; TensorRT-LLM (NIM's FP8 profiles), FP8 KV cache as for the
  ``TRTPO-`` rows. The tables average the benchmark's measurement after its warm-up, so the steady-window figures are
  compared (the first round, every client at once, left out): TTFT, ITL as TPOT, output tokens per second.
* ``SDB-`` SpecDecode-Bench: vLLM V1 at the release the row states (v0.10.1: its memory rules and CUDA-graph sizes),
  Llama-3-70B TP4 + Llama-3.2-1B, K = 3, ShareGPT; α is the pair prior. The
  benchmark runs each sampled prompt as one offline batch of that many identical copies (``LLM.generate`` over the
  prompt repeated batch-size times, greedy, to the end of the answer) and plots the mean over its prompts of each
  batch's output tokens per second, with the draft over without it (scripts/bench_latency.py and
  scripts/vis_speedup.py in https://github.com/SpecDecode-Bench/vllm, 100 prompts plotted): the rows run
  ``SDB_PROMPTS`` ShareGPT-like prompts so (``identical_waves``), the engine at the LLM class's defaults on an 80 GB
  GPU (``max_num_batched_tokens`` 16,384, ``max_num_seqs`` 1,024) and the draft's 8,192-token context the script
  sets. The outputs are the model's own answers, whose lengths the sources do not state: the rows take the
  dataset's.

Llama-3-70B and Llama-3-8B are the catalog's Llama-3.1-70B / Meta-Llama-3-8B (same geometry).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from planner.catalog.lookup import get_gpu, get_model
from planner.catalog.name_matching import match_gpu
from planner.deployment import Deployment
from planner.input_types import MAX_SIMULATION_WORK
from planner.pairs.acceptance import acceptance_prior
from planner.speed.profiles import SpeedProfile, speed_profile
from planner.speed.serving_workload import ServingWorkload

CSV = Path(__file__).resolve().parents[1] / "data" / "calibration" / "serving-measured.csv"

#: Rows the step-model fit uses (bench/fit_step_model.py); every other row is untouched by any fit (the other 72 cells
#: of the same TensorRT-LLM table were added after the fit).
FIT_ROWS = (
    "TRTPO-L31-8B-H100-1k1k", "TRTPO-L31-8B-H200-1k1k", "TRTPO-L31-8B-H100-2k128", "TRTPO-L31-8B-H200-128-2k",
    "TRTPO-L31-405B-H100-1k1k", "TRTPO-L31-405B-H200-1k1k", "TRTPO-L31-405B-B200-1k1k", "TRTPO-L31-405B-H200-128-2k",
    "VLLM060-L3-8B-1xH100-VLLM-QPSINF", "VLLM060-L3-70B-4xH100-VLLM-QPSINF",
)  # fmt: skip
#: Speculative rows the fit of vLLM V0's per-sequence speculation cost uses.
FIT_SPEC_PREFIXES = ("VLLMSD-L3-70B-ShareGPT-DRAFT-",)

#: The engines' launch settings in the benchmark suite behind the vLLM v0.6.0 blog (its ShareGPT tests
#: ``llama8B_tp1_sharegpt`` and ``llama70B_tp4_sharegpt``, .buildkite/nightly-benchmarks/tests/nightly-tests.json in
#: https://github.com/vllm-project/vllm, with vLLM at ``num_scheduler_steps`` 10 as the rows state): vLLM
#: ``max_num_seqs`` 512; TensorRT-LLM v0.11 engines built with ``max_batch_size`` 2048, ``max_num_tokens`` 16384 and
#: ``max_seq_len`` 6144; SGLang with its defaults (on 8B also ``--enable-torch-compile``, which no speed profile
#: prices); every model at its own context (Llama-3: 8,192 tokens) elsewhere. The suite passed ``--ignore-eos`` to
#: its client, which sent it with the first test request only until vLLM PR #9349 (2024-10-15): the measured outputs
#: may have ended before the dataset's lengths, which the rows simulate.
VLLM060_LAUNCH = {
    "vllm-v0": {"max_num_seqs": 512, "max_model_len": 8192},
    "trtllm": {"max_num_seqs": 2048, "max_num_batched_tokens": 16384, "max_model_len": 6144},
    "sglang": {"max_model_len": 8192},
}

#: SpecDecode-Bench's engine: vLLM's ``LLM`` class at its defaults on a GPU of 70 GiB or more
#: (``EngineArgs`` batch defaults in vllm/engine/arg_utils.py: ``max_num_batched_tokens`` 16,384 and ``max_num_seqs``
#: 1,024 for the LLM class) and the 8,192-token context its script gives the draft (``--max_model_len 8192``,
#: Llama-3-70B's own); prompts plotted per batch size (scripts/vis_speedup.py ``max_reqs``).
SDB_LAUNCH = {"max_num_batched_tokens": 16384, "max_num_seqs": 1024, "max_model_len": 8192}
SDB_PROMPTS = 100
#: Llama-3.1-8B-Instruct's answers on SpecDecode-Bench's ShareGPT prompts (data/calibration/README.md).
SDB_ANSWERS = CSV.parent / "specdecode-bench-answer-lengths.csv"


def sdb_answer_lengths(count: int = SDB_PROMPTS, max_tokens: int = 8192) -> tuple[list[int], list[int]]:
    """(prompt tokens, answer tokens) of the first ``count`` answers in :data:`SDB_ANSWERS` that finished before
    ``max_tokens`` (the benchmark's plot keeps finished answers only, ``scripts/vis_speedup.py``)."""
    with SDB_ANSWERS.open(newline="") as f:
        finished = [(int(r["prompt_tokens"]), int(r["output_tokens"])) for r in csv.DictReader(f)]
    finished = [(p, o) for p, o in finished if o < max_tokens][:count]
    return [p for p, _ in finished], [o for _, o in finished]


@dataclass
class ServingCase:
    row: str
    label: str
    kind: str  # output_tok_s, ttft_s, tpot_s, speedup
    measured: float
    deployment: Deployment
    workload: ServingWorkload
    fitted: bool
    alpha: float | None = None
    k: int | None = None
    notes: list[str] = field(default_factory=list)
    #: The speed profile of the engine release the row ran, where it is not the engine's current one.
    profile: SpeedProfile | None = None
    #: Compare the steady window's figures (the source leaves its warm-up out) rather than the whole run's.
    steady: bool = False
    #: Each request of the workload runs alone as one offline batch of ``workload.concurrency`` identical copies,
    #: and the figure is the mean over the requests of each batch's output tokens per second (a speedup: with the
    #: draft over without it).
    identical_waves: bool = False
    #: (TTFT s, TPOT s, percentile) the source's load was chosen under: the bench prints the most load the planner
    #: finds meeting them (the workload's, at another rate).
    at_objectives: tuple[float, float, float] | None = None
    #: The shortest run the source's benchmark allows, in seconds of arrivals (the search's runs last that long).
    min_duration_s: float = 0.0


@dataclass
class Unexpressible:
    row: str
    reason: str


def _float(text: str) -> float | None:
    match = re.match(r"\s*~?([0-9.]+)", text or "")
    return float(match.group(1)) if match else None


def _gpu(text: str) -> str:
    """The catalog GPU a row's ``gpu_type`` names, matched as drivers' and logs' names are (``GB200`` before
    ``B200``, ``H100 NVL`` before ``H100``)."""
    gpu = match_gpu(text)
    if gpu is None:
        raise KeyError(text)
    return gpu.id


def _dep(target: str, gpu: str, tp: int, **fields) -> Deployment:
    return Deployment.build(target=get_model(target), gpu=get_gpu(gpu), gpu_count=tp, tp=tp, **fields)


def _sharegpt(**arrivals) -> ServingWorkload:
    return ServingWorkload.build(dataset="sharegpt", num_prompts=500, seed=0, **arrivals)


#: MLPerf Inference's Server-scenario limits for Llama-2-70B: p99 TTFT 2 s, p99 TPOT 200 ms (the rows'
#: ``latency_constraint``), as (TTFT s, TPOT s, percentile).
MLPERF_SERVER_OBJECTIVES = (2.0, 0.2, 99.0)
#: Requests an MLPerf row simulates, in batches of the instance's ``gpu_batch_size``.
MLPERF_ROUNDS = 6
#: MLPerf Inference's shortest performance run: 600 s (LoadGen's ``min_duration`` for the datacenter suite).
MLPERF_MIN_DURATION_S = 600.0
#: The per-step token budget of NVIDIA's v4.1 Llama-2-70B engines: ``max_num_tokens = 4096`` in their base config
#: (closed/NVIDIA/configs/llama2-70b/__init__.py of https://github.com/mlcommons/inference_results_v4.1), which
#: builds them without chunked context. Their harness schedules with TensorRT-LLM's MAX_UTILIZATION policy (its
#: ``trtllm_batch_sched_policy`` flag defaults to ``max_util``, closed/NVIDIA/code/harness/harness_llm/main_llm.cc,
#: and the Llama-2 harness does not set it): requests are admitted on the KV cache they hold now, not on their
#: whole answer.
MLPERF_MAX_NUM_TOKENS = 4096


def _mlperf(row: dict) -> list[ServingCase] | Unexpressible:
    case = row["case_id"]
    if "B200" in case:
        return Unexpressible(case, "B200 preview: the weight precision is not stated")
    if "MIXTRAL" in case:
        return Unexpressible(
            case, "the lengths of MLPerf's Mixtral set as v4.1 ran it (its 2024-06-06 revision) are not in data/"
        )
    if "MI300X" in case:
        return Unexpressible(case, "AMD's vLLM harness: its batch limits are not stated at the sources read")
    batches = re.search(r"gpu_batch_size (\d+) \(Offline\) / (\d+) \(Server\)", row["notes"])
    assert batches, f"{case}: the harness's batch per scenario"
    server = case.endswith("-SER")
    batch = int(batches.group(2 if server else 1))
    tp = int(re.match(r"TP(\d+)", row["parallelism"]).group(1))  # type: ignore[union-attr]
    instances = int(row["replicas_in_result"])
    dep = _dep(
        "meta-llama/Llama-2-70b-hf", _gpu(row["gpu_type"]), tp, dtype="fp8", kv_dtype="fp8", engine="trtllm",
        max_model_len=2048, max_num_seqs=batch, max_num_batched_tokens=MLPERF_MAX_NUM_TOKENS,
    )  # fmt: skip
    profile = speed_profile("trtllm", "nvidia").with_values(admission_reserves_output=False)  # MAX_UTILIZATION
    tokens_per_sample = float(row["output_tok_s"]) / float(row["req_s"])
    notes = [f"answers at the {tokens_per_sample:.1f} tokens per sample its log states", "FP8 KV cache"]
    label = f"{case}: Llama-2-70B FP8 TP{tp} MLPerf {'Server' if server else 'Offline'} (trtllm, batch {batch})"
    if not server:
        workload = ServingWorkload.build(
            dataset="mlperf-openorca", output_mean_tokens=tokens_per_sample, offline=True,
            num_prompts=MLPERF_ROUNDS * batch, seed=0,
        )  # fmt: skip
        measured = float(row["per_replica_output_tok_s_derived"])
        return [
            ServingCase(
                case, label, "output_tok_s", measured, dep, workload, False, notes=notes, profile=profile, steady=True
            )
        ]
    scheduled = re.search(r"scheduled ([\d.]+) samples/s", row["load_value"])
    assert scheduled, f"{case}: the load LoadGen scheduled"
    rate = float(scheduled.group(1)) / instances
    workload = ServingWorkload.build(
        dataset="mlperf-openorca", output_mean_tokens=tokens_per_sample, request_rate=rate,
        num_prompts=math.ceil(rate * MLPERF_MIN_DURATION_S), seed=0,
    )  # fmt: skip
    figures = (("ttft_s", "ttft_mean_ms"), ("tpot_s", "tpot_mean_ms"))
    return [
        ServingCase(
            case, f"{label} at {rate:.2f} req/s", kind, float(row[column]) / 1e3, dep, workload, False, notes=notes,
            profile=profile, at_objectives=MLPERF_SERVER_OBJECTIVES,
            min_duration_s=MLPERF_MIN_DURATION_S,
        )
        for kind, column in figures
    ]  # fmt: skip


def _trtpo(row: dict) -> list[ServingCase]:
    case = row["case_id"]
    tp = int(row["gpu_count"])
    name = row["target_model"]
    model = {"8B": "Llama-3.1-8B", "70B": "meta-llama/Llama-3.3-70B-Instruct"}.get(name.split("-")[2], "Llama-3.1-405B")
    dtype = "nvfp4" if row["precision"] == "FP4" else "fp8"
    prompt, output = int(row["mean_input_tokens"]), int(row["mean_output_tokens"])
    max_len = max(4096, -(-(prompt + output) // 1024) * 1024)
    dep = _dep(model, _gpu(row["gpu_type"]), tp, dtype=dtype, kv_dtype="fp8", engine="trtllm", max_model_len=max_len)
    # the requests published, fewer where that passes the simulator's work budget (128/2k: 2,440)
    requests = min(int(row["num_prompts_or_samples"]), int(MAX_SIMULATION_WORK // (output + 1)))
    workload = ServingWorkload.build(offline=True, prompt_tokens=prompt, output_tokens=output, num_prompts=requests)
    label = f"{case}: {model} {dtype.upper()} TP{tp} {prompt}/{output} (trtllm)"
    note = "FP8 KV cache (NVIDIA's quantized checkpoints quantize the KV cache too)"
    measured = float(row["output_tok_s"])
    return [ServingCase(case, label, "output_tok_s", measured, dep, workload, case in FIT_ROWS, notes=[note])]


def _vllm060(row: dict) -> list[ServingCase] | Unexpressible:
    case = row["case_id"]
    engine = {"vLLM": "vllm-v0", "SGLang": "sglang", "TensorRT-LLM": "trtllm"}[row["engine"]]
    big = "70B" in case
    tp = 4 if big else 1
    stated = re.match(r"v(\d+\.\d+\.\d+)", row["engine_version"]) if engine == "vllm-v0" else None
    dep = _dep(
        "Llama-3.1-70B" if big else "Meta-Llama-3-8B", "h100-sxm-80gb", tp, engine=engine,
        engine_version=stated.group(1) if stated else None, **VLLM060_LAUNCH[engine],
    )  # fmt: skip
    fitted = case in FIT_ROWS
    release = "sglang-0.3" if engine == "sglang" else engine  # SGLang v0.3.0: scheduler not yet overlapped
    profile = speed_profile(release, "nvidia")
    multi_step = re.search(r"--num-scheduler-steps (\d+)", row["engine_version"])
    if multi_step:  # the run's launch flag, as its source states it
        profile = profile.with_values(scheduler_steps=int(multi_step.group(1)))
    label = f"{case}: Llama-3-{'70B TP4' if big else '8B TP1'} ShareGPT ({release})"
    if "QPSINF" in case:
        measured = float(row["req_s"]) * 179
        return [
            ServingCase(case, label, "output_tok_s", measured, dep, _sharegpt(offline=True), fitted, profile=profile)
        ]
    qps = float(row["load_value"].split("=")[1])
    tpot = float(row["tpot_mean_ms"]) / 1e3
    return [ServingCase(case, label, "tpot_s", tpot, dep, _sharegpt(request_rate=qps), False, profile=profile)]


def _vllmsd(row: dict) -> list[ServingCase] | Unexpressible:
    case = row["case_id"]
    if "NGRAM" in case:
        return Unexpressible(
            case,
            "n-gram lookup on CNN/DailyMail: its acceptance there (summaries copy their article) and the set's prompt "
            "and output lengths are not stated at the sources read (the speedup depends on both)",
        )
    target, draft = get_model("Llama-3.1-70B"), get_model("Qwen2.5-0.5B")
    dep = Deployment.build(
        target=target, draft=draft, gpu=get_gpu("h100-sxm-80gb"), gpu_count=4, tp=4, engine="vllm-v0",
        num_speculative_tokens=4, max_model_len=4096,
    )  # fmt: skip
    alpha = acceptance_prior(target, draft).alpha
    qps = float(row["load_value"].split("=")[1])
    label = f"{case}: Llama-3-70B TP4 + 0.5B draft K4, {qps:g} req/s (vllm-v0)"
    notes = ["Qwen2.5-0.5B geometry stands in for Qwama-0.5B", f"α prior {alpha:.3f}"]
    return [
        ServingCase(
            case,
            label,
            "speedup",
            float(row["speedup"]),
            dep,
            _sharegpt(request_rate=qps),
            case.startswith(FIT_SPEC_PREFIXES),
            alpha,
            4,
            notes=notes,
        )
    ]


def _sdb(row: dict) -> list[ServingCase]:
    case = row["case_id"]
    target, draft = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")
    release = re.match(r"v?(\d+\.\d+\.\d+)", row["engine_version"])
    assert release, f"{case}: the vLLM release the row states"
    dep = Deployment.build(
        target=target, draft=draft, gpu=get_gpu("h100-sxm-80gb"), gpu_count=4, tp=4, engine="vllm",
        engine_version=release.group(1), num_speculative_tokens=3, **SDB_LAUNCH,
    )  # fmt: skip
    alpha = acceptance_prior(target, draft).alpha
    batch = int(row["load_value"].split("=")[1])
    workload = ServingWorkload.build(dataset="sharegpt", concurrency=batch, num_prompts=SDB_PROMPTS, seed=0)
    label = f"{case}: Llama-3-70B TP4 + Llama-3.2-1B K3, batch {batch} (vllm)"
    return [
        ServingCase(
            case,
            label,
            "speedup",
            float(row["speedup"]),
            dep,
            workload,
            False,
            alpha,
            3,
            notes=[f"α prior {alpha:.3f}", f"each of {SDB_PROMPTS} prompts as one batch of {batch} copies"],
            identical_waves=True,
        )
    ]


#: Closed-loop requests per client in a ``NIM18-`` run: enough rounds for a steady window past the first one, and
#: for the rows whose KV cache holds fewer than their clients to settle (at 100 clients the queue still grew at 8:
#: output tokens/s moved by 3.6 points from 8 to 16 requests per client and by 1.6 from 16 to 32; every other row
#: by 1.7 at most, TPOT by 2.3).
NIM_ROUNDS = 16


def _nim(row: dict) -> list[ServingCase]:
    case = row["case_id"]
    prompt, output = int(row["mean_input_tokens"]), int(row["mean_output_tokens"])
    concurrency = int(row["load_value"].split("=")[1])
    max_len = max(4096, -(-(prompt + output) // 1024) * 1024)
    dep = _dep(
        "meta-llama/Llama-3.3-70B-Instruct", "h100-sxm-80gb", 2, dtype="fp8", kv_dtype="fp8", engine="trtllm",
        max_model_len=max_len,
    )  # fmt: skip
    workload = ServingWorkload.build(
        concurrency=concurrency, prompt_tokens=prompt, output_tokens=output,
        num_prompts=max(100, NIM_ROUNDS * concurrency),
    )  # fmt: skip
    label = f"{case}: Llama-3.3-70B FP8 TP2 {prompt}/{output}, concurrency {concurrency} (trtllm)"
    note = "steady window (the benchmark's warm-up left out); FP8 KV cache"
    figures = (("ttft_s", "ttft_mean_ms", 1e-3), ("tpot_s", "itl_mean_ms", 1e-3), ("output_tok_s", "output_tok_s", 1.0))
    return [
        ServingCase(case, label, kind, float(row[column]) * scale, dep, workload, False, notes=[note], steady=True)
        for kind, column, scale in figures
        if row[column]
    ]


RULES = {"ML41-": _mlperf, "TRTPO-": _trtpo, "VLLM060-": _vllm060, "VLLMSD-": _vllmsd, "SDB-": _sdb, "NIM18-": _nim}


def load_cases() -> tuple[list[ServingCase], list[Unexpressible]]:
    cases: list[ServingCase] = []
    skipped: list[Unexpressible] = []
    with CSV.open(newline="") as handle:
        for row in csv.DictReader(handle):
            rule = next(fn for prefix, fn in RULES.items() if row["case_id"].startswith(prefix))
            result = rule(row)
            if isinstance(result, Unexpressible):
                skipped.append(result)
            else:
                cases += result
    return cases, skipped
