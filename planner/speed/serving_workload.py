"""What a serving run receives: request lengths (fixed, or drawn as a dataset's) and how requests arrive.

Arrivals are Poisson at a rate (open loop), a fixed number in flight (closed loop: a new request as
soon as one finishes) or offline (every request at time 0). A dataset's lengths (``data/serving_workloads.json``,
each fact with its source) are lognormal with a stated mean and spread (ShareGPT-like: clipped to the limits vLLM's
ShareGPT sampler applies, prompt ≤ 1,024 and prompt + output ≤ 2,048 tokens) or requests of a file of measured
lengths (MLPerf's Llama 2 70B set, ``data/request_lengths/``), drawn with replacement; either way scaled so that a
draw's mean lengths are the stated ones.

>>> w = ServingWorkload.build(request_rate=4.0, dataset="sharegpt", num_prompts=500, seed=0)
>>> prompts, outputs = w.lengths()
>>> len(prompts), sum(prompts) / 500, sum(outputs) / 500, max(p + o for p, o in zip(prompts, outputs)) <= 2048
(500, 202.0, 179.0, True)
"""

from __future__ import annotations

import csv
import functools
import math
import random
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.defaults import serving_lengths
from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.facts import data_cache, data_dir, read_data_file, register_cache
from planner.input_types import Count, PositiveReal, RequestCount, RequestRate, Seed

WORKLOADS_FILE = "serving_workloads.json"
#: How request lengths vary: every request alike (``fixed``) or drawn as a dataset's are.
Dataset = Literal["fixed", "sharegpt", "mlperf-openorca"]
#: The name a dataset's lengths are shown by (every dataset but ``fixed``).
DATASET_NAMES = {"sharegpt": "ShareGPT-like lengths", "mlperf-openorca": "MLPerf OpenOrca lengths"}
#: The datasets a workload may draw its lengths from, as a command line lists them.
DRAWN_DATASETS = tuple(DATASET_NAMES)
#: What each of them is, for a command's help.
DATASETS_HELP = "; ".join(f"{key}: {name}" for key, name in DATASET_NAMES.items()) + " (data/serving_workloads.json)"


class LengthDistribution(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mean_tokens: float = Field(gt=0)
    #: Spread of log length of a lognormal dataset (None where the lengths come from a file).
    log_sigma: float | None = Field(default=None, ge=0)
    min_tokens: int = Field(ge=1)
    max_tokens: int = Field(ge=1)
    source: str = Field(min_length=1)


class DatasetSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    description: str
    prompt: LengthDistribution
    output: LengthDistribution
    max_total_tokens: int = Field(ge=2)
    source: str = Field(min_length=1)
    #: A CSV of measured lengths under the data folder (prompt, then output tokens, one request per row), drawn
    #: instead of a lognormal.
    lengths_file: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> DatasetSpec:
        spreads = [d.log_sigma is not None for d in (self.prompt, self.output)]
        if self.lengths_file is None and not all(spreads):
            raise ValueError(f"dataset {self.id}: a log_sigma for prompt and output, or a lengths_file")
        if self.lengths_file is not None and any(spreads):
            raise ValueError(f"dataset {self.id}: a lengths_file or log_sigma spreads, not both")
        return self


class WorkloadFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    datasets: list[DatasetSpec]


@data_cache
def datasets() -> dict[str, DatasetSpec]:
    """The length distributions a workload can name (``data/serving_workloads.json``)."""
    try:
        parsed = WorkloadFile.model_validate(read_data_file(WORKLOADS_FILE))
    except ValidationError as exc:
        raise CatalogError(f"{WORKLOADS_FILE}: {first_pydantic_error(exc)}") from exc
    return {d.id: d for d in parsed.datasets}


@data_cache
def measured_lengths(dataset: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The prompt and output tokens of every request in ``dataset``'s lengths file (a CSV with a header row)."""
    name = datasets()[dataset].lengths_file
    assert name is not None, f"{dataset} is a lognormal dataset"
    path = data_dir() / name
    try:
        rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))[1:]
        pairs = [(int(prompt), int(output)) for prompt, output in rows]
    except FileNotFoundError as exc:
        raise CatalogError(f"{WORKLOADS_FILE}: the lengths file {path} of {dataset} is missing") from exc
    except ValueError as exc:
        raise CatalogError(f"{path}: two whole token counts per row ({exc})") from exc
    if not pairs or min(min(pair) for pair in pairs) < 1:
        raise CatalogError(f"{path}: at least one request, every length >= 1 token")
    return tuple(p for p, _ in pairs), tuple(o for _, o in pairs)


def _log_mean(dist: LengthDistribution) -> float:
    """μ of the lognormal whose mean is ``dist``'s: ``ln(mean) − σ²/2``."""
    return math.log(dist.mean_tokens) - dist.log_sigma**2 / 2  # type: ignore[operator]


def _log_draw(rng: random.Random, dist: LengthDistribution) -> float:
    return rng.lognormvariate(_log_mean(dist), dist.log_sigma)  # type: ignore[arg-type]


