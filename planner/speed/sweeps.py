"""Speed against acceptance, draft length and batch size: the grids and sweeps the charts draw.

Each point is :class:`planner.speed.estimate.BatchSteps` at that batch size (the same step model as
the estimate), so the charts and the estimate agree by construction.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
...                          draft=get_model("Llama-3.2-1B"))
>>> sweep = batch_sweep(dep, SpeedWorkload.build(alpha=0.8, k=3), [1, 16, 128])
>>> sweep.points[0].speedup > sweep.points[-1].speedup
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from planner import acceptance_math as spec
from planner.deployment import Deployment
from planner.errors import InputError
from planner.speed.engine_step import EngineStep
from planner.speed.estimate import (
    BatchSteps,
    SpeedEstimate,
    estimate_speed,
    running_caps,
    search_ks,
)
from planner.speed.policy import speculation_rules
from planner.speed.profiles import SpeedProfile
from planner.speed.runnable import Runnability, gate_verdict, runnable
from planner.speed.workload import SpeedWorkload


class SpeedGrid(BaseModel):
    """Speedup over α × K at one batch size (rows: α, columns: K)."""

    batch_size: int
    alphas: list[float]
    ks: list[int]
    speedup: list[list[float]]


class BatchPoint(BaseModel):
    batch_size: int
    speedup: float
    optimal_k: int
    speedup_at_optimal_k: float
    throughput_tok_s: float
    baseline_throughput_tok_s: float
    break_even_alpha: float | None
    baseline_tpot_s: float
    spec_tpot_s: float


class BatchSweep(BaseModel):
    """Speed against batch size at the workload's α and K."""

    alpha: float
    k: int
    points: list[BatchPoint]
    #: The first batch size at which speculation stops paying (speedup ≤ 1 at the chosen K).
    crossover_batch: int | None = Field(default=None)


def speedup_grid(
    deployment: Deployment,
    workload: SpeedWorkload,
    alphas: Sequence[float],
    ks: Sequence[int],
    profile: SpeedProfile | None = None,
) -> SpeedGrid:
    """Speedup for every α in ``alphas`` and K in ``ks`` at the workload's batch and lengths."""
    for a in alphas:
        spec.check_alpha(a)
    for kk in ks:
        spec.check_k(kk)
    engine = EngineStep(deployment, profile, need_draft=True)
    caps = running_caps(deployment)
    model = BatchSteps(engine, workload.batch_size, workload.request_lengths(), caps)
    return SpeedGrid(
        batch_size=workload.batch_size,
        alphas=list(alphas),
        ks=list(ks),
        speedup=[[model.speedup(a, kk) for kk in ks] for a in alphas],
    )


def batch_sweep(
    deployment: Deployment,
    workload: SpeedWorkload,
    batch_sizes: Sequence[int],
    profile: SpeedProfile | None = None,
) -> BatchSweep:
    """Speedup, throughput and break-even α at each batch size (the workload's α and K)."""
    engine = EngineStep(deployment, profile, need_draft=True)
    k = workload.resolved_k(deployment)
    alpha = workload.resolved_alpha(k)
    shape = workload.draft_shape(deployment.speculative_method, k)
    allowed = search_ks(deployment, k)
    caps = running_caps(deployment)
    lengths = workload.request_lengths()
    points = []
    for batch in sorted(set(batch_sizes)):
        if batch < 1:
            raise InputError("batch_size", batch, "an integer >= 1")
        model = BatchSteps(engine, batch, lengths, caps)
        by_k = model.speedup_by_depth(workload, deployment.speculative_method, alpha, allowed)
        best_k = spec.optimal_of(by_k)
        served = model.served(shape, alpha)
        points.append(
            BatchPoint(
                batch_size=batch,
                speedup=model.speedup_served(served),
                optimal_k=best_k,
                speedup_at_optimal_k=by_k[best_k],
                throughput_tok_s=served.throughput_tok_s,
                baseline_throughput_tok_s=model.served_plain.throughput_tok_s,
                break_even_alpha=model.break_even_alpha(allowed),
                baseline_tpot_s=model.baseline_tpot_s,
                spec_tpot_s=model.spec_tpot_s(served, shape),
            )
        )
    crossover = next((p.batch_size for p in points if p.speedup <= 1.0), None)
    return BatchSweep(alpha=alpha, k=k, points=points, crossover_batch=crossover)


#: Chart grids of the Performance page: α in steps of 0.05, batch sizes in powers of two.
REPORT_ALPHAS = tuple(i / 20 for i in range(21))
REPORT_BATCHES = tuple(2**i for i in range(11))


class SpeedReport(BaseModel):
    """Everything the Performance page shows, from one core call."""

    estimate: SpeedEstimate
    grid: SpeedGrid
    sweep: BatchSweep
    #: Why the workload cannot run on the deployment (then the estimate carries no speed verdict), and fixes.
    runnable: Runnability = Runnability()


def speed_report(
    deployment: Deployment,
    workload: SpeedWorkload,
    alphas: Sequence[float] = REPORT_ALPHAS,
    batch_sizes: Sequence[int] = REPORT_BATCHES,
) -> SpeedReport:
    """The estimate, the α × K grid (K over the search range) and the batch sweep in one call.

    >>> from planner.catalog.lookup import get_model, get_node
    >>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8,
    ...                          draft=get_model("Llama-3.2-1B"))
    >>> report = speed_report(dep, SpeedWorkload.build(alpha=0.8))
    >>> len(report.grid.ks), report.sweep.crossover_batch is not None
    (16, True)
    """
    ks = list(speculation_rules().k_search.ks)
    check = runnable(deployment, workload)
    return SpeedReport(
        estimate=gate_verdict(estimate_speed(deployment, workload), check),
        runnable=check,
        grid=speedup_grid(deployment, workload, alphas, ks),
        sweep=batch_sweep(deployment, workload, batch_sizes),
    )
