"""``python -m planner quote``: traffic -> replicas -> nodes -> cost on one or several node types."""

from __future__ import annotations

import argparse

from planner.catalog import get_node, resolve_model
from planner.cli.common import (
    add_json_flag,
    add_objective_args,
    catalog_name,
    cli_actor,
    emit,
    export_path,
    fraction,
    objectives_from_args,
    path_arg,
    positive_float,
    positive_int,
    traffic_draws,
    write_report,
)
from planner.decisions import (
    Traffic,
    compare_nodes,
    options_across_draws,
    options_speed_margins,
    recommend_fleet,
)
from planner.defaults import MAX_TRAFFIC_DRAWS, SERVING_OUTPUT_TOKENS, SERVING_PROMPT_TOKENS
from planner.launch import quoted_deployment
from planner.reports import quote_report
from planner.scenario import Scenario
from planner.units import fmt_counted
from planner.validation import save_quote


def _save(args: argparse.Namespace, report, target: str, draft: str | None, nodes: list[str], traffic) -> None:
    """The quote, whole, in the store under ``--save`` with the scenario it answers (the Fleet page's inputs)."""
    scenario = Scenario.build(
        target=target,
        draft=draft,
        method=args.method,
        node=nodes[0],
        engine=args.engine,
        engine_version=args.engine_version,
        kv_dtype=args.kv_dtype,
        fleet_nodes=tuple(nodes),
        fleet_requests_per_s=traffic.requests_per_s,
        fleet_prompt_tokens=traffic.prompt_tokens,
        fleet_output_tokens=traffic.output_tokens,
        fleet_tpot_slo_ms=(traffic.tpot_slo_s or 0) * 1e3,
        fleet_ttft_slo_ms=(traffic.ttft_slo_s or 0) * 1e3,
        fleet_percentile=traffic.percentile,
        fleet_alpha=traffic.alpha,
        fleet_usd_per_gpu_hour=traffic.usd_per_gpu_hour or 0.0,
    )
    save_quote(
        args.save,
        report.to_json(with_figures=True),
        scenario,
        args.notes,
        replace=args.replace,
        actor=cli_actor(),
        visibility=args.visibility,
    )


