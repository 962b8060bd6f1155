"""``python -m planner matrix``: every candidate draft for a target on a node, ranked."""

from __future__ import annotations

import argparse
import math
import sys

from planner.acceptance_math import check_alpha
from planner.cli.common import add_json_flag, emit, positive_int
from planner.cli.deployment_args import add_deployment_args, deployment_from_args
from planner.decisions import decision_matrix, matrix_table
from planner.defaults import SELECTION_BATCH_SIZE


def _alpha(text: str) -> float:
    try:
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text[:40]!r} is not allowed: expected a finite number in (0, 1)")
        return check_alpha(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(subparsers) -> None:
    parser = subparsers.add_parser("matrix", help="rank candidate drafts for a target on a node")
    add_deployment_args(parser, draft=False)
    parser.add_argument("--alpha", type=_alpha, help="assume this acceptance rate for every pair (default: per pair)")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=SELECTION_BATCH_SIZE,
        help=f"batch size to rank at (default {SELECTION_BATCH_SIZE}, as Draft Selection)",
    )
    workload = "default: the speed rules' default workload (data/speculation_rules.json), as the Performance page"
    parser.add_argument("--prompt-tokens", type=positive_int, help=workload)
    parser.add_argument("--output-tokens", type=positive_int, help=workload)
    add_json_flag(parser)
    parser.add_argument("--csv", action="store_true", help="print the matrix as CSV")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    base = deployment_from_args(args)
    matrix = decision_matrix(
        base,
        batch_size=args.batch_size,
        alpha=args.alpha,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
    )
    if args.csv:
        matrix_table(matrix).to_csv(sys.stdout, index=False)
        return 0
    lines = [
        f"Drafts for {matrix.target} on {matrix.node} (TP {matrix.tp}, {matrix.engine}), "
        f"ranked at batch {matrix.batch_size}; without a draft: concurrency {matrix.baseline_max_concurrency:g}"
    ]
    for r in matrix.rows:
        speed = (
            f"{r.speedup_batch_1:.2f}x @1, {r.speedup_at_batch:.2f}x @{matrix.batch_size}"
            if r.speedup_at_batch is not None
            else "-"
        )
        lines.append(f"{r.rank:>3}. {r.draft:<44} {r.verdict:<25} {speed:<22} {r.why_lower}")
    emit(args, matrix.model_dump(), lines)
    return 0
