"""One module per compatibility check, each a function ``(ctx: PairContext) -> Check``.

:data:`CHECKS` lists them in the order a verdict shows them; :func:`planner.pairs.compatibility.check_pair`
runs them over one :class:`~planner.pairs.context.PairContext`.
"""

from collections.abc import Callable

from planner.pairs.checks.engine import engine_check
from planner.pairs.checks.lineage import lineage_check
from planner.pairs.checks.parameter_ratio import parameter_ratio_check
from planner.pairs.checks.tokenizer import tokenizer_check
from planner.pairs.checks.vocab_size import vocab_size_check
from planner.pairs.context import Check, PairContext

#: Every check, in the order a verdict lists them.
CHECKS: tuple[Callable[[PairContext], Check], ...] = (
    tokenizer_check,
    vocab_size_check,
    lineage_check,
    parameter_ratio_check,
    engine_check,
)
CHECK_NAMES = ("tokenizer", "vocab_size", "lineage", "parameter_ratio", "engine")

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "engine_check",
    "lineage_check",
    "parameter_ratio_check",
    "tokenizer_check",
    "vocab_size_check",
]
