"""Exact acceptance statistics from per-step accepted counts, and the per-task speculation verdict.

A speculative step drafts ``K`` tokens; the target accepts a prefix of ``n`` of them
(0 <= n <= K) and adds one token of its own. From the list of ``n`` per step (docs/acceptance.md; the
same counters as vLLM V1's ``spec_decode`` metrics):

* τ (mean accepted length) = 1 + Σn / steps (bonus token included);
* acceptance at draft position i = #(n > i) / steps (vLLM's per-position rate, unconditional);
* α = acceptance at position 0: the probability that the first draft token is accepted, the
  reference's direct estimate of Leviathan's α; ``alpha_from_tau`` solves τ(α, K) = τ instead;
* ρ (vLLM V1 "draft acceptance rate") = Σn / (K · steps). It is not α.

>>> stats = acceptance_stats([3, 0, 1, 3], k=3)
>>> stats.alpha, stats.mean_accepted_len, stats.acceptance_by_position
(0.75, 2.75, [0.75, 0.5, 0.5])
>>> stats.conditional_acceptance_by_position
[0.75, 0.6666666666666666, 1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from planner.acceptance_math import alpha_from_tau, check_k
from planner.errors import InputError
from planner.speed.policy import speculation_rules


class AcceptanceStats(BaseModel):
    """What the target accepted over ``steps`` verification steps of ``k`` drafted tokens."""

    k: int
    steps: int
    drafted_tokens: int
    accepted_tokens: int
    alpha: float | None
    alpha_from_tau: float | None
    mean_accepted_len: float | None
    draft_acceptance_rate: float | None
    acceptance_by_position: list[float]
    #: P(position i accepted | positions before it accepted): where the i.i.d. model of α fails.
    conditional_acceptance_by_position: list[float | None]
    #: How many steps accepted exactly 0, 1, ..., K tokens.
    accepted_count_histogram: list[int]


def acceptance_stats(accepted_per_step: Iterable[int], k: int) -> AcceptanceStats:
    """Statistics of one run (or one task) from the accepted count of every step."""
    check_k(k)
    counts = list(accepted_per_step)
    for n in counts:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= k:
            raise InputError("accepted_per_step", n, f"an accepted count in [0, K] = [0, {k}]")
    steps = len(counts)
    histogram = [0] * (k + 1)
    for n in counts:
        histogram[n] += 1
    reached = [sum(histogram[i:]) for i in range(k + 1)]  # steps whose accepted prefix is >= i
    by_position = [reached[i + 1] / steps for i in range(k)] if steps else []
    conditional = [reached[i + 1] / reached[i] if reached[i] else None for i in range(k)] if steps else []
    accepted = sum(counts)
    tau = 1 + accepted / steps if steps else None
    return AcceptanceStats(
        k=k,
        steps=steps,
        drafted_tokens=k * steps,
        accepted_tokens=accepted,
        alpha=by_position[0] if steps else None,
        alpha_from_tau=alpha_from_tau(tau, k) if tau is not None else None,
        mean_accepted_len=tau,
        draft_acceptance_rate=accepted / (k * steps) if steps else None,
        acceptance_by_position=by_position,
        conditional_acceptance_by_position=conditional,
        accepted_count_histogram=histogram,
    )


class TaskVerdict(BaseModel):
    """The planner's default policy applied to one task's measured α (thresholds from data/speculation_rules.json)."""

    task: str
    prompts: int
    steps: int
    alpha: float | None
    mean_accepted_len: float | None
    verdict: str
    reason: str
    #: False for random weights: their acceptance says nothing about a real pair.
    meaningful: bool
    disable_below_alpha: float
    recommend_min_alpha: float
    thresholds_source: str


def task_verdict(task: str, stats: AcceptanceStats, prompts: int, *, meaningful: bool = True) -> TaskVerdict:
    """Below ``disable_below_alpha`` (55%) disable, at ``recommend_min_alpha`` (65%) or above recommend, else enable.

    >>> task_verdict("code", acceptance_stats([3, 3, 2, 0], 3), prompts=1).verdict
    'recommend'
    >>> task_verdict("chat", acceptance_stats([0, 1, 0, 2], 3), prompts=1).verdict
    'disable'
    """
    rules = speculation_rules().advisory  # the acceptance levels; the speed verdict itself needs the step model
    low, high = rules.warn_below_alpha, rules.aim_above_alpha
    alpha = stats.alpha
    if alpha is None:
        verdict, reason = "disable", "no speculative step was measured"
    elif alpha < low:
        verdict, reason = "disable", f"α = {alpha:.1%} is below {low:.0%}: speculation costs more than it saves here"
    elif alpha >= high:
        verdict, reason = "recommend", f"α = {alpha:.1%} is at least {high:.0%}"
    else:
        verdict, reason = "enable", f"α = {alpha:.1%} is between {low:.0%} and {high:.0%}: enable, watch the speedup"
    if not meaningful:
        reason += " (random weights: acceptance is not meaningful)"
    return TaskVerdict(
        task=task,
        prompts=prompts,
        steps=stats.steps,
        alpha=alpha,
        mean_accepted_len=stats.mean_accepted_len,
        verdict=verdict,
        reason=reason,
        meaningful=meaningful,
        disable_below_alpha=low,
        recommend_min_alpha=high,
        thresholds_source=rules.source,
    )


def verdicts_by_task(
    counts_by_task: Mapping[str, list[int]], prompts_by_task: Mapping[str, int], k: int, *, meaningful: bool = True
) -> dict[str, TaskVerdict]:
    """One verdict per task, from the accepted counts of that task's prompts."""
    return {
        task: task_verdict(task, acceptance_stats(counts, k), prompts_by_task.get(task, 0), meaningful=meaningful)
        for task, counts in sorted(counts_by_task.items())
    }
