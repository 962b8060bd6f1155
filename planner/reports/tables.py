"""Tables (pandas) for the app, the reports and the CLI: catalog rows, memory components, speed steps,
measurement verdicts and engine-log facts. No formulas: each is a view of a core result.

Column names carry their units; GB means 10^9 bytes and GiB 2^30 bytes, as the header says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import pandas as pd

from planner.catalog.hardware import device_total_bytes
from planner.catalog.lookup import list_gpus, list_nodes
from planner.catalog.model_facts import ModelFacts
from planner.measure.record import MeasurementRecord
from planner.memory import COMPONENT_LABELS, MemoryPlan
from planner.reports.screen import human_label
from planner.speed.estimate import SpeedEstimate
from planner.units import GB, GIB, KIB, bytes_to_gb
from planner.validation.engine_log import EngineLogFacts


def models_table(facts: Iterable[ModelFacts]) -> pd.DataFrame:
    rows = []
    for f in facts:
        arch = f.architecture
        rows.append(
            {
                "model": f.model,
                "size": f.size_label,
                "type": arch.model_type,
                "params (B)": f.params.total_params / 1e9,
                "active params (B)": f.params.active_params / 1e9,
                "layers": arch.num_layers,
                "hidden": arch.hidden_size,
                "heads q/kv": f"{arch.num_attention_heads}/{arch.num_kv_heads}",
                "head_dim": arch.head_dim,
                "attention": "MLA" if arch.mla else ("sliding+full" if arch.num_sliding_layers else "full"),
                "vocab": arch.vocab_size,
                "tokenizer": f.tokenizer or "unknown",
                "KV/token bf16 (KiB)": f.kv_bytes_per_token_by_dtype["bf16"] / KIB,
                "KV/token fp8 (KiB)": f.kv_bytes_per_token_by_dtype["fp8"] / KIB,
                **{f"weights {fmt} (GB)": n / GB for fmt, n in f.weight_bytes_by_format.items()},
                "count method": f.params.method,
            }
        )
    return pd.DataFrame(rows)


def gpus_table() -> pd.DataFrame:
    rows = []
    for gpu in list_gpus():
        total = device_total_bytes(gpu)
        rows.append(
            {
                "gpu": gpu.id,
                "name": gpu.name,
                "marketed memory (GB)": gpu.marketed_memory_gb,
                "reported memory (GiB)": total.bytes / GIB,
                "reported is": "logged" if not total.estimated else "estimated",
                "bandwidth (GB/s)": gpu.memory_bandwidth_gb_s,
                "bf16 dense (TFLOPS)": gpu.bf16_dense_tflops,
                "fp16 dense (TFLOPS)": gpu.fp16_dense_tflops,
                "fp8 dense (TFLOPS)": gpu.fp8_dense_tflops,
                "fp4 dense (TFLOPS)": gpu.fp4_dense_tflops,
                "scale-up link": gpu.scale_up_link,
                "scale-up (GB/s)": gpu.scale_up_bandwidth_gb_s,
            }
        )
    return pd.DataFrame(rows)


def nodes_table() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "node": n.id,
                "name": n.name,
                "gpu": n.gpu,
                "gpus": n.gpu_count,
                "fabric": n.fabric,
                "examples": ", ".join(n.examples),
            }
            for n in list_nodes()
        ]
    )


def gpu_memory_table(gpu) -> pd.DataFrame:
    """One GPU's memory plan as rows of (component, GiB, GB): the total, the engine's memory limit, then the parts."""
    rows = [("total reported by the device", gpu.total_bytes), ("engine memory limit", gpu.memory_limit_bytes)]
    if gpu.kv_fraction_base_bytes is not None:
        rows.append(("free memory the KV fraction is taken of", gpu.kv_fraction_base_bytes))
    rows += [(label, getattr(gpu, field)) for field, label in COMPONENT_LABELS.items()]
    return pd.DataFrame([{"component": name, "GiB": value / GIB, "GB": value / GB} for name, value in rows])


def suggestions_table(plan: MemoryPlan) -> pd.DataFrame:
    """The ranked fixes of a plan that does not fit (or could fit more), one row each."""
    return pd.DataFrame([s.model_dump() for s in plan.suggestions])


def step_times_table(est: SpeedEstimate) -> pd.DataFrame:
    """The forward passes behind a speed estimate: time (ms), what bounds it, bytes read (GB = 10^9 bytes)."""
    steps = est.steps
    passes = (
        ("target decode (1 token)", steps.target_decode),
        (f"target verify ({est.verify_tokens} tokens)", steps.target_verify),
        ("draft decode (1 token)", steps.draft_decode),
        ("draft first pass", steps.draft_first_pass),
    )
    passes = tuple((name, f) for name, f in passes if f is not None)  # n-gram lookup has no draft pass
    return pd.DataFrame(
        [
            {
                "forward pass": name,
                "ms": f.total_s * 1e3,
                "bound": f.bound,
                "weights read (GB)": bytes_to_gb(f.weight_read_bytes),
                "KV read (GB)": bytes_to_gb(f.kv_read_bytes),
            }
            for name, f in passes
        ]
    )


def speed_assumptions_table(est: SpeedEstimate) -> pd.DataFrame:
    """The speed profile's parameters behind an estimate, each with its source or fit."""
    return pd.DataFrame([{"parameter": n, "value": str(v), "source or fit": s} for n, v, s in est.assumptions])


