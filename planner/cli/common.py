"""Helpers shared by CLI commands: model arguments, positive integers, output."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from planner.catalog.importing import resolve_model
from planner.catalog.schemas import ModelSpec


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be >= 1")
    return value


def add_model_args(parser: argparse.ArgumentParser, name: str = "model", required: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(f"--{name}", metavar="ID", help="catalog id, e.g. meta-llama/Llama-3.1-70B or Llama-3.1-70B")
    group.add_argument(
        f"--{name}-config" if name != "model" else "--config",
        metavar="PATH",
        dest=f"{name}_config",
        help="a Hugging Face config.json or a model folder",
    )


def model_from_args(args: argparse.Namespace, name: str = "model") -> ModelSpec | None:
    model_id = getattr(args, name, None)
    config = getattr(args, f"{name}_config", None)
    if model_id is None and config is None:
        return None
    return resolve_model(model_id, config, field=name)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")


def emit(args: argparse.Namespace, payload: dict[str, Any], lines: list[str]) -> None:
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(lines) + "\n")


def write_report(report, path_text: str) -> None:
    """Write a planner.reports.document.Report in the format its suffix names, whole or not at all."""
    path = Path(path_text)
    data = report.export(path.suffix.lstrip(".") or "json")
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(data)
    tmp.replace(path)
    sys.stderr.write(f"wrote {path}\n")
