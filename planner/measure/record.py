"""``MeasurementRecord``: everything one measured run found, written atomically to a file and the store.

A record holds the hardware and software it ran on, the models and dtypes, K, the sha256 of the
prompt file, every measurement (acceptance, speed with and without the draft, memory with the NVML
timeline), the planner's prediction for the same deployment and the errors between them.

Files go to ``measurements/<id>.json`` in the planner's home folder (``PLANNER_HOME``, default
``~/.local/share/sd-capacity-planner``; ``PLANNER_MEASUREMENTS_DIR`` overrides the folder), created
on the first write, by writing a temporary file in the same folder, ``fsync`` and ``os.replace``: a
run that crashes halfway leaves no half-written file, and a reader never sees one. The same JSON goes
to the SQLite store (:mod:`planner.validation.store`). A temporary file left by a killed writer (its
process is gone) is removed by the next save or load; a file whose store row is missing is added to
the store when records are loaded. Pure pydantic: loading records needs no torch.

Ids are unique per run: the UTC second, the pair, the backend, K and a random part, so runs that
finish in the same second never overwrite each other.

>>> make_record_id("meta-llama/Llama-3.1-8B", "Llama-3.2-1B", "transformers", "2026-01-02T03:04:05Z", k=5,
...                unique="1a2b3c4d")
'20260102T030405Z-llama-3.1-8b--llama-3.2-1b-transformers-k5-1a2b3c4d'
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from planner.errors import PlannerError
from planner.measure.acceptance_counts import AcceptanceStats, TaskVerdict
from planner.measure.nvml_sampler import NvmlResult
from planner.measure.prediction import Prediction
from planner.measure.torch_memory import TorchMemory
from planner.user_files import chmod_as_created, planner_home, shown_path
from planner.validation.store import StoreError, read_measurement_rows, save_measurement, stored_ids
from planner.validation.store import store_path as default_store_path

SCHEMA_VERSION = 1
MEASUREMENTS_ENV = "PLANNER_MEASUREMENTS_DIR"


class HardwareInfo(BaseModel):
    device: str
    gpu_name: str | None = None
    gpu_count: int = 0
    driver_version: str | None = None
    cuda_version: str | None = None
    gpu_memory_total_bytes: int | None = None
    #: The catalog GPU the device name matched (planner.catalog.name_matching.match_gpu), or the user's --gpu.
    catalog_gpu: str | None = None
    cpu: str = ""


class SoftwareInfo(BaseModel):
    python: str
    platform: str
    torch: str | None = None
    transformers: str | None = None
    vllm: str | None = None
    pynvml: str | None = None


class ModelInfo(BaseModel):
    name: str
    source: str
    path: str
    model_type: str | None = None
    parameters: int
    weights_bytes: int
    dtype: str
    config_sha256: str
    notes: list[str] = []


class SpeedMeasurement(BaseModel):
    """Over all prompts: TTFT mean, TPOT = decode time / decode tokens, tok/s = tokens / wall time."""

    prompts: int
    output_tokens: int
    decode_tokens: int
    ttft_s: float
    tpot_s: float
    tokens_per_s: float
    wall_s: float
    draft_s: float = 0.0
    verify_s: float = 0.0


class MemoryMeasurement(BaseModel):
    """Measured GPU memory; component figures are from tensors, peaks from torch and NVML."""

    peak_memory_bytes: int | None = None
    peak_memory_source: str = ""
    nvml_process_peak_bytes: int | None = None
    nvml_device_peak_bytes: int | None = None
    nvml_device_baseline_bytes: int | None = None
    torch: TorchMemory
    target_weights_bytes: int
    draft_weights_bytes: int
    target_kv_peak_bytes: int = 0
    draft_kv_peak_bytes: int = 0
    kv_cache_peak_bytes: int = 0
    activation_peak_bytes: int | None = None
    non_torch_bytes: int | None = None
    notes: dict[str, str] = {}


class DidNotFit(BaseModel):
    """A CUDA out-of-memory: a data point (the pair does not fit this way), with the memory at the time."""

    stage: str
    message: str
    torch_allocated_bytes: int | None = None
    torch_reserved_bytes: int | None = None
    nvml_device_used_bytes: int | None = None
    nvml_process_used_bytes: int | None = None


class PromptSummary(BaseModel):
    index: int
    task: str
    prompt_tokens: int
    accepted_per_step: list[int]
    outputs_match: bool | None = None


class MeasurementRecord(BaseModel):
    schema_version: int = SCHEMA_VERSION
    id: str
    created_at: str
    status: Literal["ok", "did_not_fit"]
    backend: Literal["transformers", "vllm"]
    mode: str
    temperature: float
    seed: int
    k: int
    max_new_tokens: int
    random_weights: bool
    acceptance_meaningful: bool
    hardware: HardwareInfo
    software: SoftwareInfo
    target: ModelInfo | None
    draft: ModelInfo | None
    dtype: str
    draft_dtype: str
    tokenizer: str = ""
    tensor_parallel_size: int = 1
    prompts_files: list[str]
    prompts_sha256: str
    prompts_count: int
    tasks: dict[str, int]
    # ----- the headline figures (the CLI's --json keys) -----
    alpha: float | None = None
    mean_accepted_len: float | None = None
    acceptance_by_position: list[float] = []
    tokens_per_s: float | None = None
    baseline_tokens_per_s: float | None = None
    #: Decode speedup as the speed model defines it: baseline TPOT / speculative TPOT.
    speedup: float | None = None
    peak_memory_bytes: int | None = None
    nvml_available: bool = False
    predicted: Prediction
    errors_frac: dict[str, float | None] = {}
    verdict_by_task: dict[str, TaskVerdict] = {}
    # ----- details -----
    acceptance: AcceptanceStats | None = None
    acceptance_by_task: dict[str, AcceptanceStats] = {}
    speculative: SpeedMeasurement | None = None
    baseline: SpeedMeasurement | None = None
    outputs_match_baseline: bool | None = None
    memory: MemoryMeasurement | None = None
    nvml: NvmlResult
    did_not_fit: DidNotFit | None = None
    per_prompt: list[PromptSummary] = []
    notes: list[str] = []
    problems: list[str] = []

    @property
    def pair(self) -> str:
        target = self.target.name if self.target else "?"
        draft = self.draft.name if self.draft else "?"
        return f"{target} + {draft}"

    @property
    def gpu_label(self) -> str:
        return self.hardware.catalog_gpu or self.hardware.gpu_name or self.hardware.device


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower().rsplit("/", 1)[-1]).strip("-.") or "model"


def make_record_id(
    target: str, draft: str, backend: str, created_at: str, *, k: int | None = None, unique: str | None = None
) -> str:
    """``<UTC timestamp>-<target>--<draft>-<backend>[-k<K>]-<random>``: sortable, unique, safe as a file name."""
    stamp = re.sub(r"[^0-9TZ]", "", created_at)
    draft_len = f"-k{k}" if k is not None else ""
    part = re.sub(r"[^0-9a-z]", "", (unique or secrets.token_hex(4)).lower())[:16]
    return f"{stamp}-{_slug(target)[:40]}--{_slug(draft)[:40]}-{_slug(backend)[:20]}{draft_len}-{part}"


def measurements_dir() -> Path:
    return Path(os.environ.get(MEASUREMENTS_ENV) or planner_home() / "measurements")


_TMP = re.compile(r"^\..+\.(\d{1,10})\.[^.]*\.tmp$")
#: The largest process id any Linux kernel hands out (``/proc/sys/kernel/pid_max`` is at most 2^22).
MAX_PID = 2**22


def _alive(pid: int) -> bool:
    """True unless ``pid`` is a process id that surely ended (a number no kernel issues is never ours: kept)."""
    if pid == os.getpid() or not 0 < pid <= MAX_PID:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):
        return True  # exists, owned by someone else, or not a process id at all
    return True


def clean_orphans(folder: Path) -> list[str]:
    """Remove temporary files whose writer process is gone; returns their names."""
    removed = []
    try:
        entries = list(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return removed
    for entry in entries:
        match = _TMP.match(entry.name)
        if match and not _alive(int(match.group(1))):  # at most 10 digits: int() is cheap and os.kill never overflows
            try:
                entry.unlink()
                removed.append(entry.name)
            except OSError:
                pass
    return removed


def _chunks(payload: Any) -> Iterator[str]:
    """The JSON text in pieces (streamed to the temporary file)."""
    return json.JSONEncoder(indent=1, ensure_ascii=False).iterencode(payload)


def write_atomic(path: Path, payload: Any) -> Path:
    """Write JSON to ``path`` via a temp file in the same folder, fsync and ``os.replace``; all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed below, on every path)
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.stem}.{os.getpid()}.", suffix=".tmp", delete=False
    )
    tmp = Path(handle.name)
    try:
        with handle:
            chmod_as_created(handle.fileno())  # tempfile makes 0600; a record is an ordinary file
            for chunk in _chunks(payload):
                handle.write(chunk)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return path
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    return path


