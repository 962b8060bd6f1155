"""Device memory totals as software sees them, and other per-GPU facts derived from the catalog.

Engines budget against the total CUDA reports (``torch.cuda.mem_get_info()[1]``), which is less
than the marketed size. Where no log gives it, it is estimated from the catalog itself: the GPU's
nvidia-smi total minus the median nvidia-smi-to-CUDA gap of GPUs that have both, else marketed
GB times the median reported/marketed ratio of HBM parts (see data/gpus.json ``estimation``).

>>> from planner.catalog.lookup import get_gpu
>>> total = device_total_bytes(get_gpu("h100-sxm-80gb"))
>>> round(total.bytes / 2**30, 2), total.estimated
(79.19, False)
"""

from __future__ import annotations

from functools import lru_cache
from statistics import median

from pydantic import BaseModel

from planner.catalog.lookup import list_gpus
from planner.catalog.schemas import GpuSpec
from planner.facts import data_cache, register_cache
from planner.units import GIB, MIB


class DeviceTotal(BaseModel):
    bytes: int
    estimated: bool
    how: str


@data_cache
def _smi_gap_gib() -> float:
    gaps = [
        g.nvidia_smi_total_mib * MIB / GIB - g.reported_memory_gib
        for g in list_gpus()
        if g.nvidia_smi_total_mib and g.reported_memory_gib
    ]
    return median(gaps)


@data_cache
def _hbm_reported_frac() -> float:
    fracs = [
        g.reported_memory_gib / g.marketed_memory_gb
        for g in list_gpus()
        if g.reported_memory_gib and g.memory_type.upper().startswith("HBM")
    ]
    return median(fracs)


def device_total_bytes(gpu: GpuSpec) -> DeviceTotal:
    """The memory CUDA reports for ``gpu``: reported where measured, else estimated (kept per GPU's memory facts:
    every memory plan and CUDA-graph rule asks)."""
    return _device_total(
        gpu.reported_memory_gib, gpu.reported_memory_source, gpu.nvidia_smi_total_mib, gpu.marketed_memory_gb
    )


@lru_cache(maxsize=256)
def _device_total(reported_memory_gib, reported_memory_source, nvidia_smi_total_mib, marketed_memory_gb) -> DeviceTotal:
    if reported_memory_gib is not None:
        return DeviceTotal(
            bytes=round(reported_memory_gib * GIB),
            estimated=False,
            how=f"reported: {reported_memory_source}",
        )
    if nvidia_smi_total_mib is not None:
        gap = _smi_gap_gib()
        return DeviceTotal(
            bytes=round(nvidia_smi_total_mib * MIB - gap * GIB),
            estimated=True,
            how=f"estimated: nvidia-smi total {nvidia_smi_total_mib:,} MiB minus the median "
            f"nvidia-smi-to-CUDA gap of {gap:.2f} GiB",
        )
    frac = _hbm_reported_frac()
    return DeviceTotal(
        bytes=round(marketed_memory_gb * frac * GIB),
        estimated=True,
        how=f"estimated: marketed {marketed_memory_gb:g} GB x median reported/marketed ratio {frac:.4f}",
    )


register_cache(_device_total)


def nearest_gpu_by_total(total_bytes: int) -> GpuSpec:
    """The catalog GPU whose reported total is closest: a stand-in when a log names no known device."""
    return min(list_gpus(), key=lambda g: abs(device_total_bytes(g).bytes - total_bytes))
