"""``python -m planner launch``: the engine command, docker line or Kubernetes manifest of a planned deployment."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from planner.cli.common import add_json_flag
from planner.cli.deployment_args import add_deployment_args, deployment_from_args
from planner.errors import InputError
from planner.launch import FORMATS, launch_config, render_launch
from planner.user_files import check_output_path, shown_path

OUT_SUFFIXES = (".sh", ".txt", ".yaml", ".yml")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "launch", help="the launch command (vLLM, SGLang, TensorRT-LLM), docker run line or Kubernetes manifest"
    )
    add_deployment_args(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="what to write (default: the engine's own command): vllm, sglang, trtllm, docker or k8s",
    )
    parser.add_argument(
        "--out", metavar="FILE", help="write it to FILE (.sh, .txt, .yaml or .yml) instead of standard output"
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def _write(path_text: str, text: str) -> Path:
    """Write ``text`` whole or not at all."""
    path = check_output_path(path_text, field="out", suffixes=OUT_SUFFIXES)
    try:
        handle, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".launch-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError("out", shown_path(path), f"a file that can be written ({exc.strerror or exc})") from None
    return path


def run(args: argparse.Namespace) -> int:
    if args.out:
        check_output_path(args.out, field="out", suffixes=OUT_SUFFIXES)
    dep = deployment_from_args(args)
    config = launch_config(dep)
    fmt = args.format or {"vllm-v0": "vllm"}.get(dep.engine, dep.engine)
    text = render_launch(config, fmt)
    if args.json:
        payload = config.model_dump()
        payload["format"], payload["text"] = fmt, text
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 0
    if not args.out:
        sys.stdout.write(text)
        return 0
    path = _write(args.out, text)
    sys.stderr.write(f"wrote {shown_path(path)}\n")
    if config.options_file and fmt != "k8s":  # the Kubernetes manifest holds it in a ConfigMap
        beside = path.parent / (config.options_file_name or "options.yaml")
        _write(str(beside), config.options_file)
        sys.stderr.write(f"wrote {shown_path(beside)} (the options file the command names)\n")
    return 0