class RecordSaved(NamedTuple):
    """Where a saved record can be read back: its JSON file and/or the store, and a sentence saying so."""

    path: Path | None
    in_store: bool
    message: str


def save_record_where(
    record: MeasurementRecord, folder: str | Path | None = None, *, store_path: str | Path | None = None
) -> RecordSaved:
    """The record to ``<folder>/<id>.json`` (atomically) and to the SQLite store.

    A record that cannot be written to one place (a read-only or full folder, a locked or damaged store)
    is still kept in the other, and the message says where; only when both fail is it an error
    (:class:`~planner.errors.PlannerError` naming both reasons), so a finished measurement is never lost silently.
    """
    payload = record.model_dump(mode="json")
    directory = Path(folder or measurements_dir())
    problems: list[str] = []
    path: Path | None = None
    try:
        clean_orphans(directory)
        path = write_atomic(directory / f"{record.id}.json", payload)
    except OSError as exc:
        problems.append(f"could not write the file in {shown_path(directory)} ({exc.strerror or exc})")
    in_store = False
    try:
        save_measurement(
            record.id,
            record.created_at,
            record.gpu_label,
            record.target.name if record.target else "",
            record.draft.name if record.draft else "",
            json.dumps(payload, ensure_ascii=False),
            path=store_path,
        )
        in_store = True
    except (StoreError, OSError, sqlite3.Error) as exc:
        problems.append(f"could not add it to the store ({str(exc)[:160]})")
    where = [f"saved to {shown_path(path)}"] if path else []
    if in_store:
        where.append(f"saved in the store {shown_path(Path(store_path or default_store_path()))}")
    if not where:
        raise PlannerError(f"Measurement {record.id} was not saved: " + "; ".join(problems) + ".")
    return RecordSaved(path, in_store, "; ".join(where + problems))


