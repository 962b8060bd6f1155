"""What a serving run receives: request lengths (fixed or ShareGPT-like) and how requests arrive.

Arrivals are Poisson at a rate (open loop), a fixed number in flight (closed loop: a new request as
soon as one finishes) or offline (every request at time 0). ShareGPT-like lengths are lognormal
with the means and spreads in ``data/serving_workloads.json`` (each with its source), clipped to the
limits vLLM's ShareGPT sampler applies (prompt ≤ 1,024 and prompt + output ≤ 2,048 tokens).

>>> w = ServingWorkload.build(request_rate=4.0, dataset="sharegpt", num_prompts=500, seed=0)
>>> prompts, outputs = w.lengths()
>>> len(prompts), 150 < sum(prompts) / 500 < 260, max(p + o for p, o in zip(prompts, outputs)) <= 2048
(500, True, True)
"""

from __future__ import annotations

import math
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.facts import data_cache, read_data_file
from planner.input_types import Count, RequestCount, RequestRate, Seed

WORKLOADS_FILE = "serving_workloads.json"


class LengthDistribution(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mean_tokens: float = Field(gt=0)
    log_sigma: float = Field(ge=0)
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


def _lognormal(rng: random.Random, dist: LengthDistribution, cap: int) -> int:
    mu = math.log(dist.mean_tokens) - dist.log_sigma**2 / 2
    value = round(rng.lognormvariate(mu, dist.log_sigma))
    return max(dist.min_tokens, min(value, dist.max_tokens, cap))


class ServingWorkload(BaseModel):
    """Requests and their arrival: exactly one of ``request_rate``, ``concurrency`` or ``offline``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_rate: RequestRate | None = None
    concurrency: RequestCount | None = None
    offline: bool = False
    dataset: Literal["fixed", "sharegpt"] = "fixed"
    prompt_tokens: Count | None = None
    output_tokens: Count | None = None
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
        if self.dataset == "fixed" and self.prompt_tokens is None:
            object.__setattr__(self, "prompt_tokens", 1024)
        if self.dataset == "fixed" and self.output_tokens is None:
            object.__setattr__(self, "output_tokens", 256)
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
        spec = datasets()[self.dataset]
        rng = random.Random(self.seed)
        prompts, outputs = [], []
        for _ in range(n):
            prompt = self.prompt_tokens or _lognormal(rng, spec.prompt, spec.max_total_tokens - 1)
            output = self.output_tokens or _lognormal(rng, spec.output, spec.max_total_tokens - prompt)
            prompts.append(prompt)
            outputs.append(output)
        return prompts, outputs

    def arrivals(self) -> list[float]:
        """Arrival times (seconds) for the open-loop and offline modes; closed loop arrives on completion."""
        if self.request_rate is None:
            return [0.0] * self.num_prompts
        rng = random.Random(self.seed + 1)
        t, times = 0.0, []
        for _ in range(self.num_prompts):
            t += rng.expovariate(self.request_rate)
            times.append(t)
        return times

    def describe(self) -> str:
        lengths = (
            f"{self.prompt_tokens} + {self.output_tokens} tokens"
            if self.dataset == "fixed"
            else f"ShareGPT-like lengths ({datasets()['sharegpt'].description})"
        )
        if self.mode == "rate":
            arrival = f"Poisson arrivals at {self.request_rate:g} req/s"
        elif self.mode == "concurrency":
            arrival = f"{self.concurrency} requests in flight (closed loop)"
        else:
            arrival = "every request at once (offline)"
        return f"{self.num_prompts} requests of {lengths}, {arrival}"