def _scaled(raw: list[float], c: float, low: int, caps: list[int]) -> list[int]:
    return [max(low, min(round(c * x), cap)) for x, cap in zip(raw, caps, strict=True)]


def matched_lengths(raw: list[float], mean_tokens: float, low: int, caps: list[int]) -> list[int]:
    """Lengths from lognormal draws ``raw``, scaled by the one factor that gives them the stated mean once rounded
    and clipped to ``low`` and each request's cap.

    Clipping alone would pull the mean below the one stated (a ShareGPT-like draw of 500 prompts would average
    189 tokens, not the 202 its source states), and a sample of a few hundred requests strays a few percent from
    its distribution's mean; the published runs state their sample's means, so a draw keeps them. The factor is
    found by bisection (the clipped mean rises with it); where the caps cannot reach the mean, every length sits
    at its cap.

    >>> matched_lengths([1.0, 2.0, 9.0], 4.0, 1, [5, 5, 5])
    [2, 5, 5]
    >>> matched_lengths([1.0, 2.0, 3.0], 2.0, 1, [10, 10, 10])
    [1, 2, 3]
    """
    target = mean_tokens * len(raw)
    exact = math.ceil(target - 1e-9)
    low_c, high_c = 0.0, max(1.0, target / max(sum(raw), 1e-12))
    while sum(_scaled(raw, high_c, low, caps)) < target and high_c < 1e6:
        low_c, high_c = high_c, 2 * high_c
    for _ in range(32):
        mid = (low_c + high_c) / 2
        total = sum(_scaled(raw, mid, low, caps))
        if total < target:
            low_c = mid
        else:
            high_c = mid
            if total == exact:  # the least whole total at or above the target: no closer factor exists
                break
    return _scaled(raw, high_c, low, caps)


#: Equal-probability points a dataset's prompt lengths are priced at by the static estimate.
LENGTH_POINTS = 8
#: Quantiles per point the points are averaged from.
_QUANTILES_PER_POINT = 64


@functools.lru_cache(maxsize=32)
def prompt_length_points(dataset: str, mean_tokens: int, points: int = LENGTH_POINTS) -> tuple[float, ...]:
    """``dataset``'s prompt lengths around a mean of ``mean_tokens``, as ``points`` equally likely lengths (each the
    mean of one equal-probability slice): its spread (lognormal, or its lengths file's quantiles), clipped to its
    limits and scaled to the mean as a draw of its requests is (:func:`matched_lengths`), so that a cost convex in
    the length is averaged over the lengths a run meets rather than taken at their mean.

    >>> pts = prompt_length_points("sharegpt", 202)
    >>> len(pts), round(sum(pts) / len(pts)), pts[0] < 40, pts[-1] > 600
    (8, 202, True, True)
    """
    measured_file, spec = datasets()[dataset].lengths_file, datasets()[dataset].prompt
    count = points * _QUANTILES_PER_POINT
    if measured_file is not None:
        measured = sorted(measured_lengths(dataset)[0])
        raw = [float(measured[min(len(measured) - 1, int((i + 0.5) * len(measured) / count))]) for i in range(count)]
    else:
        normal, mu = NormalDist(), _log_mean(spec)
        raw = [math.exp(mu + spec.log_sigma * normal.inv_cdf((i + 0.5) / count)) for i in range(count)]  # type: ignore[operator]
    lengths = matched_lengths(raw, mean_tokens, spec.min_tokens, [longest_prompt_tokens(dataset)] * count)
    return tuple(
        sum(lengths[i : i + _QUANTILES_PER_POINT]) / _QUANTILES_PER_POINT for i in range(0, count, _QUANTILES_PER_POINT)
    )


def longest_prompt_tokens(dataset: str) -> int:
    """The longest prompt ``dataset`` draws (its limit)."""
    spec = datasets()[dataset]
    return min(spec.prompt.max_tokens, spec.max_total_tokens - 1)


@functools.lru_cache(maxsize=64)
def _unit_gaps(n: int, seed: int) -> tuple[float, ...]:
    """``n`` gaps between Poisson arrivals at one request per second, from ``seed``: ``random.expovariate``'s
    ``−ln(1 − U)``, so a gap at rate λ is one of these over λ, the same float ``expovariate(λ)`` gives. Kept: a
    capacity search runs one draw at many rates.

    >>> rng = random.Random(7)
    >>> [rng.expovariate(2.5) for _ in range(3)] == [gap / 2.5 for gap in _unit_gaps(3, 7)]
    True
    """
    rng = random.Random(seed)
    return tuple(-math.log(1.0 - rng.random()) for _ in range(n))