def save_record(
    record: MeasurementRecord, folder: str | Path | None = None, *, store_path: str | Path | None = None
) -> Path:
    """:func:`save_record_where`, returning the JSON file (the store file when only the store took it)."""
    saved = save_record_where(record, folder, store_path=store_path)
    return saved.path or Path(store_path or default_store_path())


def load_records(
    folder: str | Path | None = None, *, store_path: str | Path | None = None, use_store: bool = True
) -> tuple[list[MeasurementRecord], list[str]]:
    """Records from the folder's JSON files and the store (one per id), newest first, plus any problems."""
    found: dict[str, MeasurementRecord] = {}
    problems: list[str] = []
    directory = Path(folder or measurements_dir())
    clean_orphans(directory)
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            record = MeasurementRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError, OSError) as exc:
            problems.append(f"{path.name}: not a measurement record ({str(exc).splitlines()[0][:160]})")
            continue
        found[record.id] = record
    if use_store:
        try:
            rows, row_problems = read_measurement_rows(path=store_path)
            problems.extend(row_problems)
            _add_missing_rows(found, rows, store_path)
        except StoreError as exc:
            problems.append(str(exc))
            rows = []
        for row in rows:
            try:
                record = MeasurementRecord.model_validate(row)
            except ValidationError as exc:
                problems.append(f"store row {str(row.get('id', '?'))[:80]}: {str(exc).splitlines()[0][:160]}")
                continue
            found.setdefault(record.id, record)
    return sorted(found.values(), key=lambda r: (r.created_at, r.id), reverse=True), problems


def _add_missing_rows(
    found: dict[str, MeasurementRecord], rows: list[dict[str, Any]], store_path: str | Path | None
) -> None:
    """Records whose file exists but whose store row does not (a writer killed between the two) join the store."""
    if not found:
        return
    have = {row.get("id") for row in rows} | stored_ids(path=store_path)
    for record in found.values():
        if record.id not in have:
            save_measurement(
                record.id,
                record.created_at,
                record.gpu_label,
                record.target.name if record.target else "",
                record.draft.name if record.draft else "",
                json.dumps(record.model_dump(mode="json"), ensure_ascii=False),
                path=store_path,
            )