def task_verdicts_table(record: MeasurementRecord) -> pd.DataFrame:
    """A measurement's acceptance verdict per task: prompts, steps, α, τ and the reason."""
    return pd.DataFrame(
        [
            {
                "task": v.task,
                "prompts": v.prompts,
                "steps": v.steps,
                "alpha": v.alpha,
                "tau": v.mean_accepted_len,
                "verdict": v.verdict,
                "reason": v.reason,
            }
            for v in record.verdict_by_task.values()
        ],
        columns=["task", "prompts", "steps", "alpha", "tau", "verdict", "reason"],
    )


def log_facts_table(facts: EngineLogFacts) -> pd.DataFrame:
    """Every fact found in an engine start-up log, with the line it came from."""
    return pd.DataFrame(
        [{"fact": name, "value": getattr(facts, name), "line": facts.evidence[name]} for name in facts.found],
        columns=["fact", "value", "line"],
    )


# ---------------------------------------------------------------------------------------------------------------------
# How the app shows these tables: one label (with its unit) and one number format per column, for every page.


class Column(NamedTuple):
    """How a table column is shown: its header (with the unit) and a printf format for numbers (None: as is)."""

    label: str
    format: str | None = None


#: Every column the pages show, by the name the table builders give it -> its header and number format.
COLUMNS: dict[str, Column] = {
    # Catalog: models
    "model": Column("Model"),
    "size": Column("Size class"),
    "type": Column("Architecture"),
    "params (B)": Column("Parameters (B)", "%.3f"),
    "active params (B)": Column("Active parameters (B)", "%.3f"),
    "layers": Column("Layers"),
    "hidden": Column("Hidden size"),
    "heads q/kv": Column("Heads (query / KV)"),
    "head_dim": Column("Head size"),
    "attention": Column("Attention"),
    "vocab": Column("Vocabulary (tokens)"),
    "tokenizer": Column("Tokenizer"),
    "KV/token bf16 (KiB)": Column("KV cache per token, bf16 (KiB)", "%.1f"),
    "KV/token fp8 (KiB)": Column("KV cache per token, fp8 (KiB)", "%.1f"),
    "count method": Column("How parameters are counted"),
    # Catalog: GPUs and node types
    "gpu": Column("GPU"),
    "name": Column("Name"),
    "marketed memory (GB)": Column("Marketed memory (GB)", "%.0f"),
    "reported memory (GiB)": Column("Memory software sees (GiB)", "%.2f"),
    "reported is": Column("That figure is"),
    "bandwidth (GB/s)": Column("Memory bandwidth (GB/s)", "%.0f"),
    "bf16 dense (TFLOPS)": Column("BF16 dense (TFLOPS)", "%.0f"),
    "fp16 dense (TFLOPS)": Column("FP16 dense (TFLOPS)", "%.0f"),
    "fp8 dense (TFLOPS)": Column("FP8 dense (TFLOPS)", "%.0f"),
    "fp4 dense (TFLOPS)": Column("FP4 dense (TFLOPS)", "%.0f"),
    "scale-up link": Column("Scale-up link"),
    "scale-up (GB/s)": Column("Scale-up bandwidth (GB/s)", "%.0f"),
    "node": Column("Node type"),
    "gpus": Column("GPUs"),
    "fabric": Column("Fabric"),
    "examples": Column("Examples"),
    # Draft Selection: the decision matrix
    "rank": Column("Rank"),
    "draft": Column("Draft"),
    "verdict": Column("Verdict"),
    "ratio (x)": Column("Target / draft size (x)", "%.1f"),
    "check tokenizer": Column("Tokenizer check"),
    "check vocab_size": Column("Vocabulary check"),
    "check lineage": Column("Lineage check"),
    "check parameter_ratio": Column("Size ratio check"),
    "check engine": Column("Engine check"),
    "fits": Column("Fits"),
    "draft weights / GPU (GiB)": Column("Draft weights / GPU (GiB)", "%.2f"),
    "draft KV share (%)": Column("Draft's share of KV memory (%)", "%.1f"),
    "lost concurrency": Column("Concurrent requests lost", "%.1f"),
    "α": Column("Acceptance α", "%.2f"),
    "α source": Column("Source of α"),
    "speedup @ batch 1": Column("Speedup at batch 1 (x)", "%.2f"),
    "optimal K": Column("Best K"),
    "break-even α": Column("Break-even α", "%.2f"),
    "speed verdict": Column("Speed verdict"),
    "why lower": Column("Why lower"),
    # Validation: measurement records, per-task verdicts, log checks
    "id": Column("Record"),
    "created_at": Column("Measured (UTC)"),
    "pair": Column("Target + draft"),
    "backend": Column("Backend"),
    "status": Column("Status"),
    "dtype": Column("Weights"),
    "K": Column("K"),
    "mode": Column("Sampling"),
    "random weights": Column("Random weights"),
    "alpha": Column("Acceptance α", "%.3f"),
    "tau": Column("Tokens per step τ", "%.2f"),
    "tok/s": Column("Output tokens/s, with draft", "%.1f"),
    "baseline tok/s": Column("Output tokens/s, target alone", "%.1f"),
    "speedup": Column("Speedup (x)", "%.2f"),
    "peak GiB": Column("Peak GPU memory (GiB)", "%.2f"),
    "peak err": Column("Peak memory error", "percent"),
    "speedup err": Column("Speedup error", "percent"),
    "task": Column("Task"),
    "prompts": Column("Prompts"),
    "steps": Column("Steps"),
    "reason": Column("Why"),
    "quantity": Column("Quantity"),
    "unit": Column("Unit"),
    "logged": Column("In the log", "%.2f"),
    "planner": Column("Planner", "%.2f"),
    "error": Column("Error", "percent"),
}
#: Where a table gives a column name another meaning: kind -> name -> how it is shown there.
KIND_COLUMNS: dict[str, dict[str, Column]] = {"matrix": {"verdict": Column("Compatibility")}}
#: Values shown in words (a table cell holding one of these keys shows the value).
VALUE_LABELS: dict[str, str] = {
    "compatible": "compatible",
    "compatible_with_warnings": "compatible, with warnings",
    "incompatible": "incompatible",
    "entered": "your value",
    "measured": "measured",
    "did_not_fit": "did not fit",
    # speculator kinds and speed verdicts, as every page and document names them
    "draft_model": "draft model",
    "eagle": "EAGLE head",
    "eagle3": "EAGLE-3 head",
    "mtp": "MTP module",
    "ngram": "n-gram lookup",
    "recommend": "recommend",
    "enable": "enable",
    "disable": "disable",
    "cannot_run": "cannot run",
}
#: Per table, the columns that decide first (shown up front); the others go under "Details".
MAIN_COLUMNS: dict[str, tuple[str, ...]] = {
    "models": (
        "model",
        "size",
        "params (B)",
        "weights bf16 (GB)",
        "KV/token bf16 (KiB)",
        "attention",
        "tokenizer",
    ),
    "gpus": ("gpu", "marketed memory (GB)", "reported memory (GiB)", "bandwidth (GB/s)", "bf16 dense (TFLOPS)"),
    "nodes": ("node", "name", "gpu", "gpus", "fabric"),
    "matrix": (
        "rank",
        "draft",
        "verdict",
        "speedup @ batch *",
        "fits",
        "draft weights / GPU (GiB)",
        "draft KV share (%)",
        "lost concurrency",
        "α source",
    ),
    "records": ("created_at", "pair", "gpu", "status", "alpha", "speedup", "peak GiB", "peak err", "speedup err"),
}


