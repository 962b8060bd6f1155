"""The inputs of one measured job, as the ``measure`` command's flags give them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.measure.nvml_sampler import DEFAULT_INTERVAL_S


class MeasureOptions(BaseModel):
    """The inputs of one measured job (the CLI's flags)."""

    model_config = ConfigDict(extra="forbid")

    target: str
    draft: str
    random_weights: bool = False
    device: str | None = None
    dtype: str | None = None
    draft_dtype: str | None = None
    k: int = Field(default=NUM_SPECULATIVE_TOKENS, ge=1, le=32)
    prompts: str | None = None
    prompts_per_task: int | None = Field(default=None, ge=1)
    max_new_tokens: int = Field(default=64, ge=1, le=8192)
    mode: Literal["greedy", "sampled"] = "greedy"
    temperature: float = Field(default=1.0, gt=0)
    seed: int = 0
    backend: Literal["transformers", "vllm"] = "transformers"
    gpu: str | None = None
    tensor_parallel_size: int | None = Field(default=None, ge=1)
    out: str | None = None
    save: bool = True
    sample_interval_s: float = Field(default=DEFAULT_INTERVAL_S, gt=0)
    warmup: bool = True
