"""``python -m planner check-log FILE``: a serving engine's start-up log beside the planner's ``size``."""

from __future__ import annotations

import argparse
import sys

from planner import GIB, InputError
from planner.cli.common import add_json_flag, catalog_name, emit, input_of
from planner.user_files import read_user_file
from planner.validation import MAX_LOG_CHARS, check_log


def register(subparsers) -> None:
    parser = subparsers.add_parser("check-log", help="parse a vLLM/SGLang/TensorRT-LLM start-up log and compare")
    parser.add_argument("file", metavar="FILE", help="the log file ('-' reads standard input)")
    parser.add_argument(
        "--model", type=catalog_name, help="catalog model or checkpoint name, when the log does not name it"
    )
    parser.add_argument("--draft", type=catalog_name, help="catalog draft model, when the log does not name it")
    parser.add_argument("--gpu", type=catalog_name, help="catalog GPU id, when the log does not name it")
    parser.add_argument("--tp", type=input_of("tp"), help="tensor parallel size, when the log does not say")
    parser.add_argument("--pp", type=input_of("pp"), help="pipeline parallel size, when the log does not say")
    parser.add_argument(
        "--gpu-memory-utilization", "--memory-fraction", dest="memory_fraction", type=input_of("memory_fraction")
    )
    parser.add_argument(
        "--launch-command",
        metavar="FILE",
        help="the launch command that produced the log (a file, e.g. from `python -m planner launch --out`): "
        "its flags set the deployment checked",
    )
    parser.add_argument(
        "--launch-options", metavar="FILE", help="TensorRT-LLM: the options YAML the launch command names"
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


#: The most bytes read from a log file or standard input: MAX_LOG_CHARS characters of up to 4 bytes each.
MAX_LOG_BYTES = 4 * MAX_LOG_CHARS


def _read(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        if len(data) > MAX_LOG_BYTES:
            raise InputError("file", "-", f"a log of at most {MAX_LOG_CHARS:,} characters on standard input")
    else:
        data = read_user_file(
            name, field="file", max_bytes=MAX_LOG_BYTES, expected="a log file (or '-' for standard input)"
        )
    return data.decode("utf-8", errors="replace")


def _read_text(name: str, field: str) -> str:
    data = read_user_file(name, field=field, max_bytes=MAX_LAUNCH_BYTES, expected="a text file")
    return data.decode("utf-8", errors="replace")


#: The most bytes read from a launch command or options file.
MAX_LAUNCH_BYTES = 256 * 1024


def _show(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value / GIB:,.2f} GiB" if unit == "bytes" else f"{value:,.2f}" if unit == "requests" else f"{value:,.0f}"


def run(args: argparse.Namespace) -> int:
    check = check_log(
        _read(args.file),
        model=args.model,
        gpu=args.gpu,
        draft=args.draft,
        tp=args.tp,
        pp=args.pp,
        memory_fraction=args.memory_fraction,
        launch_command=_read_text(args.launch_command, "launch_command") if args.launch_command else None,
        launch_options=_read_text(args.launch_options, "launch_options") if args.launch_options else None,
    )
    facts = check.facts
    payload = {
        "facts": facts.model_dump(),
        "applicable": check.applicable,
        "reason": check.reason,
        "deployment": check.deployment.model_dump() if check.deployment else None,
        "comparison": [row.model_dump() for row in check.rows],
        "fits": check.fits,
        "problems": check.problems,
        "notes": check.notes + facts.notes,
    }
    lines = [f"engine: {facts.engine or 'not recognised'} {facts.engine_version or ''}".rstrip()]
    for name in facts.found:
        value = getattr(facts, name)
        shown = f"{value / GIB:,.2f} GiB" if name.endswith("_bytes") and value is not None else value
        lines.append(f"  {name.removesuffix('_bytes')}: {shown}")
    if check.applicable and check.deployment is not None:
        d = check.deployment
        lines.append(f"planner ({d.engine_profile}) for {d.target} on {d.gpu_count}x {d.gpu}, TP {d.tp} PP {d.pp}:")
        lines.append(f"  {'quantity':<18}{'logged':>16}{'planner':>16}{'error':>9}")
        for row in check.rows:
            err = "-" if row.error_frac is None else f"{row.error_frac:+.1%}"
            lines.append(
                f"  {row.quantity:<18}{_show(row.logged, row.unit):>16}{_show(row.predicted, row.unit):>16}{err:>9}"
            )
    else:
        lines.append(f"no comparison: {check.reason}")
    lines += [f"note: {n}" for n in payload["notes"]]
    emit(args, payload, lines)
    return 0
