"""A fleet quote as a table and as an exportable report (planner.reports.document)."""

from __future__ import annotations

import pandas as pd

from planner.decisions.fleet import HOURS_PER_MONTH, FleetQuote, Traffic
from planner.reports.charts.fleet import cost_by_node
from planner.reports.document import Report, Section


def quotes_table(quotes: list[FleetQuote]) -> pd.DataFrame:
    rows = []
    for q in quotes:
        for option in (q.without_speculation, q.with_speculation):
            if option is None:
                continue
            rows.append(
                {
                    "node": q.node,
                    "TP": q.tp,
                    "speculation": "yes" if option.speculation else "no",
                    "K": option.k,
                    "batch / replica": option.batch_size,
                    "TPOT (ms)": option.tpot_s * 1e3,
                    "TTFT (ms)": option.ttft_s * 1e3,
                    "req/s / replica": option.requests_per_s_per_replica,
                    "replicas": option.replicas,
                    "nodes": option.nodes,
                    "GPUs": option.gpus,
                    "$/GPU-hour": q.usd_per_gpu_hour,
                    "$/hour": option.usd_per_hour,
                    "$/month": option.usd_per_month,
                    "$/1M output tokens": option.usd_per_million_output_tokens,
                    "meets TPOT objective": option.meets_slo,
                    "limited by": option.limited_by,
                }
            )
    return pd.DataFrame(rows)


def quote_report(
    target: str, draft: str | None, traffic: Traffic, quotes: list[FleetQuote], unusable: list[str]
) -> Report:
    notes = [f"{q.node}: price {q.price_source}" for q in quotes]
    return Report(
        title=f"Serving quote: {target}" + (f" with draft {draft}" if draft else ""),
        inputs={
            "target": target,
            "draft": draft or "none",
            "requests per second": traffic.requests_per_s,
            "prompt tokens": traffic.prompt_tokens,
            "output tokens": traffic.output_tokens,
            "TPOT objective (ms)": traffic.tpot_slo_s * 1e3 if traffic.tpot_slo_s else "none",
            "assumed acceptance α": traffic.alpha,
        },
        sections=[
            Section(
                title="Nodes and cost by node type",
                table=quotes_table(quotes),
                figure=cost_by_node(quotes),
                notes=notes,
            ),
            *([Section(title="Node types that cannot serve the model", notes=unusable)] if unusable else []),
        ],
        assumptions=[
            f"a month is {HOURS_PER_MONTH} hours of on-demand time; prices are dated and editable (data/prices.json)",
            "replica throughput by Little's law: batch / (TTFT + (output - 1) x TPOT), at the largest batch within the "
            "KV cache and the TPOT objective",
            *(quotes[0].notes if quotes else []),
            "memory: engine budget model calibrated on real start-up logs (make bench-accuracy); speed: roofline model "
            "calibrated on published measurements (make bench-speed-accuracy)",
        ],
    )
