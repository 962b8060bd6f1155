"""``python -m planner catalog models|gpus|nodes|prices|precisions|tokenizers``: list catalog ids."""

from __future__ import annotations

import argparse

from planner import catalog
from planner.cli.common import add_json_flag, emit

LISTS = {
    "models": catalog.list_models,
    "gpus": catalog.list_gpus,
    "nodes": catalog.list_nodes,
    "tokenizers": catalog.list_tokenizers,
    "precisions": catalog.list_weight_formats,
}


def register(subparsers) -> None:
    parser = subparsers.add_parser("catalog", help="list catalog ids")
    parser.add_argument("kind", choices=[*LISTS, "prices"])
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.kind == "prices":
        rows = [
            {"gpu": p.gpu, "usd_per_gpu_hour": p.default_usd_per_gpu_hour, "date": p.latest_date}
            for p in catalog.list_prices()
        ]
        lines = [f"{r['gpu']:<18} ${r['usd_per_gpu_hour']:.2f}/GPU-hour  (as of {r['date']})" for r in rows]
        emit(args, {"prices": rows}, lines)
        return 0
    ids = [item.id for item in LISTS[args.kind]()]
    emit(args, {args.kind: ids}, ids)
    return 0
