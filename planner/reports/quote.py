"""A fleet quote as a document a solution architect can send (planner.reports.document).

The summary names the cheapest option that meets every objective (what to buy, its cost per month and
per million output tokens, the main assumption); the options that meet are listed cheapest first, those
that miss are shown apart with what they miss and by how much, never priced as a quote. Savings come
from :func:`planner.decisions.recommend_fleet`, which only compares options that meet the objectives.
"""

from __future__ import annotations

import pandas as pd

from planner.catalog.lookup import get_price
from planner.decisions.fleet_models import HOURS_PER_MONTH, FleetQuote
from planner.decisions.fleet_recommendation import FleetRecommendation, QuotedOption
from planner.decisions.search.space import DEFAULT_KS
from planner.decisions.speed_margins import SpeedMargin
from planner.decisions.traffic_draws import CountAcrossDraws
from planner.defaults import OBJECTIVE_PERCENTILE, SLO_PRESETS
from planner.deployment import Deployment
from planner.reports.accuracy import accuracy_figures, for_customers, model_sources
from planner.reports.charts.fleet import cost_by_node
from planner.reports.document import Report, Section, Summary
from planner.reports.launch_appendix import launch_sections
from planner.reports.table_format import Table
from planner.units import fmt_counted, fmt_ms, fmt_pct, fmt_usd, fmt_usd_per_month

OBJECTIVES_SOURCE = "https://github.com/mlcommons/inference/blob/master/loadgen/mlperf.conf"
#: Kinds of the option tables' columns (planner.reports.table_format).
OPTION_KINDS = {
    "GPUs": "int",
    "Nodes": "int",
    "Replicas": "int",
    "Replicas the nodes hold": "int",
    "K": "int",
    "Cost / month": "usd_month",
    "Cost / 1M output tokens": "usd_cents",
    "$ / GPU-hour": "usd_cents",
    "p99 TTFT": "ms",
    "p99 TPOT": "ms",
    "Mean running requests / replica": "float",
    "Requests/s / replica": "float",
    "Replica capacity (req/s, offline)": "float",
    "Worst shortfall": "pct",
    "GPU compute used": "pct",
    "HBM bandwidth used": "pct",
}
KEY_COLUMNS = ["Option", "Nodes", "GPUs", "Cost / month", "Cost / 1M output tokens", "p99 TTFT", "p99 TPOT"]
OPTION_COLUMNS = [
    *KEY_COLUMNS,
    "Replicas",
    "Replicas the nodes hold",
    "K",
    "$ / GPU-hour",
    "Mean running requests / replica",
    "Requests/s / replica",
    "Replica capacity (req/s, offline)",
    "GPU compute used",
    "HBM bandwidth used",
    "Needs its last replica for",
    "One replica limited by",
]


def _percentile_columns(frame: pd.DataFrame, percentile: float) -> pd.DataFrame:
    """Name the latency columns by the traffic's percentile (p99 unless set otherwise)."""
    name = f"p{percentile:g}"
    return frame.rename(columns={"p99 TTFT": f"{name} TTFT", "p99 TPOT": f"{name} TPOT"})


def _kinds(percentile: float) -> dict[str, str]:
    name = f"p{percentile:g}"
    return {k.replace("p99", name): v for k, v in OPTION_KINDS.items()}


def _option_row(q: QuotedOption) -> dict:
    o = q.option
    return {
        "Option": q.label,
        "Nodes": o.nodes,
        "GPUs": o.gpus,
        "Cost / month": o.usd_per_month,
        "Cost / 1M output tokens": o.usd_per_million_output_tokens,
        "p99 TTFT": o.ttft_s,
        "p99 TPOT": o.tpot_s,
        "Replicas": o.replicas,
        "Replicas the nodes hold": o.replicas_nodes_hold,
        "K": o.k,
        "$ / GPU-hour": q.usd_per_gpu_hour,
        "Mean running requests / replica": o.batch_size,
        "Requests/s / replica": o.requests_per_s_per_replica,
        "Replica capacity (req/s, offline)": o.capacity_requests_per_s,
        "GPU compute used": o.delivered_flops_frac,
        "HBM bandwidth used": o.delivered_bandwidth_frac,
        "Needs its last replica for": o.limited_by,
        "One replica limited by": o.replica_limited_by,
    }


