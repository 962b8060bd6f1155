"""``python -m planner quote``: traffic -> replicas -> nodes -> cost on one or several node types."""

from __future__ import annotations

import argparse

from planner import Deployment
from planner.catalog import get_node, resolve_model
from planner.cli.common import (
    add_json_flag,
    catalog_name,
    emit,
    export_path,
    fraction,
    path_arg,
    positive_float,
    positive_int,
    write_report,
)
from planner.decisions import SLO_PRESETS, Traffic, compare_nodes, recommend_fleet
from planner.defaults import ACCEPTANCE_ALPHA
from planner.launch import quoted_deployment
from planner.reports import quote_report
from planner.speed import deployment_acceptance


def _percentile(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"{value} must be in (0, 100]")
    return value


def _alpha(args: argparse.Namespace, target, node, speculation: dict) -> tuple[float, str]:
    """α as entered, else the speculator's measured, published or prior α (the default when nothing speculates)."""
    if args.alpha is not None:
        return args.alpha, "entered"
    if speculation["draft"] is None and speculation["method"] is None:
        return ACCEPTANCE_ALPHA, "unused: no speculation"
    estimate = deployment_acceptance(Deployment.on_node(target, node, tp=1, **speculation))
    return estimate.alpha, estimate.source


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
    parser.add_argument("--prompt-tokens", type=positive_int, default=1024)
    parser.add_argument("--output-tokens", type=positive_int, default=256)
    parser.add_argument(
        "--slo-preset",
        choices=sorted(SLO_PRESETS),
        default="server",
        help="MLPerf-style objectives: server (TTFT 2 s, TPOT 200 ms) or interactive (450 ms, 40 ms)",
    )
    parser.add_argument("--ttft-slo-ms", type=positive_float, help="time-to-first-token objective (overrides preset)")
    parser.add_argument("--tpot-slo-ms", type=positive_float, help="time-per-output-token objective (overrides preset)")
    parser.add_argument(
        "--percentile", type=_percentile, default=99.0, help="percentile the objectives hold at (default 99)"
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        help="assumed acceptance α (default: the pair's measured, published or prior α, printed with its source)",
    )
    parser.add_argument("--price-usd-per-gpu-hour", type=positive_float, help="override the catalog price")
    parser.add_argument("--engine", default="vllm", choices=["vllm", "vllm-v0", "sglang", "trtllm"])
    parser.add_argument("--kv-dtype", default="auto", type=catalog_name)
    parser.add_argument(
        "--export", metavar="FILE", type=export_path, help="also write a report: .json, .html, .md, .xlsx or .pdf"
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    target = resolve_model(args.target, args.target_config, field="target")
    draft = resolve_model(args.draft, args.draft_config, field="draft") if (args.draft or args.draft_config) else None
    nodes = [get_node(n) for n in args.node]
    speculation = {"draft": draft, "method": args.method}
    alpha, alpha_source = _alpha(args, target, nodes[0], speculation)
    traffic = Traffic.build(
        requests_per_s=args.requests_per_s,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        ttft_slo_s=args.ttft_slo_ms / 1e3 if args.ttft_slo_ms else SLO_PRESETS[args.slo_preset][0],
        tpot_slo_s=args.tpot_slo_ms / 1e3 if args.tpot_slo_ms else SLO_PRESETS[args.slo_preset][1],
        percentile=args.percentile,
        alpha=alpha,
        usd_per_gpu_hour=args.price_usd_per_gpu_hour,
    )
    quotes, unusable = compare_nodes(target, nodes, traffic, **speculation, engine=args.engine, kv_dtype=args.kv_dtype)
    plan = recommend_fleet(traffic, quotes, unusable)
    speculator = draft.id if draft else {"ngram": "n-gram lookup", "mtp": "MTP module"}.get(args.method or "")
    launched = None
    if args.export and plan.recommended is not None:  # the appendix: the recommended option's launch
        fields = {"method": args.method, "engine": args.engine, "kv_dtype": args.kv_dtype}
        launched = quoted_deployment(target, plan.recommended, traffic, draft=draft, **fields)
    report = quote_report(target.id, speculator, plan, launch=launched)
    if args.export:
        write_report(report, args.export)
    lines = [f"Serving {traffic.requests_per_s:g} req/s of {target.id}" + (f" (+ {speculator})" if speculator else "")]
    lines.append(f"  objectives: {traffic.objectives()}")
    if speculator:
        lines.append(f"  acceptance α {alpha:.3f} ({alpha_source})")
    lines.append(f"  {plan.headline}")
    if plan.saving is not None:
        lines.append(f"  {plan.saving.describe()}")
    elif plan.speculation_note:
        lines.append(f"  {plan.speculation_note}")
    for q in quotes:
        for o in (q.without_speculation, q.with_speculation):
            if o is not None:
                cost = f"${o.usd_per_month:,.0f}/month" if o.usd_per_month else "no price"
                if not o.meets_slo:
                    cost = "misses: " + "; ".join(m.describe() for m in o.misses)
                mark = " <- recommended" if plan.recommended is not None and o is plan.recommended.option else ""
                lines.append(
                    f"  {q.node:<20} TP {q.tp} {'spec ' if o.speculation else 'plain'}: {o.replicas} replica(s), "
                    f"{o.nodes} node(s), {o.gpus} GPUs, {cost}, p{traffic.percentile:g} TTFT {o.ttft_s * 1e3:,.0f} ms, "
                    f"TPOT {o.tpot_s * 1e3:.1f} ms; binds: {o.limited_by}{mark}"
                )
    lines += [f"  cannot serve: {u}" for u in unusable]
    recommended = plan.recommended
    emit(
        args,
        {
            "quotes": [q.model_dump() for q in quotes],
            "unusable": unusable,
            "verdict": plan.headline,
            "alpha": alpha,
            "alpha_source": alpha_source,
            "recommended": recommended.model_dump() if recommended else None,
            "saving": plan.saving.model_dump() if plan.saving else None,
            "report": report.to_json(),
        },
        lines,
    )
    return 0
