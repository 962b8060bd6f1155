"""Real start-up log cases (data/calibration/*.csv) translated into planner deployments.

Each row's text (model name, GPU name, flags) is parsed generically into a Deployment; a row the
planner cannot express comes back with the reason instead of being dropped.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from pydantic import BaseModel

from planner.catalog.hardware import device_total_bytes, nearest_gpu_by_total
from planner.catalog.lookup import get_model, list_gpus
from planner.catalog.name_matching import match_gpu, match_model
from planner.deployment import Deployment
from planner.engines.profiles import engine_profile
from planner.errors import PlannerError
from planner.facts import REPO_ROOT
from planner.model.dtypes import precision_id
from planner.units import GIB
from planner.validation.log_check import unversioned_release

CASE_FILES = ("vllm-kv-cases.csv", "vllm_v0190_llmd_logs.csv")


class Logged(BaseModel):
    kv_cache_bytes: int | None = None
    kv_cache_tokens: int | None = None
    weights_bytes: int | None = None
    torch_peak_increase_bytes: int | None = None
    non_torch_increase_bytes: int | None = None
    cudagraph_bytes: int | None = None
    max_concurrency: float | None = None


class Case(BaseModel):
    case_id: str
    source: str
    engine_version: str | None
    deployment: Deployment | None
    reason: str | None
    logged: Logged
    note: str = ""


def _first_float(text: str | None) -> float | None:
    match = re.search(r"\d+(?:\.\d+)?", text or "")
    return float(match.group()) if match else None


def _first_int(text: str | None) -> int | None:
    match = re.search(r"\d[\d,]*", text or "")
    return int(match.group().replace(",", "")) if match else None


def _gib(text: str | None) -> int | None:
    value = _first_float(text)
    return round(value * GIB) if value is not None else None


def _flag(text: str, name: str) -> int | None:
    match = re.search(rf"{name}[\s=:]+(\d+)", text or "")
    return int(match.group(1)) if match else None


def _release_by_format(row: dict, engine: str | None) -> str | None:
    """The release a log that prints none is planned at, from its format (data/calibration/log_release_by_format.json),
    else from how it says it sized its KV cache, as ``check-log`` places it
    (:func:`planner.validation.log_check.unversioned_release`)."""
    path = REPO_ROOT / "data" / "calibration" / "log_release_by_format.json"
    entries = {e["case_id"]: e["release"] for e in json.loads(path.read_text(encoding="utf-8"))["logs"]}
    found = entries.get(row.get("case_id", ""))
    if found is not None or engine is None:
        return found
    said = " ".join(str(value) for value in row.values()).lower()
    profiling = True if "cuda graph memory profiling is enabled" in said else None
    return unversioned_release(engine, "memory after warmup:" in said, profiling)[0]


def _engine(row: dict) -> tuple[str | None, str | None]:
    engine, version = row.get("engine", ""), (row.get("engine_version") or "").strip() or None
    if engine.startswith("SGLang"):
        return "sglang", version
    if engine.startswith("vLLM"):
        if "2023" in engine:
            return "vllm-2023", version
        if "V0" in engine:
            return "vllm-v0", version
        return "vllm", version
    return None, version


def _weight_format(row: dict, fallback: str | None) -> str | None:
    """The format the row's quantization (first word, e.g. ``awq (4-bit)``) or dtype column names."""
    for column in ("quantization", "dtype"):
        words = (row.get(column) or "").split()
        fmt = precision_id(words[0]) if words else None
        if fmt is not None:
            return fmt
        if column == "quantization" and words and words[0].lower() != "none":
            return fallback  # compressed-tensors: the format the checkpoint name implies
    return fallback


def _head_method(row: dict) -> str | None:
    """The speculative head method a row names (``eagle3``, ``eagle``, ``mtp``), or None."""
    text = f"{row.get('speculative_config') or ''} {row.get('model', '')}".lower()
    for word, method in (("eagle3", "eagle3"), ("eagle-3", "eagle3"), ("eagle", "eagle"), ("mtp", "mtp")):
        if word in text:
            return method
    return None


