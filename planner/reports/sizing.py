"""A memory plan as an exportable report (planner.reports.document): the per-GPU table, capacity, problems, fixes."""

from __future__ import annotations

import pandas as pd

from planner.deployment import Deployment
from planner.memory import MemoryPlan
from planner.reports.charts.memory import gpu_memory_bar
from planner.reports.document import Report, Section
from planner.reports.tables import gpu_memory_table


def sizing_report(dep: Deployment, plan: MemoryPlan) -> Report:
    capacity = pd.DataFrame(
        [
            {
                "KV tokens / replica": plan.kv_cache_tokens,
                "max concurrency": plan.max_concurrency,
                "max model length": plan.max_model_len,
                "KV bytes / token / GPU": plan.kv_bytes_per_token_per_gpu,
                "draft share of KV pool (%)": 100 * plan.draft_kv_share_frac,
                "KV tokens without draft": plan.kv_cache_tokens_without_draft,
                "concurrency without draft": plan.max_concurrency_without_draft,
            }
        ]
    )
    sections = [
        Section(
            title="Verdict",
            text=("Fits." if plan.fits else "Does not fit.")
            + (" Starts." if plan.starts else " Would not start: " + "; ".join(plan.start_problems) + ".")
            + (" Problems: " + "; ".join(plan.problems) if plan.problems else ""),
        ),
        Section(title="One GPU's memory", table=gpu_memory_table(plan.per_gpu), figure=gpu_memory_bar(plan)),
        Section(title="Capacity", table=capacity),
    ]
    if plan.suggestions:
        sections.append(
            Section(title="What would make it fit", table=pd.DataFrame([s.model_dump() for s in plan.suggestions]))
        )
    return Report(
        title=f"Sizing: {dep.target.id}"
        + (f" + {dep.draft.id}" if dep.draft else "")
        + f" on {dep.node_id or dep.gpu.id}",
        inputs={
            "target": dep.target.id,
            "draft": dep.draft.id if dep.draft else "none",
            "node": dep.node_id or f"{dep.gpu_count}x {dep.gpu.id}",
            "tp": dep.tp,
            "pp": dep.pp,
            "draft tp": dep.resolved_draft_tp or "-",
            "weights": dep.target_format.id,
            "kv dtype": dep.kv_dtype,
            "engine": f"{dep.engine} ({plan.engine_profile})",
        },
        sections=sections,
        assumptions=plan.assumptions,
    )
