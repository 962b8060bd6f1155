"""A memory plan as a document (planner.reports.document): the verdict, one GPU's memory, capacity, fixes."""

from __future__ import annotations

import pandas as pd

from planner.deployment import Deployment
from planner.memory import MemoryPlan
from planner.reports.accuracy import accuracy_figures, for_customers, model_sources
from planner.reports.charts.memory import gpu_memory_bar, memory_shortfall_bar
from planner.reports.document import Report, Section, Summary
from planner.reports.launch_appendix import launch_sections
from planner.reports.screen import memory_components_view, suggestions_view, whole_requests
from planner.reports.table_format import Table, format_cell
from planner.units import fmt_tokens

MEMORY_KINDS = {"GiB (2^30 B)": "gib", "GB (10^9 B)": "gb"}


def _verdict(dep: Deployment, plan: MemoryPlan) -> str:
    pair = dep.target.short_name + (f" with draft {dep.draft.short_name}" if dep.draft else "")
    where = f"{dep.node_id or dep.gpu.id} (TP {dep.tp}, PP {dep.pp}) with {dep.engine}"
    if plan.fits and plan.starts:
        text = (
            f"Fits: {pair} on {where} leaves {fmt_tokens(plan.kv_cache_tokens)} of KV cache per replica, "
            f"{whole_requests(plan.max_concurrency):,} concurrent requests at {plan.max_model_len:,} tokens each."
        )
        if dep.draft is not None and plan.max_concurrency_without_draft is not None:
            lost = whole_requests(plan.max_concurrency_without_draft) - whole_requests(plan.max_concurrency)
            text += f" The draft costs {lost:,} concurrent requests ({plan.draft_kv_share_frac:.1%} of the KV pool)."
    elif plan.fits:
        text = f"Fits but would not start: {pair} on {where}: " + "; ".join(plan.start_problems) + "."
    else:
        text = f"Does not fit: {pair} on {where}: " + "; ".join(list(dict.fromkeys(plan.problems))[:2]) + "."
        if plan.suggestions:
            text += f" The best change that fits and starts: {plan.suggestions[0].change}."
        else:
            text += " No change searched (more GPUs, pipeline stages across nodes, other GPU types, lower precision, "
            text += "fp8 KV cache, no draft) makes it fit."
    return (
        f"{text} Main assumptions: {dep.target_format.id} weights, KV cache {dep.kv_dtype}, the engine's "
        f"{plan.engine_profile} memory budget, max model length {plan.max_model_len:,} tokens."
    )


def sizing_report(
    dep: Deployment, plan: MemoryPlan, *, customer: str = "", prepared_by: str = "", scenario_link: str = ""
) -> Report:
    without_draft = plan.max_concurrency_without_draft
    figures = [
        ("KV-cache tokens per replica", plan.kv_cache_tokens, "tokens"),
        ("Concurrent requests at max model length", whole_requests(plan.max_concurrency), "int"),
        ("Max model length (tokens)", plan.max_model_len, "int"),
        ("KV bytes per token per GPU", plan.kv_bytes_per_token_per_gpu, "int"),
        ("Draft's share of the KV pool", plan.draft_kv_share_frac, "pct"),
        ("KV-cache tokens without the draft", plan.kv_cache_tokens_without_draft, "tokens"),
        (
            "Concurrent requests without the draft",
            None if without_draft is None else whole_requests(without_draft),
            "int",
        ),
    ]
    if not plan.fits:  # a plan that does not fit has no capacity to report: no share of zero tokens
        figures = [("Max model length (tokens)", plan.max_model_len, "int")]
    # one figure per row, each in its own unit: printed for people in every format
    capacity = Table(pd.DataFrame([{"Figure": f, "Value": format_cell(v, k)} for f, v, k in figures]))
    summary_table = Table(
        pd.DataFrame(
            [
                {
                    "Fits": "yes" if plan.fits else "no",
                    "Starts": "yes" if plan.starts else "no",
                    "KV cache / replica": plan.kv_cache_tokens,
                    "Concurrent requests": whole_requests(plan.max_concurrency),
                    "Max model length": plan.max_model_len,
                }
            ]
        ),
        {"KV cache / replica": "tokens", "Concurrent requests": "int", "Max model length": "int"},
    )
    shortfall = None if plan.fits else memory_shortfall_bar(plan)
    sections = [
        Section(
            title="One GPU's memory",
            table=Table(memory_components_view(plan.per_gpu), MEMORY_KINDS),
            figure=shortfall if shortfall is not None else gpu_memory_bar(plan),
            notes=["GiB = 2^30 bytes, GB = 10^9 bytes."],
        ),
        Section(title="Capacity", table=capacity),
    ]
    if plan.problems:
        sections.append(Section(title="Problems", notes=[for_customers(p) for p in dict.fromkeys(plan.problems)]))
    if plan.suggestions:
        view = suggestions_view(plan).drop(columns=["Detail"], errors="ignore")
        sections.append(
            Section(
                title="Changes that fit and start, best first",
                table=Table(view, {"KV cache tokens": "tokens", "Concurrent requests at max length": "int"}),
            )
        )
    sections += launch_sections(dep, plan)
    pair = dep.target.id + (f" + {dep.draft.id}" if dep.draft else "")
    return Report(
        title=f"Sizing: {pair} on {dep.node_id or dep.gpu.id}",
        subtitle=f"Per-GPU memory as {dep.engine} budgets it, and the KV cache that is left",
        customer=customer,
        prepared_by=prepared_by,
        scenario_link=scenario_link,
        summary=Summary(text=_verdict(dep, plan), table=summary_table),
        inputs={
            "Target": dep.target.id,
            "Draft": dep.draft.id if dep.draft else "none",
            "Node": dep.node_id or f"{dep.gpu_count}x {dep.gpu.id}",
            "Tensor parallel": str(dep.tp),
            "Pipeline parallel": str(dep.pp),
            "Draft tensor parallel": str(dep.resolved_draft_tp or "—"),
            "Weights": dep.target_format.id,
            "KV cache dtype": dep.kv_dtype,
            "Engine": f"{dep.engine} ({plan.engine_profile})",
        },
        sections=sections,
        assumptions=[for_customers(a) for a in plan.assumptions],
        sources=model_sources()[:1],
        accuracy=[line for line in accuracy_figures() if line[0].startswith("Memory")],
    )
