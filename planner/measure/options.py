"""The inputs of one measured job, as the ``measure`` command's flags give them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.input_types import MAX_COUNT, MAX_SEED
from planner.measure.nvml_sampler import DEFAULT_INTERVAL_S

#: The longest draft run a measured job accepts (K).
MAX_K = 32


class MeasureOptions(BaseModel):
    """The inputs of one measured job (the CLI's flags)."""

    model_config = ConfigDict(extra="forbid")

    target: str
    draft: str
    random_weights: bool = False
    device: str | None = None
    dtype: str | None = None
    draft_dtype: str | None = None
    k: int = Field(default=NUM_SPECULATIVE_TOKENS, ge=1, le=MAX_K)
    prompts: str | None = None
    prompts_per_task: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    max_new_tokens: int = Field(default=64, ge=1, le=8192)
    mode: Literal["greedy", "sampled"] = "greedy"
    temperature: float = Field(default=1.0, gt=0, le=100, allow_inf_nan=False)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    backend: Literal["transformers", "vllm"] = "transformers"
    gpu: str | None = None
    tensor_parallel_size: int | None = Field(default=None, ge=1, le=1024)
    out: str | None = None
    save: bool = True
    sample_interval_s: float = Field(default=DEFAULT_INTERVAL_S, gt=0, le=60, allow_inf_nan=False)
    warmup: bool = True
    #: vLLM backend: the ``vllm.LLM`` arguments of a generated launch command (``planner.launch.engine_args``),
    #: so the run measures exactly the planned configuration; None: the harness's own settings.
    engine_args: dict[str, Any] | None = None
    #: The launch command's file, when ``engine_args`` came from one (recorded in the notes).
    launch_source: str | None = None