def options_table(options: list[QuotedOption], percentile: float = OBJECTIVE_PERCENTILE) -> Table:
    """Options that meet every objective, cheapest first: decisive columns, then the details."""
    frame = pd.DataFrame([_option_row(q) for q in options], columns=OPTION_COLUMNS)
    name = f"p{percentile:g}"
    return Table(
        _percentile_columns(frame, percentile),
        _kinds(percentile),
        [c.replace("p99", name) for c in KEY_COLUMNS],
    )


def misses_table(options: list[QuotedOption], percentile: float = OBJECTIVE_PERCENTILE) -> Table:
    """Options that miss an objective, nearest miss first: what each misses and by how much (no price)."""
    rows = [
        {
            "Option": q.label,
            "Misses": "; ".join(m.describe() for m in q.option.misses),
            "Worst shortfall": max((m.shortfall_frac for m in q.option.misses), default=None),
            "p99 TTFT": q.option.ttft_s,
            "p99 TPOT": q.option.tpot_s,
            "GPUs tried": q.option.gpus,
        }
        for q in options
    ]
    frame = pd.DataFrame(rows, columns=["Option", "Misses", "Worst shortfall", "p99 TTFT", "p99 TPOT", "GPUs tried"])
    return Table(_percentile_columns(frame, percentile), {**_kinds(percentile), "GPUs tried": "int"})


DRAW_COLUMNS = [
    "Option",
    "Quoted replicas",
    "Replicas in each draw",
    "Replicas for every draw",
    "Nodes for every draw",
    "Nodes beyond the quote",
    "Cost / month for every draw",
]


def draws_table(checks: list[tuple[QuotedOption, CountAcrossDraws]]) -> Table:
    """Each option's count sized again on other draws of its traffic
    (:func:`planner.decisions.options_across_draws`)."""
    rows = [
        {
            "Option": q.label,
            "Quoted replicas": c.quoted_replicas,
            "Replicas in each draw": ", ".join(
                f"{d.replicas:,}" if d.replicas is not None else f"> {c.limit_replicas:,}" for d in c.draws
            ),
            "Replicas for every draw": c.replicas_every_draw,
            "Nodes for every draw": c.nodes_every_draw,
            "Nodes beyond the quote": c.extra_nodes,
            "Cost / month for every draw": c.usd_per_month_every_draw,
        }
        for q, c in checks
    ]
    kinds = {
        "Quoted replicas": "int",
        "Replicas for every draw": "int",
        "Nodes for every draw": "int",
        "Nodes beyond the quote": "int",
        "Cost / month for every draw": "usd_month",
    }
    return Table(pd.DataFrame(rows, columns=DRAW_COLUMNS), kinds)


def draws_section(checks: list[tuple[QuotedOption, CountAcrossDraws]]) -> Section:
    """The draws check as a section of the quote document."""
    first = checks[0][1]
    return Section(
        title="How much each count owes to one draw of the traffic",
        text=f"Each option was sized on one simulated draw of the traffic ({first.requests_per_draw:,} Poisson "
        f"requests) and again on {len(first.draws) - 1} more: a high percentile of a latency that queues moves from "
        "one draw to the next, and the fewest replicas that meet it with it. Buy the count for every draw for a "
        "fleet that meets the objectives however the requests happen to arrive.",
        table=draws_table(checks),
    )


MARGIN_COLUMNS = [
    "Option",
    "Quoted replicas",
    "Speed margin",
    "Fails first beyond it",
    "Replicas at its median error",
    "Nodes at its median error",
    "Against the planner's error",
]


def _against_error(margin: SpeedMargin) -> str:
    """Whether the margin covers the planner's measured throughput error (its median; the most it overestimated)."""
    error, covers = margin.planner_error, margin.covers()
    if error is None:
        return "no error recorded"
    if covers == "worst":
        return f"covers its worst overestimate ({error.most_over_pct:g}%)"
    if covers == "median":
        return f"covers its median error ({error.median_abs_pct:g}%), not its worst ({error.most_over_pct:g}%)"
    return f"below its median error ({error.median_abs_pct:g}%)"


