"""``python -m planner check-pair``: is a draft compatible with a target? The verdict and each check.

Every verdict, ``incompatible`` included, is a result (exit 0); bad input exits 2 with one line. A pair whose
tokenizers differ gets no acceptance rate (``"acceptance": null``): a prior for such a pair would be a number
the engine never sees.
"""

from __future__ import annotations

import argparse

from planner import ENGINES
from planner.catalog import SPECULATOR_KINDS, ModelSpec, mtp_module, resolve_model
from planner.cli.common import add_json_flag, add_model_args, emit, input_of, model_from_args, path_arg, positive_int
from planner.cli.deployment_args import engine_name
from planner.errors import InputError
from planner.pairs import acceptance_prior, check_pair, load_tokenizer_vocab

MARKS = {"pass": "ok  ", "warn": "WARN", "fail": "FAIL"}
NO_ALPHA = "none: the two tokenizers map ids to different tokens, so the target rejects almost every draft token"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check-pair", help="draft/target compatibility: tokenizer, vocabulary, lineage, ratio, engine"
    )
    add_model_args(parser, "target")
    add_model_args(parser, "draft", required=False)
    parser.add_argument(
        "--method",
        choices=SPECULATOR_KINDS,
        help="eagle/eagle3: read --draft-config as a head of that kind; mtp without a draft: the target's own "
        "MTP layers",
    )
    parser.add_argument(
        "--target-tokenizer", metavar="PATH", type=path_arg, help="the target's tokenizer.json or its folder"
    )
    parser.add_argument(
        "--draft-tokenizer", metavar="PATH", type=path_arg, help="the draft's tokenizer.json or its folder"
    )
    parser.add_argument(
        "--engine", default="vllm", type=engine_name, choices=ENGINES, help="serving engine (default vllm)"
    )
    parser.add_argument("--tp", type=input_of("tp"), default=1, help="target tensor parallel size (default 1)")
    parser.add_argument("--draft-tp", type=positive_int, help="draft tensor parallel size (default: --tp)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    target = model_from_args(args, "target")
    draft = _draft(args, target)
    target_vocab = draft_vocab = None
    if args.target_tokenizer is not None:
        target_vocab = load_tokenizer_vocab(args.target_tokenizer, field="target_tokenizer")
    if args.draft_tokenizer is not None:
        draft_vocab = load_tokenizer_vocab(args.draft_tokenizer, field="draft_tokenizer")
    verdict = check_pair(
        target,
        draft,
        engine=args.engine,
        target_tp=args.tp,
        draft_tp=args.draft_tp,
        target_tokenizer=target_vocab,
        draft_tokenizer=draft_vocab,
    )
    tokens_differ = any(c.name == "tokenizer" and c.status == "fail" for c in verdict.checks)
    alpha = None if tokens_differ else acceptance_prior(target, draft)
    payload = {
        "verdict": verdict.verdict,
        "parameter_ratio": verdict.parameter_ratio,
        "target": verdict.target,
        "draft": verdict.draft,
        "engine": verdict.engine,
        "target_tp": verdict.target_tp,
        "draft_tp": verdict.draft_tp,
        "lineage_relation": verdict.lineage_relation,
        "checks": [check.model_dump() for check in verdict.checks],
        "acceptance": alpha.model_dump(include={"alpha", "source", "detail", "basis"}) if alpha else None,
    }
    if verdict.vocab_comparison is not None:
        payload["vocab_comparison"] = verdict.vocab_comparison.model_dump()
    lines = [
        f"{verdict.target} + draft {verdict.draft} on {verdict.engine} (TP {verdict.target_tp}, "
        f"draft TP {verdict.draft_tp}): {verdict.verdict.replace('_', ' ')}",
        f"  parameter ratio {verdict.parameter_ratio:.1f}x, lineage {verdict.lineage_relation.replace('_', ' ')}",
        *(f"  [{MARKS[c.status]}] {c.name}: {c.detail}" for c in verdict.checks),
        f"  α {alpha.alpha:.2f} ({alpha.source}): {alpha.detail}" if alpha else f"  α: {NO_ALPHA}",
    ]
    emit(args, payload, lines)
    return 0


def _draft(args: argparse.Namespace, target: ModelSpec) -> ModelSpec:
    """The draft or head to check: as given (a config read as a ``--method`` head), or the target's MTP module."""
    method = args.method
    if args.draft is not None or args.draft_config is not None:
        return resolve_model(args.draft, args.draft_config, field="draft", speculator_kind=method)
    if method == "mtp":
        module = mtp_module(target)
        if module is None:
            raise InputError("method", "mtp", f"a draft or head ({target.short_name} has no MTP layers)")
        return module
    raise InputError("draft", None, "--draft ID or --draft-config PATH (or --method mtp for the target's MTP layers)")
