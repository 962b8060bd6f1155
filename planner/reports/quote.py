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
                    "mean batch / replica": option.batch_size,
                    "TPOT at percentile (ms)": option.tpot_s * 1e3,
                    "TTFT at percentile (ms)": option.ttft_s * 1e3,
                    "req/s / replica": option.requests_per_s_per_replica,
                    "replicas": option.replicas,
                    "nodes": option.nodes,
                    "GPUs": option.gpus,
                    "$/GPU-hour": q.usd_per_gpu_hour,
                    "$/hour": option.usd_per_hour,
                    "$/month": option.usd_per_month,
                    "$/1M output tokens": option.usd_per_million_output_tokens,
                    "meets objectives": option.meets_slo,
                    "chosen": option.speculation == q.speculation_chosen,
                    "binding constraint": option.limited_by,
                    "replica limited by": option.replica_limited_by,
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
            "TTFT objective (ms)": traffic.ttft_slo_s * 1e3 if traffic.ttft_slo_s else "none",
            "TPOT objective (ms)": traffic.tpot_slo_s * 1e3 if traffic.tpot_slo_s else "none",
            "objective percentile": traffic.percentile,
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
            "replicas: the fewest at which a simulated replica (continuous batching, chunked prefill, the memory "
            "plan's KV cache, the engine's request caps) meets the objectives at its share of the traffic",
            *(quotes[0].notes if quotes else []),
            "memory: engine budget model calibrated on real start-up logs (make bench-accuracy); speed: roofline model "
            "calibrated on published measurements (make bench-speed-accuracy)",
        ],
    )