def column(name: str, kind: str | None = None) -> Column:
    """The header and format of column ``name``; a name made of a pattern (weights per format, speedup at a batch)
    reads from the pattern, an unknown snake_case name in words (:func:`planner.reports.screen.human_label`)."""
    if name in KIND_COLUMNS.get(kind or "", {}):
        return KIND_COLUMNS[kind or ""][name]
    if name in COLUMNS:
        return COLUMNS[name]
    if name.startswith("weights ") and name.endswith(" (GB)"):
        return Column(f"Weights, {name[len('weights ') : -len(' (GB)')]} (GB)", "%.2f")
    if name.startswith("speedup @ batch "):
        return Column(f"Speedup at batch {name[len('speedup @ batch ') :]} (x)", "%.2f")
    return Column(human_label(name))


def _main_index(name: str, kind: str, names: list[str]) -> int | None:
    """Where column ``name`` comes among ``kind``'s main columns (None: a detail); a pattern ending in "*" takes
    the last of ``names`` it matches (the speedup at the chosen batch, not at batch 1)."""
    for index, pattern in enumerate(MAIN_COLUMNS.get(kind, ())):
        if name == pattern:
            return index
        if pattern.endswith("*") and name == next((n for n in reversed(names) if n.startswith(pattern[:-1])), None):
            return index
    return None


