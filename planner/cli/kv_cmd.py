"""``python -m planner kv``: KV-cache bytes per token, whole model and per GPU."""

from __future__ import annotations

import argparse

from planner.catalog import get_kv_dtype
from planner.cli.common import add_json_flag, add_model_args, emit, input_of, model_from_args, positive_int
from planner.model import check_tp, kv_bytes_for_context, kv_bytes_per_token, kv_element_bytes, kv_heads_per_gpu
from planner.units import fmt_bytes


def register(subparsers) -> None:
    parser = subparsers.add_parser("kv", help="KV-cache bytes per token (whole model and per GPU)")
    add_model_args(parser)
    parser.add_argument("--tp", type=input_of("tp"), default=1, help="tensor parallel size (default 1)")
    parser.add_argument("--kv-dtype", default="auto", choices=["auto", "bf16", "fp16", "fp8", "fp32"])
    parser.add_argument(
        "--context",
        type=positive_int,
        help="also give the bytes of one N-token sequence, sliding-window layers capped at their window",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    spec = model_from_args(args)
    arch = spec.architecture
    check_tp(arch, args.tp)
    element = kv_element_bytes(get_kv_dtype(args.kv_dtype), arch)
    payload = {
        "model": spec.id,
        "kv_dtype": args.kv_dtype,
        "element_bytes": element,
        "tp": args.tp,
        "layers": arch.num_layers,
        "sliding_layers": arch.num_sliding_layers,
        "sliding_window": arch.sliding_window,
        "attention": "mla-latent" if arch.mla else "kv-heads",
        "kv_heads_per_gpu": None if arch.mla else kv_heads_per_gpu(arch, args.tp),
        "kv_bytes_per_token": kv_bytes_per_token(arch, element),
        "kv_bytes_per_token_per_gpu": kv_bytes_per_token(arch, element, args.tp),
    }
    lines = [
        f"{spec.id}  kv dtype {args.kv_dtype} ({element} B/element), TP {args.tp}",
        f"  per token, whole model  {payload['kv_bytes_per_token']:>12,} B  "
        f"({fmt_bytes(payload['kv_bytes_per_token'])})",
        f"  per token, per GPU      {payload['kv_bytes_per_token_per_gpu']:>12,} B  "
        f"({fmt_bytes(payload['kv_bytes_per_token_per_gpu'])})",
    ]
    if args.context:
        whole = kv_bytes_for_context(arch, element, args.context)
        per_gpu = kv_bytes_for_context(arch, element, args.context, args.tp)
        payload |= {
            "context_tokens": args.context,
            "kv_bytes_for_context": whole,
            "kv_bytes_for_context_per_gpu": per_gpu,
        }
        lines.append(f"  one {args.context:,}-token sequence  {fmt_bytes(whole)} (per GPU {fmt_bytes(per_gpu)})")
    emit(args, payload, lines)
    return 0
