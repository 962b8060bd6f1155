"""A vLLM launch as ``vllm.LLM`` keyword arguments, so a measured run starts exactly what the command starts.

The names are vLLM's ``EngineArgs`` fields (the flags without dashes); the values are the launch settings, mapped
through the same recorded tables as the command.

>>> from planner.launch.settings import LaunchSettings
>>> s = LaunchSettings(engine="vllm", release="0.19.0", target="org/t", speculator="org/d", method="draft_model",
...                    draft_tp=1, num_speculative_tokens=4, tp=2, pp=1, kv_dtype="fp8", memory_fraction=0.85,
...                    max_model_len=4096, max_num_seqs=64, max_num_batched_tokens=8192)
>>> args = vllm_engine_args(s)
>>> args["gpu_memory_utilization"], args["kv_cache_dtype"], args["speculative_config"]["num_speculative_tokens"]
(0.85, 'fp8', 4)
"""

from __future__ import annotations

from typing import Any

from planner.errors import InputError
from planner.launch.releases import release_for
from planner.launch.settings import LaunchSettings

#: The flags whose EngineArgs fields the arguments set: a command of another engine has other flags.
_ENGINE_ARG_FLAGS = ("--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len")


def vllm_engine_args(settings: LaunchSettings) -> dict[str, Any]:
    """``vllm.LLM(**args)`` for a vLLM launch (the model path is the caller's: a local folder)."""
    flags, release, _ = release_for(settings.engine, settings.release)
    if not all(release.knows(option) for option in _ENGINE_ARG_FLAGS):
        raise InputError("launch command", settings.engine, "a vLLM launch command (vllm serve ...)")
    args: dict[str, Any] = {
        "tensor_parallel_size": settings.tp,
        "pipeline_parallel_size": settings.pp,
        "gpu_memory_utilization": settings.memory_fraction,
        "max_model_len": settings.max_model_len,
        "max_num_seqs": settings.max_num_seqs,
        "max_num_batched_tokens": settings.max_num_batched_tokens,
        "kv_cache_dtype": flags.kv_dtypes[settings.kv_dtype],
        "enforce_eager": settings.enforce_eager,
    }
    if settings.dtype is not None:
        option, value = flags.weight_formats[settings.dtype]  # type: ignore[misc]
        args[option.removeprefix("--")] = value
    if settings.method is not None:
        names = flags.methods[settings.method]
        accepted = release.speculative_config_methods
        method = next((n for n in names if accepted is None or n in accepted), names[-1])
        spec: dict[str, Any] = {"method": method, "num_speculative_tokens": settings.num_speculative_tokens}
        if settings.speculator:
            spec["model"] = settings.speculator
        if settings.draft_tp is not None:
            spec["draft_tensor_parallel_size"] = settings.draft_tp
        args["speculative_config"] = spec
    return args