#: The head a row names: the speculative config's ``model='…'``, else ``head: <id>`` in its notes (a log that
#: elides the model, ``SpeculativeConfig(method='eagle3', ..., num_spec_tokens=3)``, is completed from its source).
_HEAD_ID = re.compile(r"(?:\bmodel=['\"]?|\bhead:\s*)([A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+)")
_SPEC_TOKENS = re.compile(r"num_spec(?:ulative)?_tokens['\"]?\s*[=:]\s*(\d+)")


def _speculator_fields(row: dict, method: str, other: str) -> tuple[dict, str | None]:
    """The Deployment fields of the speculator a row runs on a shared block pool (vLLM V1 and V0), or a reason.

    An EAGLE / EAGLE-3 head must be a catalog head (data/speculators.json): its layers join the target's pool
    and its weights count against the budget, so the plan needs its geometry. MTP runs the target's own layers.
    """
    spec_text = row.get("speculative_config") or ""
    fields: dict = {}
    tokens = _SPEC_TOKENS.search(spec_text) or _SPEC_TOKENS.search(f"{row.get('model', '')} {other}")
    if tokens:
        fields["num_speculative_tokens"] = int(tokens.group(1))
    if method == "mtp":
        return {**fields, "method": "mtp"}, None
    named = _HEAD_ID.search(spec_text) or _HEAD_ID.search(other)
    if named is None:
        return fields, f"the log names no {method} head (its speculative config's model)"
    head_id = named.group(1).rstrip(".,;")
    try:
        head = get_model(head_id)
    except PlannerError:
        return fields, f"{method} head {head_id!r} is not in the catalog (data/speculators.json)"
    if head.speculator is None or head.speculator.kind != method:
        return fields, f"{head_id!r} is not an {method} head in the catalog"
    return {**fields, "draft": head}, None


