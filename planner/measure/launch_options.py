"""A measured job configured by a generated launch command: the vLLM backend runs the command's knobs.

>>> from planner.measure.options import MeasureOptions
>>> cmd = "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 1 --gpu-memory-utilization 0.8 " \\
...       "--max-model-len 4096 --max-num-seqs 32 --max-num-batched-tokens 2048 " \\
...       "--speculative-config '{\\"method\\": \\"draft_model\\", \\"model\\": \\"meta-llama/Llama-3.2-1B\\", " \\
...       "\\"num_speculative_tokens\\": 3}'"
>>> options = with_launch(MeasureOptions(target="/m/t", draft="/m/d"), cmd, source="serve.sh")
>>> options.backend, options.k, options.engine_args["gpu_memory_utilization"], options.engine_args["max_num_seqs"]
('vllm', 3, 0.8, 32)
"""

from __future__ import annotations

from planner.errors import InputError
from planner.launch import read_launch_command
from planner.launch.engine_args import vllm_engine_args
from planner.measure.options import MeasureOptions


def with_launch(options: MeasureOptions, command: str, *, source: str | None = None) -> MeasureOptions:
    """``options`` set by a vLLM launch ``command``: backend vllm, its TP and K, and every engine knob it states."""
    settings = read_launch_command(command)
    if settings.method is None or settings.num_speculative_tokens is None:
        raise InputError("launch", source or "command", "a launch command with speculative decoding (K)")
    return MeasureOptions.model_validate(
        options.model_dump()
        | {
            "backend": "vllm",
            "k": settings.num_speculative_tokens,
            "tensor_parallel_size": settings.tp,
            "engine_args": vllm_engine_args(settings),
            "launch_source": source or "launch command",
        }
    )