def margins_table(margins: list[tuple[QuotedOption, SpeedMargin]]) -> Table:
    """Each option's speed margin (:func:`planner.decisions.options_speed_margins`)."""
    rows = [
        {
            "Option": q.label,
            "Quoted replicas": m.quoted_replicas,
            "Speed margin": m.margin_frac,
            "Fails first beyond it": m.binding or f"nothing up to {m.limit_frac:.0%}",
            "Against the planner's error": _against_error(m),
            "Replicas at its median error": m.replicas_at_median_error,
            "Nodes at its median error": m.nodes_at_median_error,
        }
        for q, m in margins
    ]
    kinds = {
        "Quoted replicas": "int",
        "Speed margin": "pct",
        "Replicas at its median error": "int",
        "Nodes at its median error": "int",
    }
    return Table(pd.DataFrame(rows, columns=MARGIN_COLUMNS), kinds)


def margins_section(margins: list[tuple[QuotedOption, SpeedMargin]]) -> Section:
    """The speed-margin check as a section of the quote document."""
    first = margins[0][1]
    errors = {m.planner_error.step_times: m.planner_error for _, m in margins if m.planner_error is not None}
    measured = "".join(
        f" {'Priced on the roofline' if step_times == 'roofline' else 'From measured kernel times'}, the planner's "
        f"output tokens per second is within {error.median_abs_pct:g}% of published runs at the median and has been "
        f"up to {error.most_over_pct:g}% above one ({error.rows} runs used in no fit)."
        for step_times, error in sorted(errors.items())
    )
    return Section(
        title="How much slower than estimated each option may be",
        text="Each option's speed margin: the quoted replicas still meet every objective and still cover the "
        "offered rate with every engine step up to this much longer than the planner estimates (found to within "
        f"{first.resolution_frac:.1%}, up to {first.limit_frac:.0%}); beyond it, the named limit fails first. A "
        "fleet whose margin is below the planner's median error is sized again at that error: the replicas and "
        "nodes that still meet everything there." + measured,
        table=margins_table(margins),
    )


def quotes_table(quotes: list[FleetQuote]) -> pd.DataFrame:
    """Every option of every quote, full precision (the CLI's and JSON's view)."""
    rows = []
    for q in quotes:
        for option in (q.without_speculation, q.with_speculation):
            if option is None:
                continue
            rows.append(
                {
                    "node": q.node,
                    "TP": option.tp,
                    "PP": option.pp,
                    "speculation": "yes" if option.speculation else "no",
                    "K": option.k,
                    "GPUs": option.gpus,
                    "$/month": option.usd_per_month,
                    "$/1M output tokens": option.usd_per_million_output_tokens,
                    "meets objectives": option.meets_slo,
                    "misses": "; ".join(m.describe() for m in option.misses),
                }
            )
    return pd.DataFrame(rows)


