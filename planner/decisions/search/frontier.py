"""Pareto frontiers of a search, the steps along them, and the cheapest point that meets every objective.

Two frontiers, over the points that fit, would start and meet every objective in their simulation:

- ``throughput``: output tokens/s per GPU against output tokens/s per user (both higher is better);
- ``cost``: cost per million output tokens against TPOT at the percentile (both lower is better).

A point is on a frontier when no other point is at least as good on both axes and better on one.

>>> pareto([(1.0, 5.0), (2.0, 4.0), (1.5, 3.0), (3.0, 1.0)], higher_x=True, higher_y=True)
[0, 1, 3]
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from planner.decisions.search.points import SearchPoint


def pareto(values: Sequence[tuple[float, float]], *, higher_x: bool, higher_y: bool) -> list[int]:
    """Indices (ascending) of the non-dominated ``(x, y)`` pairs; of exact duplicates the first is kept."""
    sx, sy = (1 if higher_x else -1), (1 if higher_y else -1)
    order = sorted(range(len(values)), key=lambda i: (-sx * values[i][0], -sy * values[i][1], i))
    kept, best = [], float("-inf")
    for i in order:
        y = sy * values[i][1]
        if y > best:
            kept.append(i)
            best = y
    return sorted(kept)


class Dominance:
    """Answers "is (x, y) dominated by this frontier?" in O(log n) (both axes oriented higher-is-better)."""

    def __init__(self, frontier: Sequence[tuple[float, float]]) -> None:
        ordered = sorted(frontier)
        self.xs = [x for x, _ in ordered]
        # best y among frontier points with x >= xs[i]
        self.best_y = [0.0] * len(ordered)
        best = float("-inf")
        for i in range(len(ordered) - 1, -1, -1):
            best = max(best, ordered[i][1])
            self.best_y[i] = best

    def dominated(self, x: float, y: float) -> bool:
        """True when some frontier point is at least as good on both axes and strictly better on one."""
        i = bisect_left(self.xs, x)
        if i >= len(self.xs):
            return False
        if self.best_y[i] > y:
            return True
        # equal y: dominated only by a point with strictly larger x
        j = bisect_left(self.xs, x + abs(x) * 1e-12 + 1e-300)
        return j < len(self.xs) and self.best_y[j] >= y

    def dominated_many(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:meth:`dominated` of every ``(x[i], y[i])`` at once (the same comparisons, elementwise)."""
        n = len(self.xs)
        if n == 0:
            return np.zeros(len(x), dtype=bool)
        xs, best = np.asarray(self.xs, dtype=float), np.asarray(self.best_y, dtype=float)
        i = np.searchsorted(xs, x, side="left")
        j = np.searchsorted(xs, x + np.abs(x) * 1e-12 + 1e-300, side="left")
        above = best[np.minimum(i, n - 1)] > y
        level = (j < n) & (best[np.minimum(j, n - 1)] >= y)
        return (i < n) & (above | level)


def throughput_xy(p: SearchPoint) -> tuple[float, float]:
    return (p.output_tok_s_per_user or 0.0, p.output_tok_s_per_gpu or 0.0)


def cost_xy(p: SearchPoint) -> tuple[float, float]:
    """Cost plane oriented higher-is-better: (−TPOT, −$/M)."""
    return (-(p.tpot_s or 0.0), -(p.usd_per_million_output_tokens or 0.0))


def frontier_points(points: Sequence[SearchPoint], plane: str) -> list[SearchPoint]:
    """The points of ``points`` on the ``plane`` frontier (``throughput`` or ``cost``; priced points only)."""
    if plane == "cost":
        points = [p for p in points if p.usd_per_million_output_tokens is not None]
    xy = [throughput_xy(p) if plane == "throughput" else cost_xy(p) for p in points]
    return [points[i] for i in pareto(xy, higher_x=True, higher_y=True)]


class FrontierStep(BaseModel):
    """What one step down the TPOT axis of the cost frontier costs, against the cheapest frontier point."""

    from_label: str
    to_label: str
    tpot_from_s: float
    tpot_to_s: float
    gpus_from: int
    gpus_to: int
    gpus_ratio: float
    cost_ratio: float | None
    sentence: str


def frontier_steps(cost_frontier: Sequence[SearchPoint], percentile: float) -> list[FrontierStep]:
    """Each point of the cost frontier against the cheapest one: "lowering p99 TPOT from 41 ms to 20 ms (2.0×
    lower) costs 2.1× the GPUs (16 → 34) and 2.3× the cost per million tokens"."""
    ordered = sorted(cost_frontier, key=lambda p: (-(p.tpot_s or 0.0), p.usd_per_million_output_tokens or 0.0))
    if not ordered:
        return []
    base = ordered[0]
    steps = []
    for p in ordered[1:]:
        gpus_ratio = p.gpus / base.gpus if base.gpus else float("nan")
        cost_ratio = (
            p.usd_per_million_output_tokens / base.usd_per_million_output_tokens
            if p.usd_per_million_output_tokens and base.usd_per_million_output_tokens
            else None
        )
        sentence = (
            f"lowering p{percentile:g} TPOT from {base.tpot_s * 1e3:,.1f} ms to {p.tpot_s * 1e3:,.1f} ms "
            f"({base.tpot_s / p.tpot_s:.1f}× lower) costs {gpus_ratio:.1f}× the GPUs ({base.gpus:,} → {p.gpus:,})"
            + (f" and {cost_ratio:.1f}× the cost per million tokens" if cost_ratio is not None else "")
            + f": {p.label}"
        )
        steps.append(
            FrontierStep(
                from_label=base.label,
                to_label=p.label,
                tpot_from_s=base.tpot_s,
                tpot_to_s=p.tpot_s,
                gpus_from=base.gpus,
                gpus_to=p.gpus,
                gpus_ratio=gpus_ratio,
                cost_ratio=cost_ratio,
                sentence=sentence,
            )
        )
    return steps


def cheapest_key(p: SearchPoint) -> tuple:
    """Cost per million tokens, then GPUs, then TPOT (unpriced points after priced ones), then the index."""
    cost = p.usd_per_million_output_tokens
    return (cost is None, cost or 0.0, p.gpus or 0, p.tpot_s or 0.0, p.index)


def cheapest(points: Sequence[SearchPoint]) -> SearchPoint | None:
    """The cheapest point at its figures (:func:`cheapest_key`)."""
    return min(points, key=cheapest_key, default=None)