class ScreenTable(NamedTuple):
    """A table as a page shows it: the deciding columns, the rest (for a "Details" expander), number formats."""

    main: pd.DataFrame
    details: pd.DataFrame | None
    formats: dict[str, str]


def screen_table(table: pd.DataFrame, kind: str | None = None) -> ScreenTable:
    """``table`` with human headers (units included), values in words, split into main columns and details.

    >>> view = screen_table(pd.DataFrame([{"model": "m", "params (B)": 8.03, "layers": 32}]), "models")
    >>> list(view.main.columns), list(view.details.columns), view.formats["Parameters (B)"]
    (['Model', 'Parameters (B)'], ['Model', 'Layers'], '%.3f')
    """
    shown = table.copy()
    for name in shown.columns:
        if shown[name].dtype == object or pd.api.types.is_string_dtype(shown[name]):
            shown[name] = shown[name].map(lambda v: VALUE_LABELS.get(v, v) if isinstance(v, str) else v)
    specs = {name: column(name, kind) for name in shown.columns}
    formats = {spec.label: spec.format for spec in specs.values() if spec.format}
    shown = shown.rename(columns={name: spec.label for name, spec in specs.items()})
    if kind is None or kind not in MAIN_COLUMNS:
        return ScreenTable(shown, None, formats)
    names = list(table.columns)
    ranked = sorted((i, n) for n in names if (i := _main_index(n, kind, names)) is not None)
    main = [specs[n].label for _, n in ranked]
    rest = [specs[n].label for n in names if _main_index(n, kind, names) is None]
    if not rest:
        return ScreenTable(shown[main], None, formats)
    return ScreenTable(shown[main], shown[[main[0], *rest]], formats)


def log_facts_view(facts: EngineLogFacts) -> pd.DataFrame:
    """The facts of a start-up log in words: byte quantities in GiB (never raw byte counts), with the log line."""
    rows = []
    for name in facts.found:
        value = getattr(facts, name)
        if name.endswith("_bytes") and isinstance(value, int | float):
            label, shown = human_label(name[: -len("_bytes")]) + " (GiB)", f"{value / GIB:,.2f}"
        elif isinstance(value, float):
            label, shown = human_label(name), f"{value:,.3g}"
        elif isinstance(value, int):
            label, shown = human_label(name), f"{value:,}"
        else:
            label, shown = human_label(name), str(value)
        rows.append({"Fact": label, "Value": shown, "Log line": facts.evidence[name]})
    return pd.DataFrame(rows, columns=["Fact", "Value", "Log line"])
