"""Draft ↔ target: tokenizers, lineage, sizes, published evidence, the acceptance prior and compatibility."""

from planner.pairs.acceptance import AcceptanceEstimate, acceptance_prior, prior_alpha, refit_priors
from planner.pairs.checks import CHECK_NAMES, CHECKS
from planner.pairs.compatibility import PairVerdict, Verdict, check_pair
from planner.pairs.context import Check, PairContext, Status
from planner.pairs.draft_free import draft_free_acceptance, load_draft_free_acceptance
from planner.pairs.evidence import PairEvidence, load_pair_evidence, published_evidence
from planner.pairs.lineage import RELATIONS, Relation, lineage_relation
from planner.pairs.size_ratio import active_parameter_ratio, param_count, parameter_ratio
from planner.pairs.tokenizers import (
    MAX_TOKENIZER_BYTES,
    TokenizerVocab,
    VocabComparison,
    compare_vocabs,
    load_tokenizer_vocab,
)

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "MAX_TOKENIZER_BYTES",
    "RELATIONS",
    "AcceptanceEstimate",
    "Check",
    "PairContext",
    "PairEvidence",
    "PairVerdict",
    "Relation",
    "Status",
    "TokenizerVocab",
    "Verdict",
    "VocabComparison",
    "acceptance_prior",
    "active_parameter_ratio",
    "check_pair",
    "compare_vocabs",
    "draft_free_acceptance",
    "lineage_relation",
    "load_draft_free_acceptance",
    "load_pair_evidence",
    "load_tokenizer_vocab",
    "param_count",
    "parameter_ratio",
    "prior_alpha",
    "published_evidence",
    "refit_priors",
]
