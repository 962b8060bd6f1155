"""``python -m planner speedup``: latency, throughput and the verdict for a draft at a given load."""

from __future__ import annotations

import argparse
import math

from planner.cli.common import add_json_flag, emit, positive_int
from planner.cli.deployment_args import add_deployment_args, add_verification_args, deployment_from_args
from planner.errors import InputError
from planner.speed import (
    DATASET_NAMES,
    DATASETS_HELP,
    DRAWN_DATASETS,
    estimate_speed,
    gate_verdict,
    runnable,
    speed_source,
    workload_for,
)


def _number(text: str) -> float:
    """A finite number (the acceptance model checks its range and names the field)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not allowed: expected a finite number")
    return value


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "speedup", help="speculative decoding speedup, latency, throughput and verdict at a batch size"
    )
    add_deployment_args(parser)
    acceptance = parser.add_mutually_exclusive_group()
    acceptance.add_argument(
        "--alpha",
        type=_number,
        help="per-token acceptance probability α (Leviathan); without any acceptance option the pair's measured, "
        "published or prior α is used and its source printed",
    )
    acceptance.add_argument(
        "--mean-accepted-len",
        "--tau",
        dest="mean_accepted_len",
        type=_number,
        help="tokens per verify step incl. the bonus token (τ: vLLM 'Mean acceptance length', "
        "SGLang 'accept len', NVIDIA 'acceptance rate')",
    )
    acceptance.add_argument(
        "--draft-acceptance-rate",
        "--rho",
        dest="draft_acceptance_rate",
        type=_number,
        help="vLLM V1 'Avg Draft acceptance rate' ρ = (τ-1)/K, as a fraction (0.54, not 54); needs --k",
    )
    add_verification_args(parser)
    parser.add_argument(
        "--task",
        choices=("open_ended", "grounded"),
        help="n-gram lookup only: open-ended prompts (default) or prompts the output copies (summaries, code edits)",
    )
    parser.add_argument("--batch-size", type=positive_int, help="concurrent sequences per replica")
    lengths = parser.add_mutually_exclusive_group()
    lengths.add_argument("--prompt-tokens", type=positive_int, help="prompt length per request")
    lengths.add_argument(
        "--dataset",
        choices=DRAWN_DATASETS,
        help=f"a dataset's lengths ({DATASETS_HELP}): its mean lengths, each step priced over the prompt lengths "
        "it may meet",
    )
    parser.add_argument("--output-tokens", type=positive_int, help="output length per request (or the dataset's mean)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.draft_acceptance_rate is not None and args.k is None:
        raise InputError("--rho", args.draft_acceptance_rate, "--k as well: ρ = (τ − 1) / K depends on K")
    dep = deployment_from_args(args)
    if not dep.is_speculative:
        raise InputError(
            "--draft", None, "a draft model or head (--draft ID or --draft-config PATH), or --method mtp|ngram"
        )
    workload, alpha_source, alpha_detail = workload_for(
        dep,
        task=args.task,
        batch_size=args.batch_size,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        dataset=args.dataset or "fixed",
        k=args.k,
        verification=args.verification,
        tree_topk=args.tree_topk,
        tree_verify_tokens=args.tree_verify_tokens,
        alpha=args.alpha,
        mean_accepted_len=args.mean_accepted_len,
        draft_acceptance_rate=args.draft_acceptance_rate,
    )
    if alpha_source == "entered":
        alpha_detail = "your value, given on the command line"
    check = runnable(dep, workload)
    est = gate_verdict(estimate_speed(dep, workload), check)
    payload = {
        "method": est.method,
        "draft": est.draft,
        "alpha_source": alpha_source,
        "alpha_detail": alpha_detail,
        "verification": est.verification,
        "tree_widths": list(est.tree_widths),
        "verify_tokens": est.verify_tokens,
        "speedup_by_verification": est.speedup_by_verification,
        "alpha": est.alpha,
        "k": est.k,
        "batch_size": est.batch_size,
        "expected_tokens_per_step": est.expected_tokens_per_step,
        "baseline_tpot_s": est.baseline_tpot_s,
        "spec_tpot_s": est.spec_tpot_s,
        "speedup": est.speedup,
        "decode_speedup": est.decode_speedup,
        "optimal_k": est.optimal_k,
        "speedup_at_optimal_k": est.speedup_at_optimal_k,
        "break_even_alpha": est.break_even_alpha,
        "throughput_tok_s": est.throughput_tok_s,
        "baseline_throughput_tok_s": est.baseline_throughput_tok_s,
        "verdict": est.verdict,
        "verdict_k": est.verdict_k,
        "acceptance_convention": est.acceptance_convention,
        "thresholds": est.thresholds,
        "verdict_reason": est.verdict_reason,
        "cannot_run_reasons": check.reasons,
        "fixes": check.fixes,
        "thresholds_source": est.thresholds_source,
        "draft_acceptance_rate": est.draft_acceptance_rate,
        "prompt_tokens": est.prompt_tokens,
        "dataset": est.dataset,
        "output_tokens": est.output_tokens,
        "baseline_ttft_s": est.baseline_ttft_s,
        "spec_ttft_s": est.spec_ttft_s,
        "baseline_e2e_latency_s": est.baseline_e2e_latency_s,
        "spec_e2e_latency_s": est.spec_e2e_latency_s,
        "baseline_tok_s_per_sequence": est.baseline_tok_s_per_sequence,
        "tok_s_per_sequence": est.tok_s_per_sequence,
        "replicas_per_node": est.replicas_per_node,
        "speedup_by_k": est.speedup_by_k,
        "cost_ratio": est.steps.cost_ratio,
        "profile": est.profile,
        "speed_source": speed_source(dep),
        "assumptions": [{"name": n, "value": v, "source": s} for n, v, s in est.assumptions],
        "warnings": est.warnings,
    }
    break_even = "none (no α pays)" if est.break_even_alpha is None else f"{est.break_even_alpha:.3f}"
    draft_tp = "" if dep.resolved_draft_tp is None else f" (draft TP {dep.resolved_draft_tp})"
    shape = (
        f"tree of depth {est.k}, widths {'/'.join(map(str, est.tree_widths))}"
        if est.verification == "tree"
        else f"chain of K {est.k}"
    )
    compared = ", ".join(f"{name} {value:.2f}x" for name, value in est.speedup_by_verification.items())
    lines = [
        f"{est.target} + {est.method} {est.draft} on {dep.gpu_count}x {dep.gpu.id}, TP {dep.tp}{draft_tp}, "
        f"{est.profile}",
        f"  step times: {payload['speed_source']}",
        f"  load: batch {est.batch_size}, {est.prompt_tokens:,} prompt + {est.output_tokens:,} output tokens"
        + ("" if est.dataset == "fixed" else f" on average ({DATASET_NAMES[est.dataset]})"),
        f"  acceptance: α {est.alpha:.3f} ({alpha_source}: {alpha_detail})",
        f"  verification: {shape}, {est.verify_tokens} tokens verified: τ {est.expected_tokens_per_step:.2f} "
        f"tokens/step, vLLM ρ {est.draft_acceptance_rate:.3f}; speedup by verification at K {est.k}: {compared}",
        f"  TPOT {est.baseline_tpot_s * 1e3:.2f} ms -> {est.spec_tpot_s * 1e3:.2f} ms   speedup {est.speedup:.2f}x "
        f"(the decode steps alone {est.decode_speedup:.2f}x; each request's prompt is served too)",
        f"  TTFT {est.baseline_ttft_s * 1e3:.1f} ms -> {est.spec_ttft_s * 1e3:.1f} ms (a new request waits for a step, "
        "then its prompt's step is shared with the other requests' work; the draft prefills the prompt too)",
        f"  throughput per replica {est.baseline_throughput_tok_s:,.0f} -> {est.throughput_tok_s:,.0f} tok/s",
        f"  optimal K {est.optimal_k}: speedup {est.speedup_at_optimal_k:.2f}x; break-even α {break_even}",
        f"  verdict: {est.verdict.upper()} - {est.verdict_reason}",
        "  thresholds: " + ", ".join(f"{k} {v}" for k, v in est.thresholds.items()),
    ]
    lines += [f"  warning: {w}" for w in est.warnings]
    if not check.ok:  # no speed figure or verdict for a workload that cannot run: the reasons and the fixes
        lines = lines[:2] + [f"  cannot run: {reason}" for reason in check.reasons]
        lines += [f"  fix: {fix}" for fix in check.fixes] or ["  fix: none found: no change searched makes it run"]
    emit(args, payload, lines)
    return 0
