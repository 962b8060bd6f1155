"""The acceptance at which the speed model predicts a given speedup (to read α out of a published speedup).

Speedup rises monotonically with α at fixed K and load (τ(α, K) does; the step's cost does not depend on α, and the
prompts a step prefills rise with the tokens it serves), so bisection on [0, 1] finds it; ``None`` when even α = 1
falls short or α = 0 already exceeds it. A published speedup compares either the requests served (end-to-end
latency or throughput: ``metric="served"``, :attr:`SpeedEstimate.speedup`) or the time per output token
(``metric="tpot"``: a TPOT ratio leaves each request's own prefill out).

>>> from planner.catalog.lookup import get_gpu, get_model
>>> from planner.deployment import Deployment
>>> dep = Deployment.build(target=get_model("Llama-3.1-8B"), gpu=get_gpu("h100-sxm-80gb")).with_method("ngram")
>>> alpha = alpha_for_speedup(dep, 1.5, k=4, batch_size=1)
>>> from planner.speed.workload import SpeedWorkload
>>> round(estimate_speed(dep, SpeedWorkload.build(alpha=alpha, k=4, batch_size=1)).speedup, 3)
1.5
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.pairs.draft_free import SpeedupMetric
from planner.speed.estimate import estimate_speed
from planner.speed.workload import SpeedWorkload

_ITERATIONS = 40


def alpha_for_speedup(
    deployment: Deployment, speedup: float, metric: SpeedupMetric = "served", **workload
) -> float | None:
    """α at which :func:`estimate_speed` gives ``speedup`` (of ``metric``) under ``workload`` (SpeedWorkload fields
    but α)."""

    def predicted(alpha: float) -> float:
        est = estimate_speed(deployment, SpeedWorkload.build(alpha=alpha, **workload))
        return est.speedup if metric == "served" else est.baseline_tpot_s / est.spec_tpot_s

    lo, hi = 0.0, 1.0
    if not predicted(lo) <= speedup <= predicted(hi):
        return None
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if predicted(mid) < speedup else (lo, mid)
    return (lo + hi) / 2
