"""The launch command that produced a start-up log: its flags set the deployment the log is checked against.

A log states only some of the knobs; the command states them all (``planner.launch.read_launch_command`` parses
it with the release's recorded flags). Values the command sets replace what the log reader found; the log still
gives the GPU, its memory and the release.

>>> fields = {"tp": 1, "max_num_seqs": None}
>>> notes = []
>>> cmd = "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --gpu-memory-utilization 0.8 " \\
...       "--max-model-len 4096 --max-num-seqs 32 --max-num-batched-tokens 2048"
>>> fields = apply_launch_command(fields, cmd, "0.19.0", "vllm", notes)
>>> fields["tp"], fields["max_num_seqs"], fields["memory_fraction"], fields["target"].id
(2, 32, 0.8, 'meta-llama/Llama-3.1-8B')
"""

from __future__ import annotations

from typing import Any

from planner.catalog.lookup import get_model
from planner.launch import read_launch_command


def apply_launch_command(
    fields: dict[str, Any],
    command: str,
    log_version: str | None,
    log_engine: str | None,
    notes: list[str],
    *,
    options_file: str | None = None,
) -> dict[str, Any]:
    """``fields`` (Deployment fields from the log) with every value the launch ``command`` sets."""
    settings = read_launch_command(command, options_file=options_file, engine_version=log_version)
    family = {"vllm-v0": "vllm"}
    if log_engine and family.get(log_engine, log_engine) != family.get(settings.engine, settings.engine):
        notes.append(f"the launch command starts {settings.engine} but the log is from {log_engine}")
    draft = get_model(settings.speculator) if settings.speculator else None
    changed = {
        "target": get_model(settings.target),
        "draft": draft,
        "method": settings.method if draft is None else None,
        "tp": settings.tp,
        "pp": settings.pp,
        "gpu_count": settings.tp * settings.pp,
        "draft_tp": settings.draft_tp,
        "kv_dtype": settings.kv_dtype,
        "memory_fraction": settings.memory_fraction,
        "max_model_len": settings.max_model_len,
        "max_num_seqs": settings.max_num_seqs,
        "max_num_batched_tokens": settings.max_num_batched_tokens,
        "enforce_eager": settings.enforce_eager,
    }
    if settings.dtype is not None:
        changed["dtype"] = settings.dtype
    if settings.num_speculative_tokens:
        changed["num_speculative_tokens"] = settings.num_speculative_tokens
    notes.append(
        f"deployment from the launch command ({settings.engine} {settings.release} flags): "
        f"{settings.target}{' + ' + settings.speculator if settings.speculator else ''}, TP {settings.tp}, "
        f"PP {settings.pp}, memory fraction {settings.memory_fraction}, max_model_len {settings.max_model_len}, "
        f"max_num_seqs {settings.max_num_seqs}"
    )
    return {**fields, **changed}
