"""Where a job ran: software versions, the hardware, and the catalog GPU its prediction is made for."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

import torch

from planner.catalog.lookup import get_gpu
from planner.catalog.name_matching import match_gpu
from planner.catalog.schemas import GpuSpec
from planner.measure.nvml_sampler import NvmlResult
from planner.measure.record import HardwareInfo, SoftwareInfo


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def software_info() -> SoftwareInfo:
    return SoftwareInfo(
        python=sys.version.split()[0],
        platform=platform.platform(),
        torch=torch.__version__,
        transformers=_version("transformers"),
        vllm=_version("vllm"),
        pynvml=_version("nvidia-ml-py") or _version("pynvml"),
    )


def hardware_info(device: str, nvml: NvmlResult | None, catalog_gpu: GpuSpec | None) -> HardwareInfo:
    info = HardwareInfo(device=device, cpu=platform.processor() or platform.machine())
    if device.startswith("cuda"):
        info.gpu_name = torch.cuda.get_device_name(device)
        info.gpu_count = torch.cuda.device_count()
        info.cuda_version = torch.version.cuda
        info.gpu_memory_total_bytes = int(torch.cuda.mem_get_info(device)[1])
    if nvml is not None and nvml.available:
        info.driver_version = nvml.driver_version
    info.catalog_gpu = catalog_gpu.id if catalog_gpu else None
    return info


def prediction_gpu(device: str, wanted: str | None) -> GpuSpec | None:
    """``--gpu`` when given; else the catalog GPU matching the CUDA device name; None on CPU."""
    if wanted:
        return get_gpu(wanted)
    if device.startswith("cuda"):
        return match_gpu(torch.cuda.get_device_name(device))
    return None
