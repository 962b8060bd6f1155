"""Read the published speculative-decoding measurements into planner inputs, or say why a row cannot be.

Each row of ``data/calibration/specdec-measured.csv`` (each row names its public source)
is parsed by the same rules, never by row: models and GPUs through :mod:`planner.catalog.name_matching`,
the engine from its name and version (vLLM before 0.8 is the V0 engine), TP from "TP=n" or the GPU
count, FP8 from the hardware or model text, lengths from "N in / M out" or "N/M", acceptance by the
engine's convention (a τ column wins; vLLM V1 reports ρ = (τ−1)/K, so a row with both gives K).

Conventions for what a row leaves out (each is stated in the row's ``assumptions``):

* K not captured: compare against the speedup at the optimal K (published figures are tuned runs);
* a low-load online row (QPS = 1, a request rate up to 1 req/s, or "online serving"): batch 1;
* a row whose notes give latencies in ms measures end-to-end latency, so the predicted ratio is
  of end-to-end latency (prefill included); otherwise it is the decode speedup.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from planner.acceptance_math import alpha_from_tau
from planner.catalog.lookup import get_model, get_weight_format, list_gpus
from planner.catalog.name_matching import match_gpu, match_model
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.facts import REPO_ROOT
from planner.pairs.acceptance import acceptance_prior
from planner.speed.estimate import SpeedWorkload

CSV_PATH = REPO_ROOT / "data" / "calibration" / "specdec-measured.csv"
V1_DEFAULT_FROM = (0, 8)  # vLLM 0.8.0 made the V1 engine the default (vLLM release notes, 2025-03)
_NOT_A_MODEL = ("eagle", "medusa", "n-gram", "lookup", "self-speculation", "heads", "various", "small draft")


@dataclass
class Case:
    row: int
    label: str
    measured: float
    deployment: Deployment
    workload: SpeedWorkload
    k_known: bool
    metric: str  # "decode" or "e2e"
    has_acceptance: bool
    alpha: float | None
    assumptions: list[str] = field(default_factory=list)


@dataclass
class Skipped:
    row: int
    label: str
    reason: str


def _number(text: str) -> float | None:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)(?:\s*\(.*\))?\s*", text)
    return float(match.group(1)) if match else None


def _engine(text: str) -> str | None:
    low = text.lower()
    if any(word in low for word in ("fork", "smartspec", "research", "reference impl", "internal", "t5x")):
        return None
    if "tensorrt-llm" in low:
        return "trtllm"
    if "sglang" in low:
        return "sglang"
    if "transformers" in low:
        return None if ("dynamic" in low or "heuristic" in low or "uag" in low or "universal" in low) else "hf"
    if "vllm" in low:
        if "v1" in low:
            return "vllm"
        if "v0" in low:
            return "vllm-v0"
        version = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", low)
        if version:
            return "vllm-v0" if (int(version.group(1)), int(version.group(2))) < V1_DEFAULT_FROM else "vllm"
        return "vllm"
    return None


def _batch(text: str, notes: list[str]) -> int | None:
    low = text.lower().strip()
    leading = re.match(r"(\d+)(?:\s*\(.*\))?$", low)
    if leading:
        return int(leading.group(1))
    rate = re.search(r"(?:qps\s*=\s*|request rate\s*)(\d+(?:\.\d+)?)", low)
    if rate and float(rate.group(1)) <= 1.0:
        notes.append(f"online at {rate.group(1)} req/s taken as batch 1 (low load)")
        return 1
    if low in ("online serving", "online serving (request-rate sweep)"):
        notes.append("online serving at low request rates taken as batch 1")
        return 1
    return None


def _k(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d+", text.strip()) else None


def _lengths(task: str) -> tuple[int, int] | None:
    match = re.search(r"(\d{3,6})\s*(?:in\s*/\s*|/)\s*(\d{2,6})", task)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _head(text: str):
    """A catalog speculator head named in parentheses ("EAGLE-3 head (yuhuili/EAGLE3-...)"), or None."""
    named = re.search(r"\(([\w.-]+/[\w.-]+)\)", text)
    if named is None:
        return None
    try:
        spec = get_model(named.group(1))
    except PlannerError:
        return None
    return spec if spec.speculator is not None else None


def _model(text: str, role: str):
    low = text.lower()
    head = _head(text) if role == "draft" else None
    if head is not None:
        return (head, None), None
    if any(word in low for word in _NOT_A_MODEL):
        return None, f"{role} '{text}' is not a catalog model or head (uncatalogued heads, n-gram, self-speculation)"
    name = text.split(" (", maxsplit=1)[0].strip()
    match = match_model(name)
    if match is None:
        return None, f"{role} '{text}' is not in the catalog"
    fmt = match.weight_format
    if "fp8" in low and "not quantized" not in low:
        fmt = "fp8"
    return (match.model, fmt), None


def parse_row(index: int, row: dict[str, str]) -> Case | Skipped:
    label = f"{row['target'][:30]} + {row['draft'][:26]} | {row['hardware'][:24]} | b={row['batch_size'][:14]}"
    notes: list[str] = []
    measured = _number(row["speedup"])
    if measured is None:
        return Skipped(index, label, f"speedup '{row['speedup']}' is not one number (range, bound or outcome)")
    target, why = _model(row["target"], "target")
    if target is None:
        return Skipped(index, label, why)
    draft, why = _model(row["draft"], "draft")
    if draft is None:
        return Skipped(index, label, why)
    engine = _engine(row["engine"])
    if engine is None:
        return Skipped(
            index, label, f"engine '{row['engine']}' has no speed profile (research code, fork or dynamic K)"
        )
    gpu = match_gpu(row["hardware"])
    if gpu is None:
        known = ", ".join(g.id for g in list_gpus())
        return Skipped(index, label, f"hardware '{row['hardware']}' is not a catalog GPU ({known})")
    batch = _batch(row["batch_size"], notes)
    if batch is None:
        return Skipped(index, label, f"batch size '{row['batch_size'] or 'blank'}' is not stated as a number")
    hardware = row["hardware"].lower()
    tp_match = re.search(r"tp\s*=\s*(\d+)", hardware)
    count_match = re.search(r"(\d+)\s*(?:x\s|gpus)", hardware)
    tp = int(tp_match.group(1)) if tp_match else int(count_match.group(1)) if count_match else 1
    fp8_hw = "fp8" in hardware
    target_fmt = target[1] or ("fp8" if fp8_hw else None)
    draft_fmt = draft[1] or ("fp8" if fp8_hw else None)
    kv_fp8 = "fp8 kv" in hardware or "fp8-kv" in row["target"].lower()
    tau = _number(row["mean_accepted_len"]) if row["mean_accepted_len"] else None
    rho = _number(row["acceptance_rate"]) if row["acceptance_rate"] else None
    k = _k(row["k"])
    if k is None and tau is not None and rho and engine == "vllm":
        k = round((tau - 1) / rho)
        notes.append(f"K = (τ−1)/ρ = {k} (vLLM V1 ρ convention)")
    lengths = _lengths(row["task"])
    metric = "e2e" if re.search(r"\d\s*ms\b", row["notes"]) else "decode"
    if metric == "e2e" and lengths is None:
        metric = "decode"
    fields: dict = {"batch_size": batch}
    if lengths:
        fields |= {"prompt_tokens": lengths[0], "output_tokens": lengths[1]}
    alpha = None
    if tau is not None and k is not None:
        fields["mean_accepted_len"] = tau
        alpha = alpha_from_tau(tau, k)
    elif rho is not None and k is not None and engine == "vllm":
        fields["draft_acceptance_rate"] = rho
    else:  # the row gives no acceptance: the pair's prior (planner.pairs.acceptance), labelled as such
        estimate = acceptance_prior(target[0], draft[0])
        fields["alpha"] = estimate.alpha
        notes.append(f"α prior {estimate.alpha:.3f} ({estimate.source}: {estimate.relation})")
    if k is not None:
        fields["k"] = k
    else:
        notes.append("K not captured: compared at the optimal K")
    try:
        deployment = Deployment.build(
            target=target[0],
            draft=draft[0],
            gpu=gpu,
            gpu_count=max(tp, int(count_match.group(1)) if count_match else 1),
            tp=tp,
            dtype=get_weight_format(target_fmt).id if target_fmt else None,
            draft_dtype=get_weight_format(draft_fmt).id if draft_fmt else None,
            kv_dtype="fp8" if kv_fp8 else "auto",
            engine=engine,
            draft_tp=1 if engine == "trtllm" else None,
        )
        workload = SpeedWorkload.build(**fields)
    except PlannerError as exc:
        return Skipped(index, label, f"not a valid deployment: {exc}")
    if engine == "trtllm":
        notes.append("TensorRT-LLM draft-target runs the draft as its own engine at TP 1")
    return Case(
        row=index,
        label=label,
        measured=measured,
        deployment=deployment,
        workload=workload,
        k_known=k is not None,
        metric=metric,
        has_acceptance="mean_accepted_len" in fields or "draft_acceptance_rate" in fields,
        alpha=alpha,
        assumptions=notes,
    )


def load_rows(path: Path = CSV_PATH) -> list[Case | Skipped]:
    with path.open(encoding="utf-8") as handle:
        return [parse_row(i, row) for i, row in enumerate(csv.DictReader(handle), start=2)]
