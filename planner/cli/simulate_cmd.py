"""``python -m planner simulate``: one replica serving a workload, step by step, with and without the draft.

Prints throughput, TTFT, TPOT and end-to-end latency (mean, p50, p99), the mean batch and what limits
the replica; ``plain`` is the same workload without the draft. With no acceptance given, the pair's
measured, published or prior α is used and reported as ``alpha_source``.
"""

from __future__ import annotations

import argparse
from typing import Annotated

from pydantic import Field

from planner import InputError
from planner.acceptance_math import alpha_from_draft_acceptance_rate, alpha_from_tau, check_alpha
from planner.cli.common import add_json_flag, emit, of_kind, positive_float, positive_int, seed
from planner.cli.deployment_args import add_deployment_args, add_verification_args, deployment_from_args
from planner.defaults import SERVING_OUTPUT_TOKENS, SERVING_PROMPT_TOKENS
from planner.input_types import Probability, RequestCount, RequestRate
from planner.speed import (
    DATASETS_HELP,
    DRAWN_DATASETS,
    ServingMetrics,
    ServingWorkload,
    SimulationResult,
    deployment_acceptance,
    simulate,
    speed_source,
)
from planner.units import fmt_counted

#: τ is at least 1 (the target's own token) and at most K + 1 (checked against K by the core).
_TAU = of_kind(Annotated[float, Field(ge=1, le=65, allow_inf_nan=False)], "mean accepted length")
_PROBABILITY = of_kind(Probability, "probability")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate", help="simulate one replica serving a workload (continuous batching), with and without a draft"
    )
    add_deployment_args(parser)
    acceptance = parser.add_mutually_exclusive_group()
    acceptance.add_argument("--alpha", type=_PROBABILITY, help="per-token acceptance α (default: the pair's)")
    acceptance.add_argument("--mean-accepted-len", "--tau", dest="mean_accepted_len", type=_TAU, help="τ")
    acceptance.add_argument(
        "--draft-acceptance-rate",
        "--rho",
        dest="draft_acceptance_rate",
        type=_PROBABILITY,
        help="vLLM V1 ρ (needs --k)",
    )
    arrivals = parser.add_mutually_exclusive_group(required=True)
    arrivals.add_argument(
        "--request-rate", type=of_kind(RequestRate, "request rate"), help="Poisson arrivals, requests per second"
    )
    arrivals.add_argument(
        "--concurrency", type=of_kind(RequestCount, "concurrency"), help="requests in flight (closed loop)"
    )
    arrivals.add_argument("--offline", action="store_true", help="every request at once")
    lengths = parser.add_mutually_exclusive_group()
    lengths.add_argument(
        "--prompt-tokens", type=positive_int, help=f"prompt length of every request (default {SERVING_PROMPT_TOKENS:,})"
    )
    lengths.add_argument("--dataset", choices=DRAWN_DATASETS, help=f"a dataset's lengths ({DATASETS_HELP})")
    parser.add_argument(
        "--output-tokens",
        type=positive_int,
        help=f"output length (default {SERVING_OUTPUT_TOKENS:,}, or the dataset's)",
    )
    parser.add_argument(
        "--output-mean-tokens",
        type=positive_float,
        help="with --dataset: its answers scaled to this mean length (default the dataset's stated mean)",
    )
    add_verification_args(parser)
    parser.add_argument("--num-prompts", type=of_kind(RequestCount, "prompts"), default=1000)
    parser.add_argument("--seed", type=seed, default=0)
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def _acceptance(args: argparse.Namespace, dep) -> tuple[float | None, str]:
    if not dep.is_speculative:
        return None, "no draft"
    k = dep.num_speculative_tokens
    if args.alpha is not None:
        return check_alpha(args.alpha), "entered (α)"
    if args.mean_accepted_len is not None:
        return alpha_from_tau(args.mean_accepted_len, k), f"entered (τ = {args.mean_accepted_len:g} at K = {k})"
    if args.draft_acceptance_rate is not None:
        rho = args.draft_acceptance_rate
        return alpha_from_draft_acceptance_rate(rho, k), f"entered (ρ = {rho:g} at K = {k})"
    estimate = deployment_acceptance(dep)
    return estimate.alpha, estimate.source


