"""Tables (pandas) for the app, the reports and the CLI: catalog rows, memory components, speed steps,
measurement verdicts and engine-log facts. No formulas: each is a view of a core result.

Column names carry their units; GB means 10^9 bytes and GiB 2^30 bytes, as the header says.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from planner.catalog.hardware import device_total_bytes
from planner.catalog.lookup import list_gpus, list_nodes
from planner.catalog.model_facts import ModelFacts
from planner.measure.record import MeasurementRecord
from planner.memory import COMPONENT_LABELS, MemoryPlan
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
