"""``python -m planner measure``: run a real speculative job, measure it, and put the estimate beside it.

Needs torch and transformers (imported only when the command runs). ``--random-weights`` builds the
models from their configs (memory and speed are real, acceptance is not meaningful). Every run
writes a record to ``measurements/`` in the planner home (``PLANNER_HOME``; ``--out`` elsewhere) and the SQLite store.
"""

from __future__ import annotations

import argparse
import sys

from pydantic import ValidationError

from planner import InputError
from planner.catalog import model_from_config
from planner.cli.common import (
    add_json_flag,
    bounded_int,
    catalog_name,
    emit,
    path_arg,
    positive_float,
    positive_int,
    seed,
)
from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.errors import first_pydantic_error
from planner.measure import MAX_K, MAX_PROMPTS_BYTES, MeasureOptions, with_launch
from planner.units import fmt_bytes
from planner.user_files import check_user_file, read_user_file

DEFAULT_K = NUM_SPECULATIVE_TOKENS
DEFAULT_NEW_TOKENS = 64


def register(subparsers) -> None:
    parser = subparsers.add_parser("measure", help="run and measure a real speculative-decoding job")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--target", metavar="PATH", type=path_arg, help="local Hugging Face model folder (safetensors)")
    target.add_argument("--target-config", metavar="PATH", type=path_arg, help="a config.json (with --random-weights)")
    draft = parser.add_mutually_exclusive_group(required=True)
    draft.add_argument("--draft", metavar="PATH", type=path_arg, help="local Hugging Face model folder (safetensors)")
    draft.add_argument("--draft-config", metavar="PATH", type=path_arg, help="a config.json (with --random-weights)")
    parser.add_argument("--random-weights", action="store_true", help="seeded random weights from the configs")
    parser.add_argument("--seed", type=seed, default=0, help="weights and sampling seed (default 0)")
    parser.add_argument("--device", choices=["cuda", "cpu"], help="default: cuda when available")
    parser.add_argument("--dtype", help="bf16, fp16 or fp32 (default bf16 on CUDA, fp32 on CPU)")
    parser.add_argument("--draft-dtype", help="the draft's dtype (default --dtype)")
    parser.add_argument(
        "--k", type=bounded_int(1, MAX_K), default=DEFAULT_K, help=f"draft length K (default {DEFAULT_K})"
    )
    parser.add_argument(
        "--prompts", metavar="FILE", type=path_arg, help="JSONL of {prompt, task} (default data/prompts/*.jsonl)"
    )
    parser.add_argument("--prompts-per-task", type=positive_int, help="use the first N prompts of each task")
    parser.add_argument("--max-new-tokens", type=bounded_int(1, 8192), default=DEFAULT_NEW_TOKENS)
    parser.add_argument("--mode", choices=["greedy", "sampled"], default="greedy")
    parser.add_argument("--temperature", type=positive_float, default=1.0, help="sampled mode (default 1.0)")
    parser.add_argument("--backend", choices=["transformers", "vllm"], default="transformers")
    parser.add_argument("--tp", type=positive_int, help="vLLM backend: tensor parallel size (default: all GPUs)")
    parser.add_argument(
        "--launch",
        metavar="FILE",
        type=path_arg,
        help="a vLLM launch command (python -m planner launch --out FILE): the run uses the vLLM backend with its "
        "TP, K, memory fraction, lengths and batch caps, so it measures what was planned",
    )
    parser.add_argument(
        "--gpu", type=catalog_name, help="catalog GPU for the prediction (default: matched from the CUDA device)"
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="folder for the record (default: measurements/ in PLANNER_HOME, ~/.local/share/sd-capacity-planner)",
    )
    parser.add_argument("--no-save", action="store_true", help="do not write the record")
    parser.add_argument("--sample-interval-ms", type=positive_float, default=5.0, help="NVML polling (default 5)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    configs = args.target_config is not None or args.draft_config is not None
    if configs and not args.random_weights:
        raise InputError(
            "random_weights", False, "--random-weights with --target-config/--draft-config (a config has no weights)"
        )
    if args.prompts is not None:
        check_user_file(args.prompts, field="prompts", max_bytes=MAX_PROMPTS_BYTES, expected="a JSONL prompts file")
    for field, config in (("target_config", args.target_config), ("draft_config", args.draft_config)):
        if config is not None:
            model_from_config(config, field=field)  # every field bounds-checked before torch sees it
    try:
        options = _options(args)
    except ValidationError as exc:
        raise first_pydantic_error(exc) from None
    if args.launch:
        text = read_user_file(args.launch, field="launch", max_bytes=256 * 1024, expected="a launch command file")
        options = with_launch(options, text.decode("utf-8", errors="replace"), source=args.launch)
    from planner.measure import measure  # torch and transformers load here

    record = measure(options)
    payload = record.model_dump(mode="json")
    emit(args, payload, summary_lines(record))
    if record.status == "did_not_fit" and not args.json:
        sys.stderr.write("note: the pair did not fit (recorded as a data point)\n")
    return 0


def _options(args: argparse.Namespace) -> MeasureOptions:
    return MeasureOptions(
        target=args.target or args.target_config,
        draft=args.draft or args.draft_config,
        random_weights=args.random_weights,
        device=args.device,
        dtype=args.dtype,
        draft_dtype=args.draft_dtype,
        k=args.k,
        prompts=args.prompts,
        prompts_per_task=args.prompts_per_task,
        max_new_tokens=args.max_new_tokens,
        mode=args.mode,
        temperature=args.temperature,
        seed=args.seed,
        backend=args.backend,
        gpu=args.gpu,
        tensor_parallel_size=args.tp,
        out=args.out,
        save=not args.no_save,
        sample_interval_s=args.sample_interval_ms / 1000,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def summary_lines(record) -> list[str]:
    lines = [
        f"{record.pair} on {record.hardware.gpu_name or record.hardware.device} ({record.backend}, "
        f"{record.dtype}, K = {record.k}, {record.mode}): {record.status}",
    ]
    if record.did_not_fit is not None:
        lines.append(f"  did not fit while {record.did_not_fit.stage}: {record.did_not_fit.message}")
    if record.alpha is not None:
        meaningful = "" if record.acceptance_meaningful else " (random weights: not meaningful)"
        positions = ", ".join(f"{a:.2f}" for a in record.acceptance_by_position)
        lines.append(f"  acceptance α = {record.alpha:.3f}, τ = {record.mean_accepted_len:.3f}{meaningful}")
        lines.append(f"  by draft position: {positions}")
    if record.speedup is not None:
        lines.append(
            f"  speed: {record.tokens_per_s:.1f} tok/s with the draft, {record.baseline_tokens_per_s:.1f} without; "
            f"decode speedup {record.speedup:.2f}x"
        )
    peak = fmt_bytes(record.peak_memory_bytes) if record.peak_memory_bytes else "n/a"
    nvml = "NVML" if record.nvml_available else record.nvml.reason
    lines.append(f"  peak GPU memory: {peak} ({record.memory.peak_memory_source if record.memory else ''}; {nvml})")
    if record.predicted.applicable:
        errors = ", ".join(f"{k} {_pct(v)}" for k, v in record.errors_frac.items() if v is not None)
        lines.append(f"  prediction ({record.predicted.gpu}, engine hf) error: {errors or 'nothing comparable'}")
    else:
        lines.append(f"  prediction: {record.predicted.reason}")
    for task, verdict in record.verdict_by_task.items():
        lines.append(f"  {task}: {verdict.verdict}: {verdict.reason}")
    lines += [f"  {note}" for note in record.notes]
    return lines