def _metrics(m: ServingMetrics) -> dict:
    return {
        "requests_per_s": m.requests_per_s,
        "output_tokens_per_s": m.output_tokens_per_s,
        "total_tokens_per_s": m.total_tokens_per_s,
        "steady_output_tokens_per_s": m.steady_output_tokens_per_s,
        "steady_window_s": list(m.steady_window_s),
        "steady": m.steady,
        "tokens_per_step": m.tokens_per_step,
        "padded_steps": m.padded_steps,
        "mean_padding_frac": m.mean_padding_frac,
        "ttft_s": m.ttft_s.model_dump(),
        "tpot_s": m.tpot_s.model_dump(),
        "steady_ttft_s": m.steady_ttft_s.model_dump() if m.steady_ttft_s else None,
        "steady_tpot_s": m.steady_tpot_s.model_dump() if m.steady_tpot_s else None,
        "e2e_latency_s": m.e2e_latency_s.model_dump(),
        "queueing_delay_s": m.queueing_delay_s.model_dump(),
        "mean_batch_size": m.mean_batch_size,
        "preemptions": m.preemptions,
        "limited_by": m.limited_by,
    }


def payload(result: SimulationResult, alpha_source: str, engine: str) -> dict:
    chosen = result.chosen
    return {
        **_metrics(chosen),
        "plain": _metrics(result.plain),
        "speedup": result.speedup,
        "speedup_definition": result.speedup_definition,
        "replicas": 1,
        "gpus": result.gpus,
        "limited_by": chosen.limited_by,
        "alpha": result.alpha,
        "alpha_source": alpha_source,
        "k": result.k,
        "verification": result.verification,
        "tree_widths": list(result.speculative.tree_widths) if result.speculative else [],
        "engine": engine,
        "workload": result.workload,
        "max_num_seqs": chosen.limits.max_num_seqs,
        "max_num_batched_tokens": chosen.limits.max_num_batched_tokens,
        "kv_cache_tokens": chosen.limits.kv_cache_tokens,
    }


def run(args: argparse.Namespace) -> int:
    if args.draft_acceptance_rate is not None and args.k is None:
        raise InputError("--rho", args.draft_acceptance_rate, "--k as well: ρ = (τ − 1) / K depends on K")
    dep = deployment_from_args(args)
    workload = ServingWorkload.build(
        request_rate=args.request_rate,
        concurrency=args.concurrency,
        offline=args.offline,
        dataset=args.dataset or "fixed",
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        output_mean_tokens=args.output_mean_tokens,
        num_prompts=args.num_prompts,
        seed=args.seed,
    )
    alpha, source = _acceptance(args, dep)
    result = simulate(
        dep,
        workload,
        alpha=alpha,
        k=dep.num_speculative_tokens if dep.is_speculative else None,
        verification=args.verification,
        tree_topk=args.tree_topk,
        tree_verify_tokens=args.tree_verify_tokens,
    )
    out = payload(result, source, dep.engine)
    out["speed_source"] = speed_source(dep)
    lines = [f"{result.deployment} on {fmt_counted(result.gpus, 'GPU')} of {dep.gpu.id} (TP {dep.tp}), {dep.engine}"]
    lines.append(f"  step times: {out['speed_source']}")
    lines.append(f"  workload: {result.workload}")
    arms = [("plain", result.plain)] + ([(dep.speculative_method, result.speculative)] if result.speculative else [])
    for name, m in arms:
        lines.append(
            f"  {name:<5}: {m.requests_per_s:,.2f} req/s, {m.output_tokens_per_s:,.0f} output tok/s; "
            f"TTFT mean {m.ttft_s.mean * 1e3:,.0f} / p99 {m.ttft_s.p99 * 1e3:,.0f} ms; "
            f"TPOT mean {m.tpot_s.mean * 1e3:,.1f} / p99 {m.tpot_s.p99 * 1e3:,.1f} ms; "
            f"batch {m.mean_batch_size:,.1f}; limited by {m.limited_by}"
        )
        if m.padded_steps:
            lines.append(
                f"         {m.padded_steps:,} of {m.steps:,} steps padded to a captured CUDA-graph size "
                f"(mean {m.mean_padding_frac:.0%} padding)"
            )
    if result.speculative:
        lines.append(
            f"  α {result.alpha:.3f} ({source}), K {result.k} ({result.verification}): speedup {result.speedup:.2f}x "
            f"({result.speedup_definition})"
        )
    emit(args, out, lines)
    return 0
