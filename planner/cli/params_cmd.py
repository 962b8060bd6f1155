"""``python -m planner params``: exact parameter counts by component."""

from __future__ import annotations

import argparse

from planner.catalog import model_facts
from planner.cli.common import add_json_flag, add_model_args, emit, model_from_args
from planner.units import fmt_count, fmt_gb, fmt_gib


def register(subparsers) -> None:
    parser = subparsers.add_parser("params", help="total/active parameters by component")
    add_model_args(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    spec = model_from_args(args)
    facts = model_facts(spec)
    params = facts.params
    payload = {
        "model": spec.id,
        "total_params": params.total_params,
        "active_params": params.active_params,
        "components": params.components,
        "persistent_buffers": params.persistent_buffers,
        "method": params.method,
        "weight_bytes_by_format": facts.weight_bytes_by_format,
    }
    lines = [
        f"{spec.id}  ({params.method})",
        f"  total params   {params.total_params:,}  ({fmt_count(params.total_params)})",
        f"  active params  {params.active_params:,}  ({fmt_count(params.active_params)})",
        *(f"    {name:<15}{count:>20,}" for name, count in params.components.items()),
    ]
    if params.persistent_buffers:
        lines.append(f"  persistent buffers (not parameters)  {params.persistent_buffers:,}")
    lines.append("  weights:")
    lines += [f"    {fmt:<10}{fmt_gb(n):>12}  {fmt_gib(n):>12}" for fmt, n in facts.weight_bytes_by_format.items()]
    emit(args, payload, lines)
    return 0
