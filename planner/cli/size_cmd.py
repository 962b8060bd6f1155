"""``python -m planner size``: the per-GPU memory plan of a target (+ draft) on a node."""

from __future__ import annotations

import argparse

from planner.catalog import HEAD_WORDS, speculator_params
from planner.cli.common import add_json_flag, emit, export_path, write_report
from planner.cli.deployment_args import add_deployment_args, deployment_from_args
from planner.memory import COMPONENT_LABELS, plan_memory
from planner.reports import sizing_report
from planner.units import fmt_gib


def register(subparsers) -> None:
    parser = subparsers.add_parser("size", help="per-GPU memory plan, KV tokens and concurrency")
    add_deployment_args(parser)
    parser.add_argument(
        "--export", metavar="FILE", type=export_path, help="also write a report: .json, .html, .md, .xlsx or .pdf"
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    dep = deployment_from_args(args)
    plan = plan_memory(dep)
    if args.export:
        write_report(sizing_report(dep, plan), args.export)
    payload = {
        "per_gpu": plan.per_gpu.model_dump(),
        "kv_bytes_per_token_per_gpu": plan.kv_bytes_per_token_per_gpu,
        "kv_cache_tokens": plan.kv_cache_tokens,
        "max_concurrency": plan.max_concurrency,
        "draft_kv_share_frac": plan.draft_kv_share_frac,
        "fits": plan.fits,
        "starts": plan.starts,
        "start_problems": plan.start_problems,
        "problems": plan.problems,
        "suggestions": [s.model_dump() for s in plan.suggestions],
        "target_kv_bytes_per_token_per_gpu": plan.target_kv_bytes_per_token_per_gpu,
        "draft_kv_bytes_per_token_per_gpu": plan.draft_kv_bytes_per_token_per_gpu,
        "kv_cache_tokens_without_draft": plan.kv_cache_tokens_without_draft,
        "max_concurrency_without_draft": plan.max_concurrency_without_draft,
        "lookahead_slots_per_seq": plan.lookahead_slots_per_seq,
        "max_model_len": plan.max_model_len,
        "num_blocks": plan.num_blocks,
        "block_size": plan.block_size,
        "engine_profile": plan.engine_profile,
        "limits": plan.limits.model_dump(),
        "stages": [s.model_dump() for s in plan.stages],
        "assumptions": plan.assumptions,
        "speculative_method": dep.speculative_method,
        "speculator": _speculator_payload(dep, plan),
    }
    gpu = plan.per_gpu
    draft = _speculator_title(dep)
    lines = [
        f"{dep.target.id}{draft} on {dep.gpu_count}x {dep.gpu.id}, TP {dep.tp} PP {dep.pp}, {plan.engine_profile}",
        f"  verdict: {'FITS' if plan.fits else 'DOES NOT FIT'}; "
        f"{'STARTS' if plan.starts else 'WOULD NOT START: ' + '; '.join(plan.start_problems)}",
        f"  per GPU (GiB):  total {fmt_gib(gpu.total_bytes, 2)}, "
        f"engine memory limit {fmt_gib(gpu.memory_limit_bytes, 2)}",
        *(f"    {name.removesuffix('_bytes'):<26}{fmt_gib(getattr(gpu, name), 2):>10}" for name in COMPONENT_LABELS),
        *(
            f"    {label:<26}{fmt_gib(value, 2):>10}"
            for label, value in (
                ("short of any KV cache by", gpu.kv_shortfall_bytes),
                ("over-committed by", gpu.over_commit_bytes),
            )
            if value
        ),
        f"  KV per token per GPU: {plan.kv_bytes_per_token_per_gpu:,} B "
        f"(target {plan.target_kv_bytes_per_token_per_gpu:,} + draft {plan.draft_kv_bytes_per_token_per_gpu:,})",
        f"  KV cache: {plan.kv_cache_tokens:,} tokens per replica; max concurrency {plan.max_concurrency:g} "
        f"at {plan.max_model_len:,} tokens",
    ]
    lines += _speculator_lines(dep, plan)
    if dep.is_speculative:
        lines.append(
            f"  the speculator takes {plan.draft_kv_share_frac:.1%} of the KV pool: without it "
            f"{plan.kv_cache_tokens_without_draft:,} tokens, concurrency {plan.max_concurrency_without_draft:g}"
        )
    lines += [f"  problem: {p}" for p in dict.fromkeys(plan.problems)]
    lines += [f"  fix: {s.change} -> {s.detail}" for s in plan.suggestions[:6]]
    if not (plan.fits and plan.starts) and not plan.suggestions:
        lines.append("  fix: none found: no change searched makes it fit and start")
    emit(args, payload, lines)
    return 0


def _speculator_title(dep) -> str:
    spec, method = dep.speculator, dep.speculative_method
    if method is None:
        return ""
    if spec is None:
        return " + n-gram speculation (no model)"
    if spec.is_head:
        return f" + {HEAD_WORDS[method].split(' ', 1)[1]} {spec.id} (TP {dep.resolved_draft_tp})"
    return f" + draft {spec.id} (TP {dep.resolved_draft_tp})"


def _speculator_payload(dep, plan) -> dict | None:
    spec = dep.speculator
    if spec is None:
        return None
    params = speculator_params(spec)
    block = spec.speculator
    return {
        "id": spec.id,
        "kind": dep.speculative_method,
        "params": params.total_params,
        "index_buffers": params.persistent_buffers,
        "components": params.components,
        "weights_bytes_per_gpu": plan.per_gpu.draft_weights_bytes,
        "weight_format": dep.draft_format.id,
        "shares_embeddings": block.shares_embeddings if block else False,
        "shares_lm_head": block.shares_lm_head if block else False,
        "kv_bytes_per_token_per_gpu": plan.draft_kv_bytes_per_token_per_gpu,
        "layers": spec.architecture.num_layers,
    }


def _speculator_lines(dep, plan) -> list[str]:
    info = _speculator_payload(dep, plan)
    if info is None:
        return []
    shared = [
        name for name, on in (("embedding", info["shares_embeddings"]), ("LM head", info["shares_lm_head"])) if on
    ]
    parts = ", ".join(f"{k} {v:,}" for k, v in info["components"].items() if v)
    return [
        f"  speculator ({info['kind']}): {info['params']:,} parameters as the engine loads them ({parts})"
        + (f" + {info['index_buffers']:,} index/buffer elements" if info["index_buffers"] else "")
        + (f"; {' and '.join(shared)} shared with the target, counted once" if shared else ""),
        f"    weights {fmt_gib(info['weights_bytes_per_gpu'], 2)} per GPU in {info['weight_format']}; "
        f"{info['layers']} layer(s) of KV, {info['kv_bytes_per_token_per_gpu']:,} B per token per GPU",
    ]
