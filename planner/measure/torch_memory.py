"""PyTorch's own view of GPU memory, and the bytes a transformers KV cache holds.

Each figure is named for what it measures (as vLLM's ``vllm/utils/mem_utils.py`` names its
``torch_peak`` / ``non_torch_memory``, https://github.com/vllm-project/vllm/blob/main/vllm/utils/mem_utils.py).
torch is imported inside the functions, so records (which hold a :class:`TorchMemory`) load without it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

NOTES = {
    "torch_max_allocated_bytes": (
        "torch.cuda.max_memory_allocated: peak bytes of live tensors in PyTorch's caching allocator "
        "(vLLM's torch_peak, allocated_bytes.all.peak); weights + KV + activations, no cached free blocks"
    ),
    "torch_max_reserved_bytes": (
        "torch.cuda.max_memory_reserved: peak bytes the caching allocator held from the driver "
        "(live tensors plus cached free blocks); excludes the CUDA context and non-torch allocations"
    ),
    "nvml_process_peak_bytes": (
        "NVML usedGpuMemory of this process at its peak: torch reserved + CUDA context + cuBLAS/NCCL "
        "workspaces (what nvidia-smi shows for the process)"
    ),
    "non_torch_bytes": (
        "NVML process peak minus torch's peak reserved: CUDA context and workspaces outside PyTorch "
        "(vLLM's non_torch_memory = cuda memory - torch reserved)"
    ),
}


class TorchMemory(BaseModel):
    """Peaks since the last reset, on one CUDA device; ``None`` on CPU."""

    device: str
    torch_max_allocated_bytes: int | None = None
    torch_max_reserved_bytes: int | None = None
    torch_allocated_bytes: int | None = None
    torch_reserved_bytes: int | None = None
    device_total_bytes: int | None = None
    device_free_bytes: int | None = None
    notes: dict[str, str] = {}


def reset_peaks(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def read(device: str) -> TorchMemory:
    """The allocator's peaks and current figures, and the device's free/total (``cudaMemGetInfo``)."""
    if not device.startswith("cuda"):
        return TorchMemory(device=device)
    import torch

    torch.cuda.synchronize(device)
    free, total = torch.cuda.mem_get_info(device)
    return TorchMemory(
        device=device,
        torch_max_allocated_bytes=int(torch.cuda.max_memory_allocated(device)),
        torch_max_reserved_bytes=int(torch.cuda.max_memory_reserved(device)),
        torch_allocated_bytes=int(torch.cuda.memory_allocated(device)),
        torch_reserved_bytes=int(torch.cuda.memory_reserved(device)),
        device_total_bytes=int(total),
        device_free_bytes=int(free),
        notes={k: v for k, v in NOTES.items() if k.startswith("torch_")},
    )


def cache_bytes(cache: Any) -> int:
    """Bytes of the key/value tensors a transformers cache holds now (every layer)."""
    import torch

    total = 0
    for layer in getattr(cache, "layers", ()) or ():
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if isinstance(tensor, torch.Tensor):
                total += tensor.numel() * tensor.element_size()
    return total


def sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(device)
