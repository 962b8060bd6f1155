"""Serving against request rate: the curves operators read, from the simulator, with and without the draft.

Rates are fractions of the plain replica's capacity (its saturated steady-state throughput, ``replica_capacity``),
so every sweep spans light load to past saturation. Each point simulates the same requests with and
without the draft (``planner.speed.simulate``); the speedup is the ratio of mean end-to-end latency
(throughput equals the offered rate in both arms until saturation).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), draft=get_model("Llama-3.2-1B"))
>>> sweep = rate_sweep(dep, alpha=0.8, k=3, prompt_tokens=512, output_tokens=128, num_prompts=100)
>>> sweep.points[0].ttft_p99_s["plain"] < sweep.points[-1].ttft_p99_s["plain"]
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from planner.deployment import Deployment
from planner.speed.replica_capacity import replica_capacity
from planner.speed.serving_workload import Dataset, ServingWorkload
from planner.speed.simulate import ServingMetrics, simulate

#: Offered load as fractions of the plain replica's capacity.
LOAD_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.2)


class RatePoint(BaseModel):
    """One offered rate: per arm ("plain", "speculative") throughput, latency and mean batch."""

    request_rate: float
    output_tokens_per_s: dict[str, float]
    ttft_p99_s: dict[str, float]
    tpot_mean_s: dict[str, float]
    e2e_mean_s: dict[str, float]
    mean_batch_size: dict[str, float]
    limited_by: dict[str, str]
    speedup: float | None


class RateSweep(BaseModel):
    capacity_requests_per_s: float
    points: list[RatePoint]
    #: The first swept rate at which speculation no longer pays (speedup ≤ 1), if any.
    crossover_rate: float | None
    #: (time s, running requests) of the highest-rate run, per arm.
    occupancy: dict[str, list[tuple[float, int]]]


def _arms(plain: ServingMetrics, spec: ServingMetrics | None) -> dict[str, ServingMetrics]:
    return {"plain": plain} | ({"speculative": spec} if spec is not None else {})


def rate_sweep(
    dep: Deployment,
    *,
    alpha: float | None,
    k: int | None,
    prompt_tokens: int,
    output_tokens: int,
    fractions: Sequence[float] = LOAD_FRACTIONS,
    num_prompts: int = 300,
    dataset: Dataset = "fixed",
) -> RateSweep:
    """Throughput, p99 TTFT, mean TPOT and batch at each offered rate, with and without the draft; requests of
    ``prompt_tokens`` + ``output_tokens`` each, or drawn from ``dataset`` (its mean lengths, the two ignored)."""
    lengths: dict = {"dataset": dataset, "num_prompts": num_prompts}
    if dataset == "fixed":
        lengths |= {"prompt_tokens": prompt_tokens, "output_tokens": output_tokens}
    capacity = replica_capacity(
        dep.without_draft(), ServingWorkload.build(offline=True, **lengths)
    ).steady_requests_per_s
    points, occupancy = [], {}
    for fraction in fractions:
        rate = fraction * capacity
        result = simulate(dep, ServingWorkload.build(request_rate=rate, **lengths), alpha=alpha, k=k)
        arms = _arms(result.plain, result.speculative)
        points.append(
            RatePoint(
                request_rate=rate,
                output_tokens_per_s={n: m.output_tokens_per_s for n, m in arms.items()},
                ttft_p99_s={n: m.ttft_s.p99 for n, m in arms.items()},
                tpot_mean_s={n: m.tpot_s.mean for n, m in arms.items()},
                e2e_mean_s={n: m.e2e_latency_s.mean for n, m in arms.items()},
                mean_batch_size={n: m.mean_batch_size for n, m in arms.items()},
                limited_by={n: m.limited_by for n, m in arms.items()},
                speedup=result.speedup if result.speculative is not None else None,
            )
        )
        occupancy = {n: m.occupancy for n, m in arms.items()}
    crossover = next((p.request_rate for p in points if p.speedup is not None and p.speedup <= 1.0), None)
    return RateSweep(capacity_requests_per_s=capacity, points=points, crossover_rate=crossover, occupancy=occupancy)
