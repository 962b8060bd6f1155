"""``python -m planner search``: every way to serve a target, the Pareto frontiers and the cheapest that meets
every objective."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
from pathlib import Path

from pydantic import ValidationError

from planner.catalog import get_node, list_nodes, resolve_model
from planner.cli.common import (
    add_json_flag,
    add_objective_args,
    bounded_int,
    catalog_name,
    emit,
    fraction,
    objectives_from_args,
    path_arg,
    positive_float,
    positive_int,
    traffic_draws,
)
from planner.decisions.search import METHODS, Objectives, SearchSpace, SearchWorkload, search
from planner.defaults import MAX_SEARCH_PROCESSES, SERVING_OUTPUT_TOKENS, SERVING_PROMPT_TOKENS
from planner.engines import engine_release
from planner.errors import InputError, first_pydantic_error
from planner.speed import DATASETS_HELP, DRAWN_DATASETS
from planner.units import fmt_counted
from planner.user_files import check_output_path, shown_path

#: Columns of ``--csv`` (every point, one row each).
CSV_COLUMNS = (
    "index", "node", "tp", "pp", "dtype", "kv_dtype", "engine", "method", "speculator", "k", "max_num_seqs",
    "alpha", "fits", "starts", "kv_cache_tokens", "stage", "output_tok_s_per_gpu", "output_tok_s_per_user",
    "ttft_s", "tpot_s", "replicas", "nodes", "gpus", "usd_per_million_output_tokens", "meets_objectives",
    "frontiers", "reason",
)  # fmt: skip


def _list(text: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in text.split(",") if part.strip())
    if not items or len(items) > 64 or any(len(i) > 200 or not i.isprintable() for i in items):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not allowed: expected 1 to 64 comma-separated names")
    return items


def _int_range(text: str) -> tuple[int, ...]:
    """``1-8`` or ``1,2,4`` (integers from 1 to 4,096)."""
    values: list[int] = []
    for part in _list(text):
        low, dash, high = part.partition("-")
        try:
            a, b = int(low), int(high) if dash else int(low)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part[:20]!r} is not allowed: expected N, N-M or N,M,…") from None
        if not 1 <= a <= b <= 4096:
            raise argparse.ArgumentTypeError(f"{part[:20]!r} is not allowed: expected integers from 1 to 4,096")
        values += range(a, b + 1)
    return tuple(values)


def _csv_path(text: str) -> Path:
    try:
        return check_output_path(text, field="csv", suffixes=(".csv",))
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{shown_path(text)[:120]!r} is not allowed: expected {exc.allowed}") from None


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "search", help="every configuration for a workload: the Pareto frontier, the cheapest meeting the objectives"
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--target", metavar="ID", type=catalog_name)
    target.add_argument("--target-config", metavar="PATH", type=path_arg, help="an imported target: its config.json")
    parser.add_argument("--nodes", type=_list, help="node types, comma-separated, or all (default: H100, H200, B200)")
    parser.add_argument("--engines", type=_list, default=("vllm",), help="engines, comma-separated (default vllm)")
    parser.add_argument(
        "--engine-version",
        type=catalog_name,
        help="the release of the one engine searched, e.g. 0.19.0 (default: the newest profiled)",
    )
    parser.add_argument("--methods", type=_list, help="none,draft_model,eagle,eagle3,mtp,ngram or all (default all)")
    parser.add_argument("--k", type=_int_range, help="draft lengths, e.g. 1-8 (default) or 2,4")
    parser.add_argument("--tp", type=_int_range, help="TP degrees to try (default: every one the model admits)")
    parser.add_argument("--dtypes", type=_list, help="WEIGHTS or WEIGHTS:KV, e.g. bf16,fp8,fp8:fp8 (the default)")
    parser.add_argument(
        "--batch-caps",
        type=_caps,
        help="max_num_seqs values (default 8,16,32,64,128,256), or default: the engine's own for each configuration",
    )
    parser.add_argument("--drafts", type=_list, help="draft models and heads to try, by id (default: every one)")
    parser.add_argument(
        "--draft-config", metavar="PATH", type=path_arg, help="also try an imported draft model: its config.json"
    )
    parser.add_argument(
        "--alpha", type=fraction, help="acceptance α assumed for every speculator (default: each its own)"
    )
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--requests-per-s", type=positive_float)
    load.add_argument("--concurrency", type=positive_int)
    parser.add_argument(
        "--prompt-tokens", type=positive_int, help=f"default {SERVING_PROMPT_TOKENS:,} (without --dataset)"
    )
    parser.add_argument(
        "--output-tokens", type=positive_int, help=f"default {SERVING_OUTPUT_TOKENS:,} (without --dataset)"
    )
    parser.add_argument("--dataset", choices=DRAWN_DATASETS, help=f"a dataset's lengths instead ({DATASETS_HELP})")
    add_objective_args(parser)
    parser.add_argument("--csv", type=_csv_path, metavar="FILE", help="write every point to a CSV file")
    parser.add_argument(
        "--traffic-draws",
        type=traffic_draws,
        default=1,
        metavar="N",
        help="at a request rate, also size the recommendation's fleet on N draws of the traffic (default 1, the "
        "one it is sized on) and print the replicas each draw needs",
    )
    parser.add_argument(
        "--speed-margin",
        action="store_true",
        help="at a request rate, also find how much longer than estimated every engine step may take with the "
        "recommendation's fleet still meeting the objectives (beside the planner's measured error)",
    )
    parser.add_argument(
        "--processes",
        type=bounded_int(1, MAX_SEARCH_PROCESSES),
        metavar="N",
        help=f"processes to search in, 1 to {MAX_SEARCH_PROCESSES} (default: one per CPU for a space of 2,000 points "
        "or more); the answer does not depend on it",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def _caps(text: str) -> tuple[int, ...] | str:
    """``--batch-caps``: integers as :func:`_int_range` reads them, or ``default`` (the engine's own)."""
    return "default" if text.strip().lower() == "default" else _int_range(text)


def _space_fields(args: argparse.Namespace) -> dict:
    imported = []
    target_id = args.target
    if args.target_config is not None:
        target = resolve_model(None, args.target_config, field="target")
        imported.append(target)
        target_id = target.id
    draft = resolve_model(None, args.draft_config, field="draft") if args.draft_config is not None else None
    fields: dict = {"target": target_id, "engines": args.engines, "imported": tuple(imported)}
    if draft is not None:
        fields["imported"] += (draft,)
        if args.drafts is not None:
            fields["drafts"] = (*args.drafts, draft.id)
    elif args.drafts is not None:
        fields["drafts"] = args.drafts
    if args.alpha is not None:
        fields["alpha"] = args.alpha
    if args.engine_version is not None:
        fields["engine_version"] = args.engine_version
    if args.nodes is not None:
        fields["nodes"] = tuple(n.id for n in list_nodes()) if args.nodes == ("all",) else args.nodes
    if args.methods is not None:
        fields["methods"] = METHODS if args.methods == ("all",) else args.methods
    for name, arg in (("ks", args.k), ("tps", args.tp), ("dtypes", args.dtypes)):
        if arg is not None:
            fields[name] = arg
    if args.batch_caps is not None:
        fields["batch_caps"] = None if args.batch_caps == "default" else args.batch_caps
    return fields


def run(args: argparse.Namespace) -> int:
    lengths = {"prompt_tokens": args.prompt_tokens, "output_tokens": args.output_tokens}  # None: the core's default
    ttft_slo_s, tpot_slo_s = objectives_from_args(args)
    try:
        workload = SearchWorkload(
            requests_per_s=args.requests_per_s,
            concurrency=args.concurrency,
            dataset=args.dataset or "fixed",
            **lengths,
        )
        objectives = Objectives(ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, percentile=args.percentile)
    except ValidationError as exc:
        raise first_pydantic_error(exc) from None
    fields = _space_fields(args)
    for node in fields.get("nodes", ()):
        get_node(node)
    result = search(SearchSpace.build(**fields), workload, objectives, workers=args.processes)
    if args.csv is not None:
        _write_csv(result, args.csv)
    lines = [
        f"{result.space.target}: {len(result.points):,} configurations for {workload.describe()}; "
        f"{result.fitting_points:,} fit and start, {result.simulated:,} simulated, in {result.seconds:.2f} s ("
        + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in result.stage_seconds.items())
        + ")",
        f"objectives: {objectives.describe()}",
        *(f"engine: {engine_release(engine, result.space.release())}" for engine in result.space.engines),
        result.headline,
        "frontier (output tok/s per GPU vs per user; cost per million tokens vs TPOT):",
    ]
    pct = f"p{objectives.percentile:g}"
    for p in result.frontier:
        cost = "—" if p.usd_per_million_output_tokens is None else f"${p.usd_per_million_output_tokens:,.3f}/M"
        lines.append(
            f"  {p.label}: {_shown(p.output_tok_s_per_gpu, ',.0f')} tok/s/GPU, "
            f"{_shown(p.output_tok_s_per_user, ',.1f')} tok/s/user, {pct} TTFT {_shown(p.ttft_s, ',.0f', 1e3)} ms, "
            f"{pct} TPOT {_shown(p.tpot_s, ',.1f', 1e3)} ms, "
            f"{'— GPUs' if p.gpus is None else fmt_counted(p.gpus, 'GPU')}, {cost} "
            f"[{', '.join(p.frontiers)}]"
        )
    if not result.frontier:
        lines.append(
            "  none: no configuration meets every objective with its batch cap of requests in flight (the frontiers "
            "draw replicas loaded to their cap; smaller batch caps may)"
        )
    lines += [f"  {s.sentence}" for s in result.steps]
    check = result.recommendation_across_draws(args.traffic_draws) if args.traffic_draws > 1 else None
    margin = result.recommendation_speed_margin() if args.speed_margin else None
    if margin is not None:
        lines.insert(3, f"speed margin: {margin.describe()}")
    if check is not None:
        lines.insert(3, check.describe())
    if args.json:  # one compact write: the whole space can be 100,000 points (indenting them costs seconds)
        out = result.as_json()
        out["traffic_draws"] = None if check is None else check.model_dump()
        out["speed_margin"] = None if margin is None else margin.model_dump()
        sys.stdout.write(json.dumps(out, default=str) + "\n")
    else:
        emit(args, {}, lines)
    return 0


def _shown(value: float | int | None, spec: str, scale: float = 1.0) -> str:
    """A figure, or "—" where the workload has none (one output token has no time per output token)."""
    return "—" if value is None else format(value * scale if scale != 1.0 else value, spec)


def _write_csv(result, path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for p in result.points:
        row = p.as_dict()
        row["frontiers"] = " ".join(p.frontiers)
        writer.writerow({k: _cell(row.get(k)) for k in CSV_COLUMNS})
    try:
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".search-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                out.write(buffer.getvalue())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError("csv", shown_path(path), f"a file that can be written ({exc.strerror or exc})") from None


def _cell(value):
    """A CSV cell that a spreadsheet will not run as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value
