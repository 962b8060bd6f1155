"""A replica run stopped as soon as it is certain to miss a latency objective.

A fleet search often needs to know only that a fleet misses: one run at the largest fleet that could still beat a
cheaper option already quoted settles whether this option can (:func:`planner.decisions.fleet.size_option`). An
objective holds at a percentile of every request's TTFT (or TPOT): of ``N`` values, the linear-interpolated p-th
percentile (numpy's default, :func:`planner.speed.serving_metrics.percentile`) is at least the value of rank
``floor((N − 1) · p / 100)``, so once ``N − floor((N − 1) · p / 100)`` requests are over the limit the percentile
is over it too, whatever the others do. The run stops there (:class:`CertainMiss`): its answer, "misses", is the
whole run's, without the rest of its simulation.

>>> counts = MissCounts(ObjectiveWatch(ttft_limit_s=2.0, tpot_limit_s=None, percentile=99.0), 400, 400)
>>> counts.ttft_needed  # p99 of 400 values: the fifth-worst and above
5
>>> for ttft_s in (2.5, 1.0, 3.0, 2.1, 9.0):
...     counts.ttft(ttft_s)
>>> try:
...     counts.ttft(2.2)
... except CertainMiss as miss:
...     print(miss)
p99 TTFT over 2,000 ms: 5 of 400 requests already are
"""

from __future__ import annotations

import math
from dataclasses import dataclass


class CertainMiss(Exception):  # noqa: N818 (a signal that ends a run, never shown to a user)
    """The run has as many requests over a limit as its percentile allows: it misses that objective."""


@dataclass(frozen=True)
class ObjectiveWatch:
    """The objectives a run is watched for (None: none), at ``percentile``."""

    ttft_limit_s: float | None
    tpot_limit_s: float | None
    percentile: float

    def over_needed(self, values: int) -> int:
        """How many of ``values`` over a limit put the percentile over it (the rank is computed as
        :func:`planner.speed.serving_metrics.percentile` computes it)."""
        return values - math.floor((values - 1) * self.percentile / 100)


class MissCounts:
    """One run's requests over each limit so far; :class:`CertainMiss` once one objective is certainly missed.
    ``requests``: the run's requests (each has a TTFT); ``with_tpot``: those of more than one output token."""

    __slots__ = ("requests", "tpot_needed", "tpot_over", "ttft_needed", "ttft_over", "watch", "with_tpot")

    def __init__(self, watch: ObjectiveWatch, requests: int, with_tpot: int) -> None:
        self.watch, self.requests, self.with_tpot = watch, requests, with_tpot
        self.ttft_needed = watch.over_needed(requests) if watch.ttft_limit_s is not None else math.inf
        self.tpot_needed = watch.over_needed(with_tpot) if watch.tpot_limit_s is not None and with_tpot else math.inf
        self.ttft_over = self.tpot_over = 0

    def ttft(self, value_s: float) -> None:
        """A request's TTFT, as the run's metrics will compute it."""
        if self.watch.ttft_limit_s is not None and value_s > self.watch.ttft_limit_s:
            self.ttft_over += 1
            if self.ttft_over >= self.ttft_needed:
                raise CertainMiss(self._message("TTFT", self.watch.ttft_limit_s, self.ttft_over, self.requests))

    def tpot(self, value_s: float) -> None:
        """A finished request's TPOT (over its output tokens after the first), as the run's metrics compute it."""
        if self.watch.tpot_limit_s is not None and value_s > self.watch.tpot_limit_s:
            self.tpot_over += 1
            if self.tpot_over >= self.tpot_needed:
                raise CertainMiss(self._message("TPOT", self.watch.tpot_limit_s, self.tpot_over, self.with_tpot))

    def _message(self, what: str, limit_s: float, over: int, values: int) -> str:
        pct = f"p{self.watch.percentile:g}"
        return f"{pct} {what} over {limit_s * 1e3:,.0f} ms: {over} of {values} requests already are"