def _summary(
    target: str,
    draft: str | None,
    plan: FleetRecommendation,
    margins: list[tuple[QuotedOption, SpeedMargin]] | None = None,
) -> Summary:
    t = plan.traffic
    load = (
        f"{t.requests_per_s:,.4g} requests per second of {t.prompt_tokens:,} prompt + {t.output_tokens:,} output tokens"
    )
    assumption = (
        f"Main assumptions: the draft {draft} accepts α = {plan.alpha or 0:.2f} of its tokens (measure it on your "
        "traffic; "
        "a lower α needs more GPUs), prices are on-demand list prices, and each replica is simulated under "
        "Poisson arrivals."
        if draft
        else "Main assumptions: prices are on-demand list prices, and each replica is simulated under Poisson arrivals."
    )
    best = plan.recommended
    if best is not None:
        o = best.option
        how = f"with speculative decoding (draft {draft}, K = {o.k})" if o.speculation else "without speculation"
        stages = f" in {o.pp} pipeline stages" if o.pp > 1 else ""
        text = (
            f"Buy {o.nodes:,} x {best.node}: {fmt_counted(o.gpus, 'GPU')} at tensor parallel {best.tp}{stages}, {how}, "
            "for "
            f"{fmt_usd_per_month(o.usd_per_month)} ({fmt_usd(o.usd_per_million_output_tokens, 2)} per million "
            f"output tokens). This is the cheapest option that meets every objective ({t.objectives()}) for {load} "
            f"of {target}: {fmt_ms(o.ttft_s)} TTFT and {fmt_ms(o.tpot_s)} TPOT at p{t.percentile:g}."
        )
        if plan.saving is not None:
            text += f" On the same node type without it, {plan.saving.describe()}."
        elif plan.speculation_note:
            text += f" {plan.speculation_note}."
        if plan.hardware_note:
            text += f" Separately, the node type: {plan.hardware_note}."
        if plan.missing:
            text += f" {len(plan.missing)} other option(s) miss an objective and are shown apart."
        margin = next((m for q, m in margins or () if q.label == best.label), None)
        if margin is not None:  # the recommendation's speed margin, where it was found
            text += f" Speed margin: {margin.describe()}."
    else:
        near = plan.nearest_miss
        text = f"No option meets every objective ({t.objectives()}) for {load} of {target}."
        if near is not None:
            text += (
                f" The nearest miss is {near.label}: " + "; ".join(m.describe() for m in near.option.misses) + "."
                " Relax that objective, shorten the requests, or add a node type with faster GPUs."
            )
    for flag in plan.flags:
        text += f" Warning: {flag}."
    rows = [("Recommended", best)] if best else []
    plain = next((q for q in plan.meeting if not q.option.speculation and best and q.node == best.node), None)
    if best is not None and best.option.speculation and plain is not None:
        rows.append(("Same node type without speculation", plain))
    if plan.nearest_miss is not None:
        rows.append(("Nearest miss", plan.nearest_miss))
    table = pd.DataFrame(
        [
            {
                "": role,
                "Option": q.label,
                "GPUs": q.option.gpus if q.option.meets_slo else None,
                "Cost / month": q.option.usd_per_month if q.option.meets_slo else None,
                "p99 TPOT": q.option.tpot_s,
                "Meets every objective": "yes" if q.option.meets_slo else "no",
            }
            for role, q in rows
        ],
        columns=["", "Option", "GPUs", "Cost / month", "p99 TPOT", "Meets every objective"],
    )
    return Summary(
        text=f"{text} {assumption}", table=Table(_percentile_columns(table, t.percentile), _kinds(t.percentile))
    )


def _price_sources(quotes: list[FleetQuote]) -> list[tuple[str, str]]:
    sources = []
    for gpu in sorted({q.gpu for q in quotes}):
        price = get_price(gpu)
        for obs in price.observations if price else []:
            for src in [obs.source] if isinstance(obs.source, str) else obs.source:
                sources.append((f"{gpu} price ${obs.usd_per_gpu_hour:,.2f}/GPU-hour, {obs.provider}, {obs.date}", src))
    return sources