def case_from_row(row: dict, source_file: str) -> Case:
    case_id = row.get("case_id", "?")
    logged = Logged(
        kv_cache_bytes=_gib(row.get("kv_cache_gib") or row.get("available_kv_gib")),
        kv_cache_tokens=_first_int(row.get("kv_cache_tokens")),
        weights_bytes=_gib(row.get("weights_gib")),
        torch_peak_increase_bytes=_gib(row.get("activation_peak_gib")),
        non_torch_increase_bytes=_gib(row.get("non_torch_gib")),
        cudagraph_bytes=_gib(row.get("cudagraph_gib") or row.get("cudagraph_estimate_gib")),
        max_concurrency=_first_float(row.get("max_concurrency_x")),
    )
    other = " ".join(row.get(k) or "" for k in ("other_logged", "notes"))
    if logged.kv_cache_bytes is None:
        sizes = re.findall(r"[KV] size: (\d+(?:\.\d+)?) GB", other)
        if len(sizes) == 2:
            logged.kv_cache_bytes = round(sum(float(s) for s in sizes) * GIB)
    refused = re.search(r"maximum number of tokens that can be stored in KV cache \((\d+)\)", other)
    if logged.kv_cache_tokens is None and refused:  # vLLM's refusal states the engine's tokens (every rank's minimum)
        logged.kv_cache_tokens = int(refused.group(1))
    if logged.kv_cache_tokens is None and row.get("num_gpu_blocks"):
        logged.kv_cache_tokens = _first_int(row["num_gpu_blocks"]) * int(_first_int(row.get("block_size")) or 16)
    engine, version = _engine(row)
    base = {
        "case_id": case_id,
        "source": row.get("source_url") or source_file,
        "engine_version": version,
        "logged": logged,
    }

    def skip(reason: str) -> Case:
        return Case(deployment=None, reason=reason, **base)

    if engine is None:
        return skip(f"engine {row.get('engine')!r} is not profiled")
    if engine == "vllm-2023":
        return skip("2023 vLLM builds (before the profiling fix of PR #2031) are outside the V0 profile")
    head_method = _head_method(row)
    separate_pool = False
    speculator: dict = {}
    if head_method is not None:
        profile = engine_profile(engine, version if version and re.match(r"\d", version) else None)
        separate_pool = profile.draft_kv == "separate_pool_with_headroom" and hasattr(profile, "default_fraction")
        if not separate_pool:  # the head's layers share the target's block pool: the plan loads the head itself
            speculator, reason = _speculator_fields(row, head_method, other)
            if reason is not None:
                return skip(reason)
    names = [row.get("model", ""), row.get("model_config_ref", "")]
    if any(tag in n.lower() for n in names for tag in ("vision", "-vl-", "vl-")):
        return skip("multimodal encoder profiling is not modelled")
    candidates = [n.split(" (")[0].strip("'\" ") for n in names if n]
    match = next((m for m in (match_model(n) for n in candidates if n and not n[0].isdigit()) if m), None)
    if match is None:
        return skip(f"model {row.get('model')!r} is not identified in the catalog")
    gpu_text = row.get("gpu_type") or row.get("gpu") or ""
    gpu = match_gpu(gpu_text) or next((g for g in list_gpus() if g.id == gpu_text), None)
    total_gib = _first_float(row.get("gpu_total_mem_logged_gib") or row.get("total_memory_gib"))
    note = ""
    loaded = re.search(r"avail mem=(\d+(?:\.\d+)?) GB, mem usage=(\d+(?:\.\d+)?) GB", other)
    if gpu is None and total_gib is None and loaded:  # SGLang: free after loading + weights = free before loading
        free_before = (float(loaded.group(1)) + float(loaded.group(2))) * GIB
        gpu = nearest_gpu_by_total(round(free_before))
        note = f"stand-in GPU {gpu.id}: the log's free memory before loading is {free_before / GIB:.2f} GiB"
    if gpu is None:
        if total_gib is None:
            return skip(f"GPU {gpu_text or '(not stated)'!r} is not in the catalog and no total is logged")
        gpu = nearest_gpu_by_total(round(total_gib * GIB))
        note = f"stand-in GPU {gpu.id} with the logged {total_gib} GiB total"
    tp = _first_int(row.get("tensor_parallel_size") or row.get("tp")) or 1
    pp = _first_int(row.get("pipeline_parallel_size") or row.get("pp")) or 1
    kv_dtype = "fp8" if "fp8" in (row.get("kv_cache_dtype") or "") else "auto"
    fields = dict(
        target=match.model,
        gpu=gpu,
        gpu_count=max(tp * pp, _first_int(row.get("num_gpus")) or 1),
        gpu_memory_bytes=round(total_gib * GIB) if total_gib else None,
        tp=tp,
        pp=pp,
        dtype=_weight_format(row, match.weight_format),
        kv_dtype=kv_dtype,
        engine=engine,
        engine_version=version if version and re.match(r"\d", version) else _release_by_format(row, engine),
        memory_fraction=_first_float(row.get("gpu_memory_utilization")),
        max_model_len=_first_int(row.get("max_model_len")),
        max_num_batched_tokens=_first_int(row.get("max_num_batched_tokens"))
        or _flag(other, "max-num-batched-tokens")
        or _flag(other, "max_num_batched_tokens"),
        max_num_seqs=_first_int(row.get("max_num_seqs")) or _flag(other, "max-num-seqs"),
        enforce_eager=(row.get("enforce_eager") or "").strip().lower() == "true",
        **speculator,
    )
    try:
        dep = Deployment.build(**fields)
        if separate_pool and dep.memory_fraction is None:  # the head changes the default fraction, not the pool
            total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
            fraction = engine_profile(engine).default_fraction(dep, total, head_method)
            dep = dep.replace(memory_fraction=fraction)
            note = (note + "; " if note else "") + f"target pool with an {head_method} head: fraction {fraction:.3f}"
    except PlannerError as exc:
        return skip(f"cannot build the deployment: {exc}")
    return Case(deployment=dep, reason=None, note=note, **base)


def load_cases(folder: Path | None = None) -> list[Case]:
    folder = folder or REPO_ROOT / "data" / "calibration"
    cases, seen_sources = [], set()
    for name in CASE_FILES:
        path = folder / name
        if not path.exists():
            continue
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                source = (row.get("source_url") or "").split(" ")[0]
                if source.endswith(".log") and source in seen_sources:
                    continue  # the same log read twice (reference csv and our own reading)
                seen_sources.add(source)
                cases.append(case_from_row(row, name))
    return cases