def register(subparsers) -> None:
    parser = subparsers.add_parser("quote", help="nodes and cost to serve a traffic level, with and without a draft")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--target", metavar="ID", type=catalog_name)
    target.add_argument("--target-config", metavar="PATH", type=path_arg)
    draft = parser.add_mutually_exclusive_group()
    draft.add_argument("--draft", metavar="ID", type=catalog_name)
    draft.add_argument("--draft-config", metavar="PATH", type=path_arg)
    draft.add_argument(
        "--method",
        choices=("ngram", "mtp"),
        help="speculate without a draft model: n-gram lookup, or the target's own MTP layers",
    )
    parser.add_argument(
        "--node", action="append", type=catalog_name, required=True, help="node type; repeat to compare several"
    )
    parser.add_argument("--requests-per-s", type=positive_float, required=True)
    parser.add_argument(
        "--prompt-tokens", type=positive_int, default=SERVING_PROMPT_TOKENS, help=f"default {SERVING_PROMPT_TOKENS:,}"
    )
    parser.add_argument(
        "--output-tokens", type=positive_int, default=SERVING_OUTPUT_TOKENS, help=f"default {SERVING_OUTPUT_TOKENS:,}"
    )
    add_objective_args(parser)
    parser.add_argument(
        "--alpha",
        type=fraction,
        help="assumed acceptance α (default: the pair's measured, published or prior α, printed with its source)",
    )
    parser.add_argument("--price-usd-per-gpu-hour", type=positive_float, help="override the catalog price")
    parser.add_argument(
        "--traffic-draws",
        type=traffic_draws,
        default=1,
        metavar="N",
        help=f"also size every option that meets the objectives on N draws of the traffic (2 to {MAX_TRAFFIC_DRAWS}; "
        "default 1, the one it is quoted on) and print the replicas each draw needs",
    )
    parser.add_argument(
        "--speed-margin",
        action="store_true",
        help="also find, for every option that meets the objectives, how much longer than estimated every engine "
        "step may take with the quoted replicas still meeting them (beside the planner's measured error)",
    )
    parser.add_argument("--engine", default="vllm", choices=["vllm", "vllm-v0", "sglang", "trtllm"])
    parser.add_argument(
        "--engine-version", type=catalog_name, help="engine release, e.g. 0.19.0 (default: the newest profiled)"
    )
    parser.add_argument("--kv-dtype", default="auto", type=catalog_name)
    parser.add_argument(
        "--export", metavar="FILE", type=export_path, help="also write a report: .json, .html, .md, .xlsx or .pdf"
    )
    parser.add_argument("--customer", default="", help="who the quote is for (its document's title page)")
    parser.add_argument("--prepared-by", default="", help="who prepared it (its document's title page)")
    parser.add_argument("--save", metavar="NAME", help="also save the quote in the store under NAME (see `saved`)")
    parser.add_argument("--notes", default="", help="notes kept with a saved quote")
    parser.add_argument("--replace", action="store_true", help="with --save: replace your saved quote of that name")
    parser.add_argument(
        "--visibility",
        choices=("private", "team"),
        help="with --save: who sees it (default: the team for this machine, private for PLANNER_USER)",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    target = resolve_model(args.target, args.target_config, field="target")
    draft = resolve_model(args.draft, args.draft_config, field="draft") if (args.draft or args.draft_config) else None
    nodes = [get_node(n) for n in args.node]
    speculation = {"draft": draft, "method": args.method}
    ttft_slo_s, tpot_slo_s = objectives_from_args(args)
    traffic = Traffic.build(
        requests_per_s=args.requests_per_s,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        ttft_slo_s=ttft_slo_s,
        tpot_slo_s=tpot_slo_s,
        percentile=args.percentile,
        alpha=args.alpha,
        usd_per_gpu_hour=args.price_usd_per_gpu_hour,
    )
    engine = {"engine": args.engine, "engine_version": args.engine_version, "kv_dtype": args.kv_dtype}
    quotes, unusable = compare_nodes(target, nodes, traffic, **speculation, **engine)
    plan = recommend_fleet(traffic, quotes, unusable)
    speculator = draft.id if draft else {"ngram": "n-gram lookup", "mtp": "MTP module"}.get(args.method or "")
    fields = {"method": args.method, **engine}
    launched = None
    if args.export and plan.recommended is not None:  # the appendix: the recommended option's launch
        launched = quoted_deployment(target, plan.recommended, traffic, draft=draft, **fields)

    def deployment_of(quoted):
        return quoted_deployment(target, quoted, traffic, draft=draft, **fields)

    checks = options_across_draws(plan, deployment_of, args.traffic_draws) if args.traffic_draws > 1 else []
    margins = options_speed_margins(plan, deployment_of) if args.speed_margin else []
    report = quote_report(
        target.id,
        speculator,
        plan,
        customer=args.customer,
        prepared_by=args.prepared_by,
        launch=launched,
        draws=checks or None,
        margins=margins or None,
    )
    if args.export:
        write_report(report, args.export)
    if args.save:
        _save(args, report, target.id, draft.id if draft else None, [n.id for n in nodes], traffic)
    lines = [f"Serving {traffic.requests_per_s:g} req/s of {target.id}" + (f" (+ {speculator})" if speculator else "")]
    lines.append(f"  objectives: {traffic.objectives()}")
    if quotes:
        lines.append(f"  engine: {quotes[0].engine_release}")
    if speculator and plan.alpha_basis:
        lines.append(f"  acceptance: {plan.alpha_basis}")
    lines.append(f"  {plan.headline}")
    if plan.saving is not None:
        lines.append(f"  on the same node type, {plan.saving.describe()}")
    elif plan.speculation_note:
        lines.append(f"  {plan.speculation_note}")
    if plan.hardware_note:
        lines.append(f"  separately, the node type: {plan.hardware_note}")
    lines += [f"  warning: {flag}" for flag in plan.flags]
    for q in quotes:
        lines.append(f"  {q.node:<20} step times: {q.speed_source}")
        for o in (q.without_speculation, q.with_speculation):
            if o is not None:
                replicas = fmt_counted(o.replicas, "replica")
                if o.replicas_nodes_hold > o.replicas:
                    replicas += f" (the {fmt_counted(o.nodes, 'node')} hold {o.replicas_nodes_hold})"
                size = ", ".join((replicas, fmt_counted(o.nodes, "node"), fmt_counted(o.gpus, "GPU")))
                if o.meets_slo:
                    sized = f"{size}, " + (f"${o.usd_per_month:,.0f}/month" if o.usd_per_month else "no price")
                else:  # the fleet its sizing stopped at, not one it needs
                    sized = f"misses at {size}: " + "; ".join(m.describe() for m in o.misses)
                mark = " <- recommended" if plan.recommended is not None and o is plan.recommended.option else ""
                lines.append(
                    f"  {q.node:<20} {o.layout} {'spec ' if o.speculation else 'plain'}: {sized}, "
                    f"p{traffic.percentile:g} TTFT {o.ttft_s * 1e3:,.0f} ms, TPOT {o.tpot_s * 1e3:.1f} ms; "
                    f"binds: {o.limited_by}{mark}"
                )
    for quoted, check in checks:
        lines.append(f"  {quoted.label}: {check.describe()}")
    for quoted, margin in margins:
        lines.append(f"  {quoted.label}: speed margin: {margin.describe()}")
    lines += [f"  cannot serve: {u}" for u in unusable]
    recommended = plan.recommended
    emit(
        args,
        {
            "quotes": [q.model_dump() for q in quotes],
            "unusable": unusable,
            "verdict": plan.headline,
            "alpha": plan.alpha,
            "alpha_basis": plan.alpha_basis,
            "hardware_note": plan.hardware_note,
            "flags": plan.flags,
            "recommended": recommended.model_dump() if recommended else None,
            "saving": plan.saving.model_dump() if plan.saving else None,
            "traffic_draws": [{"option": quoted.label, **check.model_dump()} for quoted, check in checks],
            "speed_margins": [{"option": quoted.label, **margin.model_dump()} for quoted, margin in margins],
            "report": report.to_json(),
        },
        lines,
    )
    return 0
