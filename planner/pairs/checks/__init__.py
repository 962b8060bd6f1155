"""One module per compatibility check, each a function ``(ctx: PairContext) -> Check``.

:data:`CHECKS` lists them in the order a verdict shows them; :func:`planner.pairs.compatibility.check_pair`
runs them over one :class:`~planner.pairs.context.PairContext`.
"""

from collections.abc import Callable

from planner.pairs.checks.engine import engine_check
from planner.pairs.checks.head_target import head_target_check
from planner.pairs.checks.lineage import lineage_check
from planner.pairs.checks.parameter_ratio import parameter_ratio_check
from planner.pairs.checks.tokenizer import tokenizer_check
from planner.pairs.checks.vocab_size import vocab_size_check
from planner.pairs.context import Check, PairContext

#: Every check, in the order a verdict lists them (``head_target`` answers for speculator heads only: None else).
CHECKS: tuple[Callable[[PairContext], Check | None], ...] = (
    tokenizer_check,
    vocab_size_check,
    lineage_check,
    parameter_ratio_check,
    engine_check,
    head_target_check,
)
CHECK_NAMES = ("tokenizer", "vocab_size", "lineage", "parameter_ratio", "engine", "head_target")

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "engine_check",
    "head_target_check",
    "lineage_check",
    "parameter_ratio_check",
    "tokenizer_check",
    "vocab_size_check",
]
