"""Predictions for the calibration rows, shared by `make bench-speed-accuracy` and the profile fit.

* speedup rows (bench/speed_rows.py): the decode speedup, or the end-to-end latency ratio where the
  row measured latency; at the row's K, else at the optimal K;
* rows without acceptance use an α prior: the pair's prior from ``planner.pairs.acceptance`` (lineage
  relation and parameter ratio, data/acceptance_priors.json), set when the row is parsed;
* plain-decoding rows (data/calibration/plain-decode-measured.csv): TPOT, tok/s per sequence or
  end-to-end latency of the target alone.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from math import log
from pathlib import Path

from bench.speed_rows import Case
from planner.catalog.lookup import get_gpu, get_model
from planner.deployment import ENGINES, Deployment
from planner.errors import PlannerError
from planner.facts import REPO_ROOT
from planner.speed.estimate import SpeedWorkload, baseline_speed, estimate_speed
from planner.speed.profiles import SpeedProfile, speed_profile

PLAIN_PATH = REPO_ROOT / "data" / "calibration" / "plain-decode-measured.csv"


def profile_for(case_deployment: Deployment, overrides: dict[str, SpeedProfile] | None) -> SpeedProfile:
    base = speed_profile(case_deployment.engine, case_deployment.gpu.vendor)
    return (overrides or {}).get(base.id, base)


def predict_case(case: Case, alpha: float | None, overrides: dict[str, SpeedProfile] | None = None) -> float:
    """Predicted speedup of ``case`` (``alpha`` replaces the row's acceptance when given)."""
    profile = profile_for(case.deployment, overrides)
    workload = case.workload
    if alpha is not None:
        fields = workload.model_dump()
        fields |= {"alpha": alpha, "mean_accepted_len": None, "draft_acceptance_rate": None}
        workload = SpeedWorkload.build(**fields)
    estimate = estimate_speed(case.deployment, workload, profile)
    if not case.k_known:
        tuned = workload.model_copy(update={"k": estimate.optimal_k})
        estimate = estimate_speed(case.deployment, tuned, profile)
    if case.metric == "e2e":
        return estimate.baseline_e2e_latency_s / estimate.spec_e2e_latency_s
    return estimate.decode_speedup


def implied_alpha(case: Case, overrides: dict[str, SpeedProfile] | None = None) -> float | None:
    """The α at which the model reproduces the measured speedup (bisection); None if none does."""
    low, high = 0.0, 1.0
    if predict_case(case, high, overrides) < case.measured:
        return None
    for _ in range(40):
        mid = (low + high) / 2
        if predict_case(case, mid, overrides) < case.measured:
            low = mid
        else:
            high = mid
    return (low + high) / 2


@dataclass
class PlainRow:
    line: int
    label: str
    metric: str
    measured: float
    deployment: Deployment | None
    workload: SpeedWorkload | None
    reason: str = ""
    #: False for an engine without a speed profile: such rows only inform the vendor bandwidth fit,
    #: with the engine's fixed per-step cost as a free (nuisance) parameter.
    profiled: bool = True


def load_plain(path: Path = PLAIN_PATH) -> list[PlainRow]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            label = f"{row['target_measured'][:40]} | {row['gpu']} TP{row['tp']} | {row['engine']}"
            fields = {"batch_size": int(row["batch_size"]), "alpha": 0.0}
            if row["prompt_tokens"]:
                fields |= {"prompt_tokens": int(row["prompt_tokens"]), "output_tokens": int(row["output_tokens"])}
            profiled = row["engine"] in ENGINES
            try:
                deployment = Deployment.build(
                    target=get_model(row["target"]),
                    gpu=get_gpu(row["gpu"]),
                    gpu_count=int(row["gpu_count"]),
                    tp=int(row["tp"]),
                    dtype=row["dtype"],
                    kv_dtype=row["kv_dtype"],
                    engine=row["engine"] if profiled else "vllm",
                )
                workload = SpeedWorkload.build(**fields)
                rows.append(
                    PlainRow(
                        line,
                        label,
                        row["metric"],
                        float(row["measured"]),
                        deployment,
                        workload,
                        "" if profiled else f"engine {row['engine']!r} has no speed profile",
                        profiled,
                    )
                )
            except PlannerError as exc:
                rows.append(PlainRow(line, label, row["metric"], float(row["measured"]), None, None, str(exc)))
    return rows


def predict_plain(row: PlainRow, overrides: dict[str, SpeedProfile] | None = None) -> float:
    assert row.deployment is not None and row.workload is not None
    base = baseline_speed(row.deployment, row.workload, profile_for(row.deployment, overrides))
    return {"tok_s_per_sequence": base.tok_s_per_sequence, "tpot_s": base.tpot_s, "e2e_latency_s": base.e2e_latency_s}[
        row.metric
    ]


def bandwidth_floor_violated(row: PlainRow) -> bool:
    """True when the measurement beats the physics at 100% bandwidth and no overhead (a bad row)."""
    assert row.deployment is not None and row.workload is not None
    ideal = speed_profile(row.deployment.engine, row.deployment.gpu.vendor).with_values(
        bandwidth_frac=1.0,
        flops_frac=1.0,
        layer_overhead_s=0.0,
        eager_layer_overhead_s=0.0,
        step_overhead_s=0.0,
        allreduce_latency_s=0.0,
    )
    best = predict_plain(row, {ideal.id: ideal})
    return row.measured > best if row.metric == "tok_s_per_sequence" else row.measured < best


def log_error(predicted: float, measured: float) -> float:
    return abs(log(predicted / measured))


def pct_error(predicted: float, measured: float) -> float:
    return 100 * (predicted - measured) / measured