@functools.lru_cache(maxsize=64)
def _drawn(
    dataset: str,
    n: int,
    seed: int,
    prompt_tokens: int | None,
    output_tokens: int | None,
    output_mean_tokens: float | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``n`` requests of ``dataset``: lognormal lengths (prompt, then output, request by request from ``seed``) or
    requests of its lengths file (drawn with replacement from ``seed``), each list scaled to its stated mean within
    the dataset's limits (:func:`matched_lengths`), the outputs to ``output_mean_tokens`` where given; a length the
    workload fixes stays fixed."""
    spec = datasets()[dataset]
    rng = random.Random(seed)
    if spec.lengths_file is not None:
        prompts_file, outputs_file = measured_lengths(dataset)
        rows = [rng.randrange(len(prompts_file)) for _ in range(n)]
        raw = [(float(prompts_file[i]), float(outputs_file[i])) for i in rows]
    else:
        raw = [(_log_draw(rng, spec.prompt), _log_draw(rng, spec.output)) for _ in range(n)]
    prompt_cap = longest_prompt_tokens(dataset)
    prompts = (
        [prompt_tokens] * n
        if prompt_tokens
        else matched_lengths([p for p, _ in raw], spec.prompt.mean_tokens, spec.prompt.min_tokens, [prompt_cap] * n)
    )
    caps = [min(spec.output.max_tokens, spec.max_total_tokens - p) for p in prompts]
    outputs = (
        [output_tokens] * n
        if output_tokens
        else matched_lengths(
            [o for _, o in raw], output_mean_tokens or spec.output.mean_tokens, spec.output.min_tokens, caps
        )
    )
    return tuple(prompts), tuple(outputs)


register_cache(_drawn)  # these read the dataset definitions of data/serving_workloads.json and its lengths files
register_cache(prompt_length_points)


class ServingWorkload(BaseModel):
    """Requests and their arrival: exactly one of ``request_rate``, ``concurrency`` or ``offline``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_rate: RequestRate | None = None
    concurrency: RequestCount | None = None
    offline: bool = False
    dataset: Dataset = "fixed"
    prompt_tokens: Count | None = None
    output_tokens: Count | None = None
    #: A drawn dataset's output lengths scaled to this mean instead of the dataset's stated one: a run that states
    #: its own (MLPerf's logs give the tokens per sample its model generated on the set).
    output_mean_tokens: PositiveReal | None = None
    num_prompts: RequestCount = 1000
    seed: Seed = 0

    @classmethod
    def build(cls, **fields) -> ServingWorkload:
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @model_validator(mode="after")
    def _check(self) -> ServingWorkload:
        modes = [self.request_rate is not None, self.concurrency is not None, self.offline]
        if sum(modes) != 1:
            raise InputError("arrivals", None, "exactly one of request_rate, concurrency or offline")
        if self.request_rate is not None and (isinstance(self.request_rate, bool) or not self.request_rate > 0):
            raise InputError("request_rate", self.request_rate, "a rate > 0 requests per second")
        if self.request_rate is not None and not math.isfinite(self.request_rate):
            raise InputError("request_rate", self.request_rate, "a finite rate > 0 requests per second")
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError("concurrency", self.concurrency, "an integer >= 1 requests in flight")
        for name in ("prompt_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InputError(name, value, "an integer >= 1")
        if self.output_mean_tokens is not None and (self.dataset == "fixed" or self.output_tokens is not None):
            raise InputError(
                "output_mean_tokens",
                self.output_mean_tokens,
                "a mean for a drawn dataset's output lengths (one of " + ", ".join(DRAWN_DATASETS) + ") whose "
                "output_tokens are not fixed",
            )
        prompt_tokens, output_tokens = serving_lengths(self.dataset, self.prompt_tokens, self.output_tokens)
        object.__setattr__(self, "prompt_tokens", prompt_tokens)  # a fleet's default request, as every view's
        object.__setattr__(self, "output_tokens", output_tokens)
        return self

    @property
    def mode(self) -> str:
        if self.request_rate is not None:
            return "rate"
        return "concurrency" if self.concurrency is not None else "offline"

    def lengths(self) -> tuple[list[int], list[int]]:
        """Prompt and output tokens of every request (reproducible from ``seed``)."""
        n = self.num_prompts
        if self.dataset == "fixed":
            return [int(self.prompt_tokens)] * n, [int(self.output_tokens)] * n  # type: ignore[arg-type]
        prompts, outputs = _drawn(
            self.dataset, n, self.seed, self.prompt_tokens, self.output_tokens, self.output_mean_tokens
        )
        return list(prompts), list(outputs)

    def arrivals(self) -> list[float]:
        """Arrival times (seconds) for the open-loop and offline modes; closed loop arrives on completion."""
        if self.request_rate is None:
            return [0.0] * self.num_prompts
        rate = self.request_rate
        t, times = 0.0, []
        for gap in _unit_gaps(self.num_prompts, self.seed + 1):
            t += gap / rate
            times.append(t)
        return times

    def describe(self) -> str:
        lengths = (
            f"{self.prompt_tokens} + {self.output_tokens} tokens"
            if self.dataset == "fixed"
            else f"{DATASET_NAMES[self.dataset]} ({datasets()[self.dataset].description})"
        )
        if self.output_mean_tokens is not None:
            lengths += f", outputs scaled to a mean of {self.output_mean_tokens:g} tokens"
        if self.mode == "rate":
            arrival = f"Poisson arrivals at {self.request_rate:g} req/s"
        elif self.mode == "concurrency":
            arrival = f"{self.concurrency} requests in flight (closed loop)"
        else:
            arrival = "every request at once (offline)"
        return f"{self.num_prompts} requests of {lengths}, {arrival}"