def quote_report(
    target: str,
    draft: str | None,
    plan: FleetRecommendation,
    *,
    customer: str = "",
    prepared_by: str = "",
    scenario_link: str = "",
    launch: Deployment | None = None,
    draws: list[tuple[QuotedOption, CountAcrossDraws]] | None = None,
    margins: list[tuple[QuotedOption, SpeedMargin]] | None = None,
) -> Report:
    """The quote document for ``plan`` (:func:`planner.decisions.plan_fleet`); with ``launch`` (the recommended
    option's deployment, :func:`planner.launch.quoted_deployment`), its launch configuration as an appendix; with
    ``draws`` (:func:`planner.decisions.options_across_draws`), each count sized on other draws of the traffic; with
    ``margins`` (:func:`planner.decisions.options_speed_margins`), how much slower each option may be."""
    t, quotes, pct = plan.traffic, plan.quotes, plan.traffic.percentile
    sections = [
        Section(
            title="Options that meet every objective",
            text="Cheapest first. Each node type is quoted at its cheapest tensor-parallel layout, with and without "
            "the draft; the first row is the recommendation."
            if plan.meeting
            else "None: see the options that miss below.",
            table=options_table(plan.meeting, pct) if plan.meeting else None,
            figure=cost_by_node(quotes) if quotes else None,
            notes=[for_customers(f"{q.node}: price {q.price_source}") for q in quotes],
        )
    ]
    if plan.missing:
        sections.append(
            Section(
                title="Options that miss an objective",
                text="Shown apart and not priced: none of these meets every objective at any fleet size searched. "
                "Each lists the percentile it reaches against the objective and how far over it is.",
                table=misses_table(plan.missing, pct),
            )
        )
    if draws:
        sections.append(draws_section(draws))
    if margins:
        sections.append(margins_section(margins))
    if plan.unusable:
        sections.append(Section(title="Node types that cannot serve the model", notes=plan.unusable))
    notes = list(dict.fromkeys(for_customers(n) for q in quotes for n in q.notes))
    if launch is not None:
        sections += launch_sections(launch)
    return Report(
        title=f"Serving quote: {target}" + (f" with draft {draft}" if draft else ""),
        subtitle=f"{t.requests_per_s:,.4g} requests/s of {t.prompt_tokens:,} + {t.output_tokens:,} tokens; "
        f"objectives {t.objectives()}",
        customer=customer,
        prepared_by=prepared_by,
        scenario_link=scenario_link,
        summary=_summary(target, draft, plan, margins),
        inputs={
            "Target": target,
            "Draft": draft or "none",
            "Serving engine": "; ".join(dict.fromkeys(q.engine_release for q in quotes if q.engine_release))
            or "not recorded",
            "Requests per second": f"{t.requests_per_s:,.4g}",
            "Prompt tokens": f"{t.prompt_tokens:,}",
            "Output tokens": f"{t.output_tokens:,}",
            "TTFT objective": fmt_ms(t.ttft_slo_s, 0) if t.ttft_slo_s else "none",
            "TPOT objective": fmt_ms(t.tpot_slo_s, 0) if t.tpot_slo_s else "none",
            "Objectives hold at": f"p{pct:g}",
            "Assumed acceptance α": "none (no speculation)" if plan.alpha is None else f"{plan.alpha:.2f}",
            "Price": f"{fmt_usd(t.usd_per_gpu_hour, 2)} / GPU-hour (entered)" if t.usd_per_gpu_hour else "catalog",
        },
        sections=sections,
        assumptions=[
            f"a month is {HOURS_PER_MONTH} hours of on-demand time; prices are dated list prices and can be overridden",
            "replicas: the fewest at which a simulated replica (continuous batching, chunked prefill, the memory "
            "plan's KV cache, the engine's request caps) meets the objectives at its share of the traffic; "
            "throughput is met by sizing (replicas x capacity covers the offered rate)",
            "each option is the cheapest of the design-space search's configurations on its node type: every tensor "
            f"parallel degree the model admits (pipeline stages only where none holds the weights) and every draft "
            f"length from {DEFAULT_KS[0]} to {DEFAULT_KS[-1]} are tried, and the one that needs the fewest nodes is "
            "quoted (the Explore page searches the same configurations)",
            *notes,
            f"objective presets: MLPerf Inference Server (TTFT {SLO_PRESETS['server'][0]:g} s, TPOT "
            f"{fmt_ms(SLO_PRESETS['server'][1], 0)}) and Interactive (TTFT {SLO_PRESETS['interactive'][0]:g} s, "
            f"TPOT {fmt_ms(SLO_PRESETS['interactive'][1], 0)}) at p99",
            f"GPU share of peak at the quoted load: compute and HBM bandwidth used are at most "
            f"{fmt_pct(max((o.option.delivered_flops_frac for o in plan.meeting), default=None))} and "
            f"{fmt_pct(max((o.option.delivered_bandwidth_frac for o in plan.meeting), default=None))} of the peaks",
        ],
        sources=[
            ("Latency objectives (MLPerf Inference loadgen)", OBJECTIVES_SOURCE),
            *model_sources(),
            *_price_sources(quotes),
        ],
        accuracy=accuracy_figures(),
    )
