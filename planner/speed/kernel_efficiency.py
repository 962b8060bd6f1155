"""What fraction of a GPU's dense peak its GEMMs and its prefill attention reach, per precision, for the roofline.

The roofline prices a compute-bound GEMM at ``flops_frac · N / (N + N½)`` of the dense peak of the weights' GEMM
precision, and prefill attention at a fraction of the peak of attention's own precision
(:mod:`planner.speed.step_model`). One vendor-wide figure each overstates the low precisions. In aiconfigurator-core's
measured tables the large GEMMs (``m``, ``n`` and ``k`` all at least 4,096) of an H100 reach a median 0.79 of the BF16
peak but 0.54 of the FP8 peak, a B200's NVFP4 GEMMs 0.44 of the FP4 peak; prefill attention over prompts of 4,096
tokens or more reaches 0.59 of an H100's BF16 peak over a 16-bit KV cache but 0.34 of its FP8 peak over an 8-bit one.
``data/kernel_efficiency.json`` records those medians per GPU and precision (over the engines' tables and, for
attention, over the head splits measured) and, for GPUs the tables do not cover, per vendor and precision (the median
over the covered GPUs), as ``python -m bench.fit_kernel_efficiency`` derives them. They hold wherever the roofline
prices a kernel: a GPU or engine without tables, a shape past them, or aiconfigurator-core not installed (the figures
are data, not the package).

Which figure (:func:`gemm_flops_frac`, :func:`attention_flops_frac`): a value set on the profile for a what-if
(``with_values``), else the GPU's own, else its vendor's, else the profile's (``flops_frac``,
``attention_flops_frac``: vendors without measured tables). FP16 runs on the same tensor cores at the BF16 rate and
takes its figure.

>>> from planner.catalog.lookup import get_gpu
>>> from planner.speed.profiles import speed_profile
>>> nvidia = speed_profile("vllm", "nvidia")
>>> frac, source = gemm_flops_frac(get_gpu("b200-180gb"), "fp4", nvidia)
>>> 0.3 < frac < 0.6, source.startswith("measured large GEMMs on this GPU")
(True, True)
>>> gemm_flops_frac(get_gpu("b200-180gb"), "fp4", nvidia.with_values(flops_frac=1.0))[0]
1.0
>>> h100 = get_gpu("h100-sxm-80gb")
>>> attention_flops_frac(h100, "fp8", nvidia)[0] < attention_flops_frac(h100, "bf16", nvidia)[0]
True
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.catalog.schemas import GpuSpec
from planner.facts import data_cache, load_model
from planner.speed.profiles import SpeedProfile

KERNEL_EFFICIENCY_FILE = "kernel_efficiency.json"

#: Our compute dtypes (:func:`planner.speed.roofline.compute_dtype`, :func:`~planner.speed.roofline.attention_dtype`)
#: → the data file's precisions.
PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "fp4": "fp4"}


class Fractions(BaseModel):
    """One kernel family's measured fractions of the dense peak."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Which measured shapes, and how they are summarised.
    shapes: str
    #: GPU id → precision → median fraction of the dense peak over the measured shapes.
    gpus: dict[str, dict[str, float]]
    #: Vendor → precision → the median of its covered GPUs' figures (for its GPUs without tables).
    vendors: dict[str, dict[str, float]]

    def model_post_init(self, _context: object) -> None:
        for where, table in (("gpus", self.gpus), ("vendors", self.vendors)):
            for key, fractions in table.items():
                for precision, value in fractions.items():
                    if precision not in PRECISIONS.values() or not 0 < value <= 1:
                        raise ValueError(
                            f"{where}.{key}.{precision}: a precision of {sorted(set(PRECISIONS.values()))} "
                            f"with a fraction in (0, 1], got {value!r}"
                        )

    def lookup(self, gpu: GpuSpec, dtype: str, kernels: str, source: str) -> tuple[float, str] | None:
        """(the GPU's own figure at ``dtype``, else its vendor's, with where it comes from), or None."""
        precision = PRECISIONS.get(dtype, "")
        own = self.gpus.get(gpu.id, {}).get(precision)
        if own is not None:
            return own, f"measured {kernels} on this GPU at {precision} ({source})"
        vendor = self.vendors.get(gpu.vendor, {}).get(precision)
        if vendor is not None:
            return vendor, f"measured {kernels} at {precision}, median of {gpu.vendor}'s covered GPUs ({source})"
        return None


class KernelEfficiencyFile(BaseModel):
    """``data/kernel_efficiency.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    source: str
    gemm: Fractions
    attention: Fractions


@data_cache
def kernel_efficiency() -> KernelEfficiencyFile:
    """The data file, validated (a bad file is a CatalogError naming it and the field)."""
    return load_model(KERNEL_EFFICIENCY_FILE, KernelEfficiencyFile)


def _fraction(
    family: str, name: str, kernels: str, gpu: GpuSpec, dtype: str, profile: SpeedProfile
) -> tuple[float, str]:
    if profile.sources.get(name) == "override":
        return getattr(profile, name), "set on the speed profile"
    data = kernel_efficiency()
    found = getattr(data, family).lookup(gpu, dtype, kernels, data.source)
    return found if found is not None else (getattr(profile, name), profile.sources.get(name, "speed profile"))


def gemm_flops_frac(gpu: GpuSpec, compute_dtype: str, profile: SpeedProfile) -> tuple[float, str]:
    """(fraction of the dense peak the roofline's large GEMMs reach, where it comes from) for ``gpu`` at
    ``compute_dtype`` under ``profile`` (the order of the module docstring)."""
    return _fraction("gemm", "flops_frac", "large GEMMs", gpu, compute_dtype, profile)


def attention_flops_frac(gpu: GpuSpec, attention_dtype: str, profile: SpeedProfile) -> tuple[float, str]:
    """(fraction of the dense peak of attention's precision that the roofline's prefill attention reaches, where it
    comes from) for ``gpu`` at ``attention_dtype`` under ``profile``."""
    return _fraction("attention", "attention_flops_frac", "prefill attention", gpu, attention_dtype, profile)
